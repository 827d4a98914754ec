// Conventions in JS (FORMATS §3, §4): the committed fixtures of tests/data/conventions (written by
// ws-make-samples, not by this library) decode to the logical weights the CLI writes
// (`weightstream dequant FILE --tensor NAME`), bit for bit, in f32 and f16, read by range and
// streamed in 7-byte pieces; malformed variants are rejected with the CLI's code, offset and
// tensor. A few values are also checked against formulas computed here, so the comparison does not
// rest on the CLI alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ws, repo, streamOf, safetensors, decodeAll, f32ToF16 } from './helpers.mjs';
import { FakeDevice } from './fake-gpu.mjs';
import { serve } from './http-server.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
const noCli = existsSync(cli) ? false : `the CLI is not built (${cli})`;
const fixtures = join(repo, 'tests', 'data', 'conventions');
const tmp = mkdtempSync(join(tmpdir(), 'ws-conventions-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

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

// A one-weight Ollama blob: w [1, words] U32 (64 int4 values by default), its BF16 scale and bias
// [1, scales].
function ollamaBlob({ meta = { quant_type: 'int4', group_size: '32' }, bias = true, extra = {}, words = 8, scales = 2 } = {}) {
  const t = {
    w: { dtype: 'U32', shape: [1, words], data: new Uint8Array(4 * words) },
    'w.scale': { dtype: 'BF16', shape: [1, scales], data: new Uint8Array(2 * scales) },
  };
  if (bias) t['w.bias'] = { dtype: 'BF16', shape: [1, scales], data: new Uint8Array(2 * scales) };
  return safetensors({ ...t, ...extra }, meta);
}

test('malformed Ollama blobs: the library\'s status, offset and tensor (as the CLI reports them)', async () => {
  const cases = [
    ['unknown quant_type', ollamaBlob({ meta: { quant_type: 'int5' } }), 'ConventionUnknownQuantType', 'w'],
    // Since issue #14 a weight without quant_type gets its type from the shapes (Ollama's
    // inferQuantTypeFromShapes; 8 words and 2 scales per row are int4 g32, valid below); 6 words
    // and 1 scale fit no group (this case was ConventionUnknownParams for any shapes).
    ['no quant_type for this weight (another has one), shapes that fit no group', ollamaBlob({ meta: { 'other.quant_type': 'int4' }, words: 6, scales: 1 }), 'ConventionGroupNotInferable', 'w'],
    ['group_size not a number', ollamaBlob({ meta: { quant_type: 'int4', group_size: '3x' } }), 'ConventionUnknownParams', 'w'],
    ['int4 without its bias', ollamaBlob({ bias: false }), 'ConventionMissingCompanion', 'w'],
    ['group 48', ollamaBlob({ meta: { quant_type: 'int4', group_size: '48' } }), 'ConventionBitsNotAllowed', 'w'],
    ['per-tensor mxfp4 with a bias', ollamaBlob({ meta: { 'w.quant_type': 'mxfp4' } }), 'ConventionCompanionShape', 'w'],
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
  // Valid since issue #14: no quant_type for w (int4 g32 from its shapes), and a .scale without a
  // base tensor, which Ollama reads as an ordinary tensor (Gemma-4's router.scale; this case was
  // ConventionOrphanCompanion).
  const ok = await decodeAll(streamOf(ollamaBlob({ meta: { 'other.quant_type': 'int4' }, extra: { 'v.scale': { dtype: 'F32', shape: [1], data: new Uint8Array(new Float32Array([1.5]).buffer) } } }), 7), { dtype: 'f32' });
  assert.deepEqual(ok.get('w').t.quant, { format: 'MlxAffine', mode: 'affine', bits: 4, groupSize: 32, scales: 'w.scale', biases: 'w.bias', convention: 'ollama', globalScale: null });
  assert.deepEqual([...new Float32Array(ok.get('v.scale').bytes.buffer)], [1.5]);
});

// UQFF (FORMATS §4): the directory as a list of sources, in any order (shards sort by number).
const uqffDir = join(fixtures, 'uqff');
const uqffNames = ['residual.safetensors', 'model-1.uqff', 'model-0.uqff'];
const UQFF_WEIGHTS = {
  'model.layers.0.self_attn.o_proj.bias': [null, [4]],
  'model.layers.0.self_attn.o_proj.weight': [null, [4, 8]],
  'model.layers.0.self_attn.k_proj.weight': ['Q8_0', [2, 64]],
  'model.layers.0.self_attn.q_proj.weight': ['Q4_0', [4, 64]],
  'model.layers.0.self_attn.v_proj.weight': ['Q4_K', [2, 256]],
  'model.layers.0.mlp.gate_proj.weight': ['MlxAffine', [2, 64]],
  'model.layers.0.mlp.up_proj.weight': ['MlxAffine', [2, 64]],
  'model.layers.0.mlp.down_proj.weight': ['F8Q8', [2, 64]],
  'model.layers.0.mlp.experts.gate_up_proj.weight': ['MlxMxfp4', [2, 64]],
  'model.norm.weight': [null, [4]], 'model.embed_tokens.weight': [null, [8, 4]], 'lm_head.weight': [null, [8, 4]],
};

test('UQFF directory: the logical weights, file by file, and the version', async () => {
  const got = {};
  const shards = [];
  let end = null;
  for await (const ev of ws.createReader({ dtype: 'f32' }).read({ uqff: uqffNames.map((n) => join(uqffDir, n)) })) {
    if (ev.type === 'tensorEnd') { got[ev.tensor.name] = [ev.tensor.quant?.format ?? null, ev.tensor.shape]; shards.push(ev.shard); }
    if (ev.type === 'end') end = ev;
  }
  assert.deepEqual(got, UQFF_WEIGHTS);
  assert.deepEqual([...new Set(shards)], ['model-0.uqff', 'model-1.uqff', 'residual.safetensors']);
  assert.equal(end.index.version, '1.2.0');
  // Progress counts the data pass over the three files.
  let last = null;
  for await (const ev of ws.createReader({ dtype: 'f32', onProgress: (p) => { last = p; } }).read({ uqff: uqffNames.map((n) => join(uqffDir, n)) })) void ev;
  const total = uqffNames.reduce((n, f) => n + readFileSync(join(uqffDir, f)).length, 0);
  assert.deepEqual([last.bytes, last.totalBytes, last.tensors], [total, total, 12]);
});

test('UQFF directory: every output equals the CLI bit for bit (f32 and f16; paths, Blobs, streams in 7-byte pieces)', { skip: noCli }, async () => {
  const bytes = Object.fromEntries(uqffNames.map((n) => [n, new Uint8Array(readFileSync(join(uqffDir, n)))]));
  let compared = 0;
  for (const to of ['f32', 'f16']) {
    const runs = [
      await decodeAll({ uqff: uqffNames.map((n) => join(uqffDir, n)) }, { dtype: to }),
      await decodeAll({ uqff: uqffNames.map((n) => ({ name: n, source: new Blob([bytes[n]]) })) }, { dtype: to, kernel: 'reference' }),
      await decodeAll({ uqff: uqffNames.map((n) => ({ name: n, source: streamOf(bytes[n], 7) })) }, { dtype: to }),
    ];
    assert.deepEqual([...runs[0].keys()].sort(), Object.keys(UQFF_WEIGHTS).sort());
    for (const name of runs[0].keys()) {
      const want = cliValues(join(uqffDir, 'model-0.uqff'), name, to);
      for (const [i, run] of runs.entries()) assert.deepEqual(run.get(name).bytes, want, `${name} as ${to}, run ${i}`);
      compared++;
    }
  }
  assert.equal(compared, 2 * 12);
});

// A one-layer UQFF shard: version tensors and a Q8_0 GGUF layer [1, 32] (or what `layer` gives).
const u32le = (...v) => new Uint8Array(new Uint32Array(v).buffer);
function uqffShard({ version = [1, 2, 0], layer = null, tag = 0 } = {}) {
  const t = {};
  if (version) VERSION_NAMES.forEach((n, i) => { t[n] = { dtype: 'U32', shape: [], data: u32le(version[i]) }; });
  Object.assign(t, layer ?? {
    'l.weight': { dtype: 'U8', shape: [34], data: new Uint8Array(34) },
    'l.weight.dtype': { dtype: 'U32', shape: [], data: u32le(8) },
    'l.weight.shape': { dtype: 'U32', shape: [2], data: u32le(1, 32) },
  });
  t['l.weight.format'] = { dtype: 'U8', shape: [], data: new Uint8Array([tag]) };
  return safetensors(t);
}
const VERSION_NAMES = ['uqff.version.major', 'uqff.version.minor', 'uqff.version.patch'];

test('malformed UQFF: the library\'s status, tensor and shard (as the CLI reports them)', async () => {
  const hqq = {
    'l.weight': { dtype: 'U8', shape: [16], data: new Uint8Array(16) },
    'l.weight.scales': { dtype: 'F16', shape: [1], data: new Uint8Array(2) },
    'l.weight.zeros': { dtype: 'F16', shape: [1], data: new Uint8Array(2) },
    'l.weight.shape': { dtype: 'U32', shape: [2], data: u32le(1, 32) },
    'l.weight.bits': { dtype: 'U8', shape: [], data: new Uint8Array([4]) },
    'l.weight.group_size': { dtype: 'U32', shape: [], data: u32le(32) },
    'l.weight.axis': { dtype: 'U8', shape: [], data: new Uint8Array([0]) },
  };
  const cases = [
    ['a Q8_0 layer (valid)', uqffShard(), null, null],
    ['major version 2', uqffShard({ version: [2, 0, 0] }), 'UqffMajorVersion', 'uqff.version.major'],
    ['minor version 3', uqffShard({ version: [1, 3, 0] }), 'UqffMinorVersionTooNew', 'uqff.version.minor'],
    ['no version tensors', uqffShard({ version: null }), 'UqffMissingVersion', 'uqff.version.major'],
    ['an Hqq layer', uqffShard({ layer: hqq, tag: 2 }), 'UqffUnsupportedType', 'l.weight'],
    ['a Gguf layer tagged Afq', uqffShard({ tag: 4 }), 'UqffFormatTagMismatch', 'l.weight'],
    ['tag 9', uqffShard({ tag: 9 }), 'UqffUnknownFormatTag', 'l.weight'],
    ['a Gguf layer without its shape', uqffShard({ layer: { 'l.weight': { dtype: 'U8', shape: [34], data: new Uint8Array(34) }, 'l.weight.dtype': { dtype: 'U32', shape: [], data: u32le(8) } } }), 'UqffMissingCompanion', 'l.weight'],
    ['a Q8_0 layer of the wrong byte size', uqffShard({ layer: { 'l.weight': { dtype: 'U8', shape: [33], data: new Uint8Array(33) }, 'l.weight.dtype': { dtype: 'U32', shape: [], data: u32le(8) }, 'l.weight.shape': { dtype: 'U32', shape: [2], data: u32le(1, 32) } } }), 'ConventionCompanionShape', 'l.weight'],
    ['a key in the shard and in residual.safetensors', uqffShard(), 'UqffDuplicateKey', 'l.weight.dtype', safetensors({ 'l.weight.dtype': { dtype: 'U32', shape: [], data: u32le(8) } })],
  ];
  for (const [what, bytes, code, tensor, residual] of cases) {
    let err = null;
    const list = [{ name: 'model-0.uqff', source: streamOf(bytes, 7) }];
    if (residual) list.push({ name: 'residual.safetensors', source: residual });
    try { await decodeAll({ uqff: list }, { dtype: 'f32' }); } catch (e) { err = e; }
    if (code === null) { assert.equal(err, null, what); continue; }
    assert.ok(err instanceof ws.WeightstreamError, `${what}: ${err}`);
    assert.deepEqual([err.code, err.tensor], [code, tensor], what);
    assert.ok(err.hint.length > 0, `${what}: a hint`);
    if (!noCli) {
      const dir = mkdtempSync(join(tmp, 'uqff-'));
      writeFileSync(join(dir, 'model-0.uqff'), bytes);
      if (residual) writeFileSync(join(dir, 'residual.safetensors'), residual);
      const c = cliError(join(dir, 'model-0.uqff'), 'l.weight');
      // The CLI names the shard only for errors at a header entry; JS names it for data errors too.
      const shard = c.shard ?? (code === 'UqffMissingVersion' ? null : residual ? 'residual.safetensors' : 'model-0.uqff');
      assert.deepEqual({ code: err.code, offset: err.offset, tensor: err.tensor, shard: err.shard }, { code: c.code, offset: c.offset, tensor: c.tensor, shard }, `${what}: as the CLI`);
    }
  }
});

test('loadToWebGPU: an Ollama blob and a UQFF directory upload their logical weights (the bytes createReader gives)', async () => {
  const blob = ollamaBlobs.find((b) => readFileSync(b).includes('c.weight.global_scale'));
  const uqff = { uqff: uqffNames.map((n) => join(uqffDir, n)) };
  for (const [source, names] of [[blob, ['a.weight', 'b.weight', 'c.weight', 'lin.bias', 'norm.weight']], [uqff, Object.keys(UQFF_WEIGHTS)]]) {
    const device = new FakeDevice();
    const model = await ws.loadToWebGPU(device, source, { dtype: 'f16' });
    assert.deepEqual(Object.keys(model.tensors).sort(), [...names].sort());
    const want = await decodeAll(source, { dtype: 'f16' });
    for (const [name, t] of Object.entries(model.tensors)) {
      assert.deepEqual(t.buffer.data.subarray(0, t.byteLength), want.get(name).bytes, name);
    }
    if (source === uqff) assert.deepEqual(model.shards.map((s) => s.file), ['model-0.uqff', 'model-1.uqff', 'residual.safetensors']);
    model.destroy();
  }
});

test('UQFF over HTTP: the same bytes with and without Range support (scalars by range requests when the server has them)', async () => {
  const files = new Map(uqffNames.map((n) => [`/d/${n}`, new Uint8Array(readFileSync(join(uqffDir, n)))]));
  const want = await decodeAll({ uqff: uqffNames.map((n) => join(uqffDir, n)) }, { dtype: 'f32' });
  for (const ranges of [true, false]) {
    const srv = await serve(files, { ranges });
    try {
      const got = await decodeAll({ uqff: uqffNames.map((n) => `${srv.base}/d/${n}`) }, { dtype: 'f32' });
      assert.deepEqual([...got.keys()], [...want.keys()]);
      for (const [name, { bytes }] of got) assert.deepEqual(bytes, want.get(name).bytes, `${name}, ranges ${ranges}`);
      // With Range, per file: its header, then (shards only) a range for the scalars, then the
      // weights: 4 + 4 + 2. Without: each file is read into memory when it is first opened (the
      // loader reads by range): one request each.
      assert.deepEqual([srv.stats.requests, srv.stats.rangeRequests], ranges ? [10, 10] : [3, 0]);
    } finally {
      await srv.close();
    }
  }
});

// inspect() and validate() of a UQFF directory and of single MLX / Ollama files: the logical
// weights and plan peaks are the library's, so they equal the CLI's `inspect --json`.
function cliLogical(file) {
  const r = spawnSync(cli, ['inspect', file, '--json'], { encoding: 'utf8' });
  return JSON.parse(r.stdout).logical;
}
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
function asCli(weights) {
  return weights.map((w) => ({
    name: w.name, convention: w.convention, mode: w.mode, stored: w.stored, format: w.format, bits: w.bits, group: w.group,
    shape: w.shape, bytes: w.bytes, companions: w.companions, sequentialScratch: w.sequentialScratch, seekableScratch: w.seekableScratch,
    packedBeforeCompanion: w.packedBeforeCompanion,
  }));
}
function fromCli(l) {
  return l.weights.map((w) => ({
    name: w.name, convention: w.convention, mode: w.mode, stored: w.stored, format: w.format, bits: w.bits, group: w.group,
    shape: w.shape, bytes: w.bytes, companions: w.companions.map(camel), sequentialScratch: w.sequential_scratch,
    seekableScratch: w.seekable_scratch, packedBeforeCompanion: w.packed_before_companion,
  }));
}

test('inspect({uqff}): per-file headers, the logical weights and plan peaks the CLI reports', { skip: noCli }, async () => {
  const info = await ws.inspect({ uqff: uqffNames.map((n) => join(uqffDir, n)) });
  assert.equal(info.convention, 'uqff');
  assert.equal(info.version, '1.2.0');
  assert.deepEqual(info.files.map((f) => f.file), ['model-0.uqff', 'model-1.uqff', 'residual.safetensors']);
  for (const f of info.files) assert.equal(f.tensors.length, (await ws.inspect(join(uqffDir, f.file))).tensors.length);
  const c = cliLogical(join(uqffDir, 'model-0.uqff'));
  assert.deepEqual(asCli(info.logical.weights), fromCli(c));
  assert.deepEqual(info.logical.plan, { chunk: c.plan.chunk, sequentialPeak: c.plan.sequential_peak, seekablePeak: c.plan.seekable_peak });
  // Every output of createReader is one of these weights, with the same logical shape.
  const decoded = await decodeAll({ uqff: uqffNames.map((n) => join(uqffDir, n)) }, { dtype: 'f32' });
  for (const [name, { t }] of decoded) assert.deepEqual(info.logical.weights.find((w) => w.name === name).shape, t.shape, name);
});

test('validate({uqff}): valid, and a malformed shard reported as the reader reports it', async () => {
  const files = uqffNames.map((n) => join(uqffDir, n));
  assert.deepEqual(await ws.validate({ uqff: files }), { valid: true, format: 'safetensors', convention: 'uqff', version: '1.2.0', tensors: 40, error: null, warnings: [] });
  const bad = uqffShard({ version: [2, 0, 0] });
  const v = await ws.validate({ uqff: [{ name: 'model-0.uqff', source: streamOf(bad, 7) }] });
  assert.equal(v.valid, false);
  assert.deepEqual([v.error.code, v.error.tensor, v.error.shard], ['UqffMajorVersion', 'uqff.version.major', 'model-0.uqff']);
  // A shard cut short: the data pass finds it.
  const whole = readFileSync(join(uqffDir, 'model-1.uqff'));
  const cut = uqffNames.map((n) => ({ name: n, source: n === 'model-1.uqff' ? new Blob([whole.subarray(0, whole.length - 3)]) : new Blob([readFileSync(join(uqffDir, n))]) }));
  const t = await ws.validate({ uqff: cut });
  assert.equal(t.valid, false);
  assert.deepEqual([t.error.code, t.error.shard], ['TruncatedData', 'model-1.uqff']);
});

test('inspect of an MLX file (with its config) and of Ollama blobs: the logical weights the CLI reports', { skip: noCli }, async () => {
  const mlx = join(fixtures, 'mlx', 'model.safetensors');
  const config = JSON.parse(readFileSync(join(fixtures, 'mlx', 'config.json'), 'utf8'));
  const info = await ws.inspect(mlx, { quantization: config });
  const c = cliLogical(mlx);
  assert.equal(info.logical.convention, 'mlx');
  assert.deepEqual(asCli(info.logical.weights), fromCli(c));
  assert.deepEqual(info.logical.plan, { chunk: c.plan.chunk, sequentialPeak: c.plan.sequential_peak, seekablePeak: c.plan.seekable_peak });
  assert.equal(info.logical.config, 'config.json');  // the option, standing for config.json
  // A path: its config.json beside it is read, as the CLI reads it (the same logical weights), and
  // inspect says where the parameters came from (what the page shows; it fetches nothing itself).
  const beside = await ws.inspect(mlx);
  assert.equal(beside.logical.convention, 'mlx');
  assert.deepEqual(asCli(beside.logical.weights), fromCli(c));
  assert.equal(beside.logical.config, 'config.json');
  // Bytes given alone have nothing beside them: the library cannot tell bits from group here, and
  // the header is still valid.
  const bare = await ws.inspect(new Uint8Array(readFileSync(mlx)));
  assert.equal(bare.logical.error.code, 'ConventionUnknownParams');
  assert.equal(bare.logical.config, null);
  for (const blob of ollamaBlobs) {
    const o = await ws.inspect(blob);
    assert.equal(o.logical.convention, 'ollama');
    assert.deepEqual(asCli(o.logical.weights), fromCli(cliLogical(blob)), blob);
  }
});

// A UQFF AFQ layer whose scales and biases are in residual.safetensors, not beside its weight in
// model-0.uqff (the library looks companions up across files; so does the JS package now).
function splitAfq() {
  const rows = 2, k = 64, bits = 4, group = 32;
  let seed = 12345;
  const rnd = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return seed >>> 0; };
  const packed = new Uint32Array(rows * k * bits / 32).map(() => rnd());
  // Scales and biases as BF16 (top halves of f32s), so the expected values are exact here.
  const bf = (x) => new Uint32Array(new Float32Array([x]).buffer)[0] >>> 16;
  const fromBf = (h) => new Float32Array(new Uint32Array([h << 16]).buffer)[0];
  const sc = Array.from({ length: rows * k / group }, (_, i) => fromBf(bf(0.03125 * (i + 1))));
  const bi = Array.from({ length: rows * k / group }, (_, i) => fromBf(bf(-0.5 + 0.25 * i)));
  const want = new Float32Array(rows * k);
  for (let i = 0; i < want.length; i++) {
    const q = (packed[Math.floor(i / 8)] >>> (4 * (i % 8))) & 15;
    const g = Math.floor(i / group);
    want[i] = Math.fround(Math.fround(sc[g] * q) + bi[g]);
  }
  const shard = safetensors({
    'uqff.version.major': { dtype: 'U32', shape: [], data: u32le(1) },
    'uqff.version.minor': { dtype: 'U32', shape: [], data: u32le(2) },
    'uqff.version.patch': { dtype: 'U32', shape: [], data: u32le(0) },
    'l.weight': { dtype: 'U32', shape: [rows, k * bits / 32], data: new Uint8Array(packed.buffer) },
    'l.weight.format': { dtype: 'U8', shape: [], data: new Uint8Array([4]) },
    'l.weight.bits': { dtype: 'U8', shape: [], data: new Uint8Array([bits]) },
    'l.weight.group_size': { dtype: 'U8', shape: [], data: new Uint8Array([group]) },
    'norm.weight': { dtype: 'F32', shape: [2], data: new Uint8Array(new Float32Array([1, 2]).buffer) },
  });
  const residual = safetensors({
    'l.weight.scales': { dtype: 'BF16', shape: [rows, k / group], data: new Uint8Array(new Uint16Array(sc.map(bf)).buffer) },
    'l.weight.biases': { dtype: 'BF16', shape: [rows, k / group], data: new Uint8Array(new Uint16Array(bi.map(bf)).buffer) },
  });
  return { shard, residual, want, shape: [rows, k] };
}

test('UQFF: a layer whose scales and biases are in another file decodes (paths, Blobs, 7-byte streams), equal to formulas and to the CLI', async () => {
  const { shard, residual, want, shape } = splitAfq();
  const dir = mkdtempSync(join(tmp, 'uqff-split-'));
  writeFileSync(join(dir, 'model-0.uqff'), shard);
  writeFileSync(join(dir, 'residual.safetensors'), residual);
  const info = await ws.inspect({ uqff: [join(dir, 'residual.safetensors'), join(dir, 'model-0.uqff')] });
  const w = info.logical.weights.find((x) => x.name === 'l.weight');
  assert.deepEqual([w.mode, w.bits, w.group, w.shape, w.companions, w.file], ['affine', 4, 32, shape, ['scales', 'biases', 'format', 'bits', 'groupSize'], 'model-0.uqff']);
  assert.deepEqual((await ws.validate({ uqff: [join(dir, 'model-0.uqff'), join(dir, 'residual.safetensors')] })).valid, true);
  for (const to of ['f32', 'f16']) {
    const runs = [
      await decodeAll({ uqff: [join(dir, 'residual.safetensors'), join(dir, 'model-0.uqff')] }, { dtype: to }),
      await decodeAll({ uqff: [{ name: 'model-0.uqff', source: new Blob([shard]) }, { name: 'residual.safetensors', source: new Blob([residual]) }] }, { dtype: to, kernel: 'reference' }),
      await decodeAll({ uqff: [{ name: 'model-0.uqff', source: streamOf(shard, 7) }, { name: 'residual.safetensors', source: streamOf(residual, 7) }] }, { dtype: to }),
    ];
    for (const r of runs) {
      assert.deepEqual([...r.keys()].sort(), ['l.weight', 'norm.weight'], 'scales and biases are companions, not outputs');
      const got = r.get('l.weight');
      assert.deepEqual(got.t.shape, shape);
      if (to === 'f32') assert.deepEqual(new Float32Array(got.bytes.buffer), want);
      else assert.deepEqual([...new Uint16Array(got.bytes.buffer)], [...want].map(f32ToF16));
      if (!noCli) assert.deepEqual(got.bytes, cliValues(join(dir, 'model-0.uqff'), 'l.weight', to), `${to}: as the CLI`);
    }
  }
});

test('sharded MLX model: a weight whose scales are in another shard decodes; every output equals the CLI', { skip: noCli }, async () => {
  const dir = join(fixtures, 'sharded-mlx');
  const index = join(dir, 'model.safetensors.index.json');
  const quantization = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const weightMap = JSON.parse(readFileSync(index, 'utf8')).weight_map;
  assert.notEqual(weightMap['model.layers.0.self_attn.q_proj.weight'], weightMap['model.layers.0.self_attn.q_proj.scales'], 'the fixture splits a layer');
  for (const to of ['f32', 'f16']) {
    const got = await decodeAll(index, { dtype: to, quantization });
    assert.deepEqual([...got.keys()].sort(), Object.keys(weightMap).filter((n) => !/\.(scales|biases)$/.test(n)).sort());
    for (const [name, { bytes }] of got) assert.deepEqual(bytes, cliValues(index, name, to), `${name} ${to}`);
  }
  // Over HTTP, with and without Range: the scales in another shard are read by range, or taken
  // from one more pass over that shard; the same bytes either way.
  const local = await decodeAll(index, { dtype: 'f32', quantization });
  const files = new Map(readdirSync(dir).map((f) => [`/m/${f}`, new Uint8Array(readFileSync(join(dir, f)))]));
  for (const ranges of [true, false]) {
    const srv = await serve(files, { ranges });
    try {
      const got = await decodeAll(`${srv.base}/m/model.safetensors.index.json`, { dtype: 'f32', quantization });
      assert.deepEqual([...got.keys()].sort(), [...local.keys()].sort());
      for (const [name, { bytes }] of got) assert.deepEqual(bytes, local.get(name).bytes, `${name} (ranges: ${ranges})`);
      if (ranges) assert.ok(srv.stats.rangeRequests > 0);
    } finally {
      await srv.close();
    }
  }
});

test('logical models free every handle: sessions, models and buffers back to where they were, after success and after errors', async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const { shard, residual } = splitAfq();
  const list = () => [{ name: 'model-0.uqff', source: new Blob([shard]) }, { name: 'residual.safetensors', source: new Blob([residual]) }];
  await decodeAll({ uqff: list() }, { dtype: 'f32' });
  await ws.inspect({ uqff: list() });
  await ws.validate({ uqff: list() });
  assert.deepEqual(wasm.live, base, 'after success');
  await assert.rejects(decodeAll({ uqff: [{ name: 'model-0.uqff', source: streamOf(uqffShard({ version: [2, 0, 0] }), 7) }] }, { dtype: 'f32' }), (e) => e.code === 'UqffMajorVersion');
  // Without residual.safetensors the layer lacks scales/biases: its set matches no type.
  await assert.rejects(decodeAll({ uqff: [{ name: 'model-0.uqff', source: new Blob([shard]) }] }, { dtype: 'f32' }), (e) => e.code === 'UqffUnexpectedCompanion');
  await assert.rejects(decodeAll(new Blob([readFileSync(join(fixtures, 'mlx', 'model.safetensors'))]), { dtype: 'f32' }), (e) => e.code === 'ConventionUnknownParams');
  const ctl = new AbortController();
  const it = ws.createReader({ dtype: 'f32', signal: ctl.signal }).read({ uqff: list() });
  await assert.rejects((async () => { for await (const ev of it) if (ev.type === 'tensorData') ctl.abort(); })(), (e) => e.code === 'Aborted');
  assert.deepEqual(wasm.live, base, 'after errors and an abort');
});

// An Ollama model by its manifest: `{ ollama: manifest, blobs }`, the blobs one logical model.
const manifest = join(fixtures, 'ollama', 'manifest.json');

test('Ollama manifest: every blob\'s logical weights, equal to the blobs read one by one and to the CLI (blobs found, a directory, a function)', async () => {
  const blobsDir = join(fixtures, 'ollama', 'blobs');
  const single = new Map();
  for (const blob of ollamaBlobs) for (const [n, v] of await decodeAll(blob, { dtype: 'f32' })) single.set(n, v);
  const manifestBytes = readFileSync(manifest);
  const sources = [
    { ollama: manifest },
    { ollama: manifest, blobs: blobsDir },
    { ollama: new Blob([manifestBytes]), blobs: (file) => new Blob([readFileSync(join(blobsDir, file))]) },
    { ollama: streamOf(manifestBytes, 7), blobs: (file) => streamOf(readFileSync(join(blobsDir, file)), 7) },
  ];
  for (const source of sources) {
    const got = await decodeAll(source, { dtype: 'f32' });
    assert.deepEqual([...got.keys()].sort(), [...single.keys()].sort());
    for (const [n, v] of got) {
      assert.deepEqual(v.bytes, single.get(n).bytes, n);
      assert.deepEqual(v.t.quant, single.get(n).t.quant, n);
    }
  }
  const info = await ws.inspect({ ollama: manifest });
  assert.equal(info.convention, 'ollama');
  assert.deepEqual(info.files.map((f) => f.file).sort(), readdirSync(blobsDir).sort());
  const perBlob = [];
  for (const blob of ollamaBlobs) perBlob.push(...(await ws.inspect(blob)).logical.weights);
  const strip = (ws_) => ws_.map(({ file, ...w }) => w).sort((a, b) => a.name.localeCompare(b.name));
  assert.deepEqual(strip(info.logical.weights), strip(perBlob));
  if (!noCli) {
    for (const w of info.logical.weights) assert.deepEqual((await decodeAll({ ollama: manifest }, { dtype: 'f16', filter: [w.name] })).get(w.name).bytes, cliValues(join(blobsDir, w.file), w.name, 'f16'), w.name);
  }
  assert.deepEqual(await ws.validate({ ollama: manifest }), { valid: true, format: 'safetensors', convention: 'ollama', version: null, tensors: info.tensors.length, error: null, warnings: [] });
});

test('Ollama manifest: a bad manifest, a blob of the wrong size, no blobs directory — exact codes; no handle left behind', async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const blobsDir = join(fixtures, 'ollama', 'blobs');
  const text = readFileSync(manifest, 'utf8');
  // Not an object: the library's ManifestNotObject at byte 0.
  await assert.rejects(ws.inspect({ ollama: new TextEncoder().encode('[1]'), blobs: blobsDir }), (e) => e.code === 'ManifestNotObject' && e.offset === 0);
  // A blob one byte shorter than the manifest says.
  const first = readdirSync(blobsDir)[0];
  const short = (file) => { const b = readFileSync(join(blobsDir, file)); return new Blob([file === first ? b.subarray(0, b.length - 1) : b]); };
  await assert.rejects(decodeAll({ ollama: new TextEncoder().encode(text), blobs: short }, { dtype: 'f32' }), (e) => {
    const size = readFileSync(join(blobsDir, first)).length;
    assert.deepEqual([e.code, e.offset, e.shard, e.found, e.expected], ['ManifestBlobSize', size - 1, first, BigInt(size - 1), BigInt(size)]);
    assert.ok(e.hint.length > 0);
    return true;
  });
  const v = await ws.validate({ ollama: new TextEncoder().encode(text), blobs: short });
  assert.deepEqual([v.valid, v.error.code], [false, 'ManifestBlobSize']);
  // A manifest given as bytes has no directory to find blobs/ from.
  await assert.rejects(ws.inspect({ ollama: new TextEncoder().encode(text) }), (e) => e.code === 'ManifestNoBlobs');
  assert.deepEqual(wasm.live, base);
});

