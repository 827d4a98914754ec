// Conventions in JS (FORMATS §3, §4): the committed fixtures of tests/data/conventions (written by
// ws-make-samples, not by this library) decode to the logical weights the CLI writes
// (`weightstream dequant FILE --tensor NAME`), bit for bit, in f32 and f16, read by range and
// streamed in 7-byte pieces; malformed variants are rejected with the CLI's code, offset and
// tensor. A few values are also checked against formulas computed here, so the comparison does not
// rest on the CLI alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ws, repo, streamOf, safetensors } from './helpers.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
const noCli = existsSync(cli) ? false : `the CLI is not built (${cli})`;
const fixtures = join(repo, 'tests', 'data', 'conventions');
const tmp = mkdtempSync(join(tmpdir(), 'ws-conventions-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

// createReader's output, one byte array per tensor, in the order the tensors ended.
async function decodeAll(source, options) {
  const out = new Map();
  let cur = null;
  for await (const ev of ws.createReader(options).read(source)) {
    if (ev.type === 'tensorBegin') cur = { t: ev.tensor, bytes: new Uint8Array(ev.tensor.byteLength) };
    else if (ev.type === 'tensorData') cur.bytes.set(ev.data, ev.offset);
    else if (ev.type === 'tensorEnd') out.set(ev.tensor.name, cur);
  }
  return out;
}

// The CLI's values of one logical weight (or tensor).
function cliValues(file, name, to) {
  const out = join(tmp, 'out.bin');
  execFileSync(cli, ['dequant', file, '--tensor', name, '--to', to, '-o', out, '--no-progress'], { stdio: 'pipe' });
  return new Uint8Array(readFileSync(out));
}

// The CLI's verdict on a file when asked for logical weight `name`: {code, offset, tensor} or null.
function cliError(file, name) {
  const r = spawnSync(cli, ['dequant', file, '--tensor', name, '-o', join(tmp, 'x.bin'), '--json', '--no-progress'], { encoding: 'utf8' });
  return JSON.parse(r.stdout).error;
}

const ollamaBlobs = readdirSync(join(fixtures, 'ollama', 'blobs')).map((f) => join(fixtures, 'ollama', 'blobs', f));

const OLLAMA_WEIGHTS = {
  'a.weight': ['MlxAffine', [2, 64]], 'b.weight': ['MlxMxfp8', [2, 64]], 'c.weight': ['MlxNvfp4', [2, 64]],
  'model.layers.0.mlp.experts.down_proj.weight': ['MlxAffine', [2, 2, 64]],
  'model.layers.0.mlp.experts.up_proj.weight': ['MlxMxfp4', [2, 2, 64]],
};

test('Ollama blobs: the logical weights (scales, biases and global scales are companions, not outputs)', async () => {
  const got = {};
  for (const blob of ollamaBlobs) {
    for (const [name, { t }] of await decodeAll(blob, { dtype: 'f32' })) got[name] = [t.quant?.format ?? null, t.shape];
  }
  assert.deepEqual(got, {
    ...Object.fromEntries(Object.entries(OLLAMA_WEIGHTS)),
    'lin.bias': [null, [2]], 'norm.weight': [null, [4]],
  });
});

test('Ollama blobs: every output equals the CLI bit for bit (f32 and f16; by range and in 7-byte pieces)', { skip: noCli }, async () => {
  let compared = 0;
  for (const blob of ollamaBlobs) {
    const bytes = new Uint8Array(readFileSync(blob));
    for (const to of ['f32', 'f16']) {
      const runs = [await decodeAll(blob, { dtype: to }), await decodeAll(streamOf(bytes, 7), { dtype: to }),
        await decodeAll(streamOf(bytes, 4096), { dtype: to, kernel: 'reference' })];
      for (const [name, { bytes: mine }] of runs[0]) {
        const want = cliValues(blob, name, to);
        for (const run of runs) assert.deepEqual(run.get(name).bytes, want, `${name} as ${to}`);
        compared++;
      }
    }
  }
  assert.equal(compared, 2 * 7);
});

// FP4 E2M1 and E4M3 (MLX decode) as FORMATS §2 gives them.
const FP4 = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
const fp4 = (n) => (n & 8 ? -1 : 1) * FP4[n & 7];
function e4m3(b) {
  const s = b & 0x80 ? -1 : 1, e = (b >> 3) & 15, m = b & 7;
  return s * (e === 0 ? (m / 8) * 2 ** -6 : (1 + m / 8) * 2 ** (e - 7));
}

test('Ollama nvfp4 with a global scale and int4 affine equal formulas computed here', async () => {
  const blob = ollamaBlobs.find((b) => readFileSync(b).includes('c.weight.global_scale'));
  const bytes = new Uint8Array(readFileSync(blob));
  const h = await ws.inspect(blob);
  const at = (n) => h.tensors.find((t) => t.name === n);
  const data = (n) => bytes.subarray(at(n).offset, at(n).offset + at(n).byteLength);
  const out = await decodeAll(streamOf(bytes, 5), { dtype: 'f32' });
  // c.weight: nvfp4 groups of 16, E4M3 scales, times the F32 global scale (Ollama multiplies).
  const packed = data('c.weight'), scales = data('c.weight.scale');
  const global = new DataView(data('c.weight.global_scale').buffer, at('c.weight.global_scale').offset, 4).getFloat32(0, true);
  const c = new Float32Array(out.get('c.weight').bytes.buffer);
  for (let i = 0; i < 128; i++) {
    const nib = (packed[i >> 1] >> ((i & 1) * 4)) & 15;
    assert.equal(c[i], Math.fround(Math.fround(fp4(nib) * e4m3(scales[i >> 4])) * global), `c.weight[${i}]`);
  }
  // a.weight: int4 affine, groups of 32 (the blob's explicit group_size), BF16 scale and bias.
  const bf16 = (u8, i) => new Float32Array(new Uint32Array([(u8[2 * i] | (u8[2 * i + 1] << 8)) << 16]).buffer)[0];
  const ap = data('a.weight'), as = data('a.weight.scale'), ab = data('a.weight.bias');
  const a = new Float32Array(out.get('a.weight').bytes.buffer);
  for (let i = 0; i < 128; i++) {
    const q = (ap[i >> 1] >> ((i & 1) * 4)) & 15;
    assert.equal(a[i], Math.fround(bf16(as, i >> 5) * q + bf16(ab, i >> 5)), `a.weight[${i}]`);
  }
});

// A one-weight Ollama blob: w [1, 8] U32 (64 int4 values), its BF16 scale and bias [1, 1 or 2].
function ollamaBlob({ meta = { quant_type: 'int4', group_size: '32' }, bias = true, extra = {} } = {}) {
  const t = {
    w: { dtype: 'U32', shape: [1, 8], data: new Uint8Array(32) },
    'w.scale': { dtype: 'BF16', shape: [1, 2], data: new Uint8Array(4) },
  };
  if (bias) t['w.bias'] = { dtype: 'BF16', shape: [1, 2], data: new Uint8Array(4) };
  return safetensors({ ...t, ...extra }, meta);
}

test('malformed Ollama blobs: the library\'s status, offset and tensor (as the CLI reports them)', async () => {
  const cases = [
    ['unknown quant_type', ollamaBlob({ meta: { quant_type: 'int5' } }), 'ConventionUnknownQuantType', 'w'],
    ['no quant_type for this weight (another has one)', ollamaBlob({ meta: { 'other.quant_type': 'int4' } }), 'ConventionUnknownParams', 'w'],
    ['group_size not a number', ollamaBlob({ meta: { quant_type: 'int4', group_size: '3x' } }), 'ConventionUnknownParams', 'w'],
    ['int4 without its bias', ollamaBlob({ bias: false }), 'ConventionMissingCompanion', 'w'],
    ['group 48', ollamaBlob({ meta: { quant_type: 'int4', group_size: '48' } }), 'ConventionBitsNotAllowed', 'w'],
    ['per-tensor mxfp4 with a bias', ollamaBlob({ meta: { 'w.quant_type': 'mxfp4' } }), 'ConventionCompanionShape', 'w'],
    ['a scale without its weight', ollamaBlob({ extra: { 'v.scale': { dtype: 'BF16', shape: [1], data: new Uint8Array(2) } } }), 'ConventionOrphanCompanion', 'v.scale'],
    ['a global scale on int4', ollamaBlob({ extra: { 'w.global_scale': { dtype: 'F32', shape: [], data: new Uint8Array(4) } } }), 'ConventionCompanionShape', 'w'],
  ];
  for (const [what, bytes, code, tensor] of cases) {
    let err = null;
    try { await decodeAll(streamOf(bytes, 7), { dtype: 'f32' }); } catch (e) { err = e; }
    assert.ok(err instanceof ws.WeightstreamError, what);
    assert.equal(err.code, code, what);
    assert.equal(err.tensor, tensor, what);
    assert.ok(err.hint.length > 0, `${what}: a hint`);
    if (!noCli) {
      const file = join(tmp, 'bad.safetensors');
      writeFileSync(file, bytes);
      const c = cliError(file, 'w');
      assert.deepEqual({ code: err.code, offset: err.offset, tensor: err.tensor }, { code: c.code, offset: c.offset, tensor: c.tensor }, `${what}: as the CLI`);
    }
  }
  // Raw output reads the stored tensors, as before: no convention applies.
  const raw = await decodeAll(ollamaBlob({ meta: { quant_type: 'int5' } }), { dtype: 'raw' });
  assert.deepEqual([...raw.keys()], ['w', 'w.scale', 'w.bias']);
});