// The malformed models of the CLI's OllamaManifestMissingOrWrongBlobs test: the blob rules are
// the library's (ws::check_manifest_blob_*), so JS reports what the CLI reports — code, offset,
// tensor and blob — from paths and over HTTP (with and without Range).
test('Ollama manifest: a tensor of another layer, a layer not in its blob, a missing blob, a short blob — the CLI\'s JSON error, from paths and URLs', { skip: noCli }, async () => {
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const text = readFileSync(manifest, 'utf8');
  const blobsDir = join(fixtures, 'ollama', 'blobs');
  const [blobA, blobB] = ['sha256-b99a', 'sha256-5f84'].map((p) => readdirSync(blobsDir).find((f) => f.startsWith(p)));
  const tensorLayer = '{"mediaType":"application/vnd.ollama.image.tensor"';
  const layerA = text.slice(text.indexOf(tensorLayer), text.indexOf('},' + tensorLayer) + 1);
  assert.ok(layerA.includes('"name":"a.weight"'), layerA);
  const cases = [
    { why: 'a second layer named b.weight points at blob A', code: 'ManifestTensorInOtherLayer',
      manifest: text.replace(layerA, layerA + ',' + layerA.replace('"a.weight"', '"b.weight"')) },
    { why: 'the expert layer renamed to a prefix its blob does not hold', code: 'ManifestLayerNotInBlob',
      manifest: text.replace('model.layers.0.mlp.experts', 'model.layers.1.mlp.experts') },
    { why: 'blob B not pulled', code: 'ManifestBlobMissing', manifest: text, drop: blobB },
    { why: 'blob A cut to 1000 bytes', code: 'ManifestBlobSize', manifest: text, cut: [blobA, 1000] },
  ];
  for (const c of cases) {
    const root = mkdtempSync(join(tmp, 'ollama-'));
    mkdirSync(join(root, 'manifests', 'm'), { recursive: true });
    mkdirSync(join(root, 'blobs'));
    const path = join(root, 'manifests', 'm', 'latest');
    writeFileSync(path, c.manifest);
    const served = new Map([['/models/manifests/m/latest', new TextEncoder().encode(c.manifest)]]);
    for (const f of readdirSync(blobsDir)) {
      if (f === c.drop) continue;
      let b = new Uint8Array(readFileSync(join(blobsDir, f)));
      if (c.cut?.[0] === f) b = b.subarray(0, c.cut[1]);
      writeFileSync(join(root, 'blobs', f), b);
      served.set(`/models/blobs/${f}`, b);
    }
    const r = spawnSync(cli, ['inspect', '--json', path], { encoding: 'utf8' });
    const want = JSON.parse(r.stdout).error;
    assert.equal(want.code, c.code, c.why);
    const got = (e) => [e.code, e.offset, e.tensor, e.shard];
    const expected = [want.code, want.offset, want.tensor, want.shard];
    for (const op of [ws.inspect, (s) => decodeAll(s, { dtype: 'f32' })]) {
      await assert.rejects(op({ ollama: path }), (e) => { assert.deepEqual(got(e), expected, c.why); assert.ok(e.hint.length > 0, c.why); return true; });
    }
    const v = await ws.validate({ ollama: path });
    assert.deepEqual(got(v.error), expected, `validate: ${c.why}`);
    for (const ranges of [true, false]) {
      const srv = await serve(served, { ranges });
      try {
        const source = { ollama: `${srv.base}/models/manifests/m/latest`, blobs: `${srv.base}/models/blobs/` };
        await assert.rejects(ws.inspect(source), (e) => { assert.deepEqual(got(e), expected, `${c.why} (HTTP, ranges: ${ranges})`); return true; });
      } finally {
        await srv.close();
      }
    }
  }
  assert.deepEqual(wasm.live, base);
});

test('inspect of a sharded MLX model: the logical weights over all shards and the plan peaks the CLI reports', { skip: noCli }, async () => {
  const dir = join(fixtures, 'sharded-mlx');
  const index = join(dir, 'model.safetensors.index.json');
  const quantization = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const wasm = await ws.init();
  const base = { ...wasm.live };
  const info = await ws.inspect(index, { quantization });
  const c = cliLogical(index);
  assert.equal(info.logical.convention, 'mlx');
  assert.deepEqual(asCli(info.logical.weights), fromCli(c));
  assert.deepEqual(info.logical.plan, { chunk: c.plan.chunk, sequentialPeak: c.plan.sequential_peak, seekablePeak: c.plan.seekable_peak });
  assert.deepEqual(wasm.live, base);
});
