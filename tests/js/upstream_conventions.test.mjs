// Conventions as the upstream tools write them (issue #14), through the JS package: the
// committed fixtures mlx-overrides/, ollama-inferred/ and uqff-f8q8/ (tests/data/conventions,
// written by ws-make-samples) decode to values computed here from the packed integers and scales,
// read from paths and from streams in 1-byte and random pieces, in f32 and f16, equal to the CLI's
// bytes; every case of malformed/expected.json (the issue #16 file among them) is a
// WeightstreamError with its code, offset, tensor, file and values — never a wasm trap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ws, repo, streamOf, decodeAll, f32ToF16 } from './helpers.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');
const haveCli = existsSync(cli);
const fixtures = join(repo, 'tests', 'data', 'conventions');
const tmp = mkdtempSync(join(tmpdir(), 'ws-upstream-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const L = 'model.layers.0.';

function cliValues(file, name, to) {
  const out = join(tmp, 'out.bin');
  execFileSync(cli, ['dequant', file, '--tensor', name, '--to', to, '-o', out, '--no-progress'], { stdio: 'pipe' });
  return new Uint8Array(readFileSync(out));
}

// A stream of `bytes` in pieces of 1..37 bytes from a seeded xorshift (the same every run).
function randomStream(bytes, seed = 7) {
  let x = seed * 2654435761 >>> 0 || 1, at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) { controller.close(); return; }
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      const n = Math.min(1 + (x % 37), bytes.length - at);
      controller.enqueue(bytes.slice(at, at + n));
      at += n;
    },
  });
}

// --- the formulas (FORMATS.md §2-§4), element by element ---
const FP4 = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
const fp4 = (n) => (n & 8 ? -1 : 1) * FP4[n & 7];
function e4m3(b) {  // MLX's and UQFF's E4M3 (no NaN in these fixtures)
  const s = b & 0x80 ? -1 : 1, e = (b >> 3) & 15, m = b & 7;
  return s * (e === 0 ? (m / 8) * 2 ** -6 : (1 + m / 8) * 2 ** (e - 7));
}
const f32 = Math.fround;
function floatAt(dtype, u8, i) {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (dtype === 'F32') return dv.getFloat32(4 * i, true);
  const h = dv.getUint16(2 * i, true);
  if (dtype === 'BF16') return new Float32Array(new Uint32Array([h << 16]).buffer)[0];
  const e = (h >> 10) & 31, m = h & 1023, v = e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25);
  return h & 0x8000 ? -v : v;
}
// Element i of a row's LSB-first bitstream of `bits`-bit codes.
function unpack(row, i, bits) {
  let v = 0;
  for (let b = 0; b < bits; b++) {
    const bit = i * bits + b;
    v |= ((row[bit >> 3] >> (bit & 7)) & 1) << b;
  }
  return v;
}

// The stored tensors of some files: name -> {dtype, bytes}.
async function storedTensors(paths) {
  const out = new Map();
  for (const p of paths) {
    const bytes = new Uint8Array(readFileSync(p));
    for (const t of (await ws.inspect(p)).tensors) out.set(t.name, { dtype: t.dtype, bytes: bytes.subarray(t.offset, t.offset + t.byteLength) });
  }
  return out;
}

// A quantized weight's values from its packed codes and companions (MLX / Ollama modes).
function quantizedValues(stored, t) {
  const q = t.quant, K = t.shape.at(-1), rows = t.elements / K, bits = q.bits, g = q.groupSize;
  const packed = stored.get(t.name).bytes, sc = stored.get(q.scales), bi = q.biases ? stored.get(q.biases) : null;
  const global = q.globalScale ? floatAt('F32', stored.get(q.globalScale).bytes, 0) : null;
  const out = new Float32Array(t.elements);
  for (let r = 0; r < rows; r++) {
    const row = packed.subarray(r * K * bits / 8);
    for (let i = 0; i < K; i++) {
      const k = unpack(row, i, bits), gi = r * (K / g) + Math.floor(i / g);
      let v;
      if (q.mode === 'affine') v = f32(f32(floatAt(sc.dtype, sc.bytes, gi) * k) + floatAt(bi.dtype, bi.bytes, gi));
      else if (q.mode === 'mxfp4') v = fp4(k) * 2 ** (sc.bytes[gi] - 127);
      else if (q.mode === 'mxfp8') v = e4m3(k) * 2 ** (sc.bytes[gi] - 127);
      else v = global === null ? f32(fp4(k) * e4m3(sc.bytes[gi])) : f32(f32(fp4(k) * e4m3(sc.bytes[gi])) * global);  // nvfp4
      out[r * K + i] = v;
    }
  }
  return out;
}

// F8Q8 (mistral.rs f8q8/mod.rs): q * f32(e4m3fn(d) / 448) per 33-byte block, the tail past the
// shape's values dropped.
function f8q8Values(packed, elements) {
  assert.equal(packed.length, Math.ceil(elements / 32) * 33);
  const out = new Float32Array(elements);
  for (let i = 0; i < elements; i++) {
    const o = Math.floor(i / 32) * 33, d = f32(e4m3(packed[o]) / 448);
    out[i] = f32(((packed[o + 1 + (i % 32)] << 24) >> 24) * d);
  }
  return out;
}

// Every run's bytes of every weight equal `want` (f32 and f16), and the CLI's.
function checkRuns(runs, want, to, cliOf) {
  for (const [name, values] of want) {
    const bytes = to === 'f32' ? new Uint8Array(values.buffer) : new Uint8Array(new Uint16Array([...values].map(f32ToF16)).buffer);
    for (const [i, run] of runs.entries()) assert.deepEqual(run.get(name).bytes, bytes, `${name} as ${to}, run ${i}`);
    if (haveCli) assert.deepEqual(cliOf(name, to), bytes, `${name} as ${to}: the CLI`);
  }
}

test('mlx-overrides/: overrides stand alone (the mxfp4 model\'s 8-bit g64 router gate); values = formulas = the CLI; paths, 1-byte and random pieces; f32 and f16', async () => {
  const dir = join(fixtures, 'mlx-overrides'), file = join(dir, 'model.safetensors');
  const quantization = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(readFileSync(file));
  const stored = await storedTensors([file]);
  const params = {
    [`${L}mlp.gate.weight`]: ['affine', 8, 64], [`${L}mlp.shared_expert_gate.weight`]: ['affine', 8, 64],
    [`${L}self_attn.k_proj.weight`]: ['affine', 4, 128], [`${L}self_attn.q_proj.weight`]: ['nvfp4', 4, 16],
    [`${L}self_attn.v_proj.weight`]: ['mxfp4', 4, 32], [`${L}self_attn.o_proj.weight`]: ['mxfp8', 8, 32],
    [`${L}mlp.experts.gate_proj.weight`]: ['mxfp4', 4, 32],
    [`${L}mlp.down_proj.weight`]: null, 'lm_head.weight': null, 'model.norm.weight': null,
  };
  for (const to of ['f32', 'f16']) {
    const runs = [
      await decodeAll(file, { dtype: to, quantization }),
      await decodeAll(streamOf(bytes, 1), { dtype: to, quantization }),
      await decodeAll(randomStream(bytes), { dtype: to, quantization, kernel: 'reference' }),
    ];
    assert.deepEqual([...runs[0].keys()].sort(), Object.keys(params).sort());
    const want = new Map();
    for (const [name, p] of Object.entries(params)) {
      const { t } = runs[0].get(name);
      assert.deepEqual(t.quant ? [t.quant.mode, t.quant.bits, t.quant.groupSize] : null, p, name);
      if (p) want.set(name, quantizedValues(stored, t));
    }
    assert.equal(runs[0].get(`${L}mlp.gate.weight`).t.quant.biases, `${L}mlp.gate.biases`, 'the gate is affine: it has biases');
    checkRuns(runs, want, to, (name, as) => cliValues(file, name, as));
  }
});

test('ollama-inferred/: a blob without quant_type (types and groups from the shapes, a plain router.scale) and type names as others spell them; values = formulas = the CLI; 1-byte and random pieces', async () => {
  const dir = join(fixtures, 'ollama-inferred'), manifest = join(dir, 'manifest.json');
  const blobs = readdirSync(join(dir, 'blobs')).map((f) => join(dir, 'blobs', f));
  const stored = await storedTensors(blobs);
  const blobBytes = (f) => new Uint8Array(readFileSync(join(dir, 'blobs', f)));
  const E = `${L}mlp.experts.`;
  const params = {
    [`${L}self_attn.q_proj.weight`]: ['affine', 4, 32], [`${L}self_attn.k_proj.weight`]: ['affine', 8, 64],
    [`${L}mlp.up_proj.weight`]: ['affine', 8, 128], [`${E}gate_proj.weight`]: ['affine', 8, 32],
    [`${E}down_proj.weight`]: ['nvfp4', 4, 16], [`${E}up_proj.weight`]: ['affine', 4, 32],
    [`${L}router.scale`]: null, 'model.norm.weight': null,
  };
  for (const to of ['f32', 'f16']) {
    const runs = [
      await decodeAll({ ollama: manifest }, { dtype: to }),
      await decodeAll({ ollama: streamOf(readFileSync(manifest), 1), blobs: (f) => streamOf(blobBytes(f), 1) }, { dtype: to }),
      await decodeAll({ ollama: randomStream(readFileSync(manifest)), blobs: (f) => randomStream(blobBytes(f), f.length) }, { dtype: to, kernel: 'reference' }),
    ];
    assert.deepEqual([...runs[0].keys()].sort(), Object.keys(params).sort());
    const want = new Map();
    for (const [name, p] of Object.entries(params)) {
      const { t } = runs[0].get(name);
      assert.deepEqual(t.quant ? [t.quant.mode, t.quant.bits, t.quant.groupSize] : null, p, name);
      if (p) want.set(name, quantizedValues(stored, t));
    }
    // router.scale: no base tensor, an ordinary F32 tensor.
    const router = new Float32Array(stored.get(`${L}router.scale`).bytes.slice().buffer);
    want.set(`${L}router.scale`, router);
    checkRuns(runs, want, to, (name, as) => cliValues(manifest, name, as));
  }
});

test('uqff-f8q8/: padded F8Q8 layers (60, 42, 25 values) and the version in both shards, in any file order; values = formulas = the CLI; 1-byte and random pieces', async () => {
  const dir = join(fixtures, 'uqff-f8q8');
  const names = ['model-0.uqff', 'model-1.uqff', 'residual.safetensors'];
  const stored = await storedTensors(names.map((n) => join(dir, n)));
  const bytes = Object.fromEntries(names.map((n) => [n, new Uint8Array(readFileSync(join(dir, n)))]));
  const layers = { [`${L}self_attn.q_proj.weight`]: [3, 20], [`${L}self_attn.k_proj.weight`]: [1, 32],
    [`${L}mlp.experts.down_proj.weight`]: [2, 3, 7], [`${L}mlp.gate_proj.weight`]: [5, 5] };
  for (const to of ['f32', 'f16']) {
    const runs = [];
    for (const order of [names, [...names].reverse(), ['model-1.uqff', 'residual.safetensors', 'model-0.uqff']]) {
      runs.push(await decodeAll({ uqff: order.map((n) => join(dir, n)) }, { dtype: to }));
    }
    runs.push(await decodeAll({ uqff: names.map((n) => ({ name: n, source: streamOf(bytes[n], 1) })) }, { dtype: to }));
    runs.push(await decodeAll({ uqff: names.map((n, i) => ({ name: n, source: randomStream(bytes[n], i + 3) })) }, { dtype: to, kernel: 'reference' }));
    assert.deepEqual([...runs[0].keys()].sort(), [...Object.keys(layers), 'model.norm.weight'].sort());
    const want = new Map();
    for (const [name, shape] of Object.entries(layers)) {
      const { t } = runs[0].get(name);
      assert.deepEqual([t.quant.format, t.shape], ['F8Q8', shape], name);
      want.set(name, f8q8Values(stored.get(name).bytes, shape.reduce((a, b) => a * b)));
    }
    checkRuns(runs, want, to, (name, as) => cliValues(join(dir, 'model-0.uqff'), name, as));
  }
  const info = await ws.inspect({ uqff: ['residual.safetensors', 'model-1.uqff', 'model-0.uqff'].map((n) => join(dir, n)) });
  assert.equal(info.version, '1.2.0');
  assert.deepEqual(await ws.validate({ uqff: names.map((n) => join(dir, n)) }), { valid: true, format: 'safetensors', convention: 'uqff', version: '1.2.0', tensors: 23, error: null, warnings: [] });
});

// The CLI's verdict on a malformed case: its JSON error.
function cliError(open) {
  const r = spawnSync(cli, ['dequant', open, '--all', '--json', '--no-progress'], { encoding: 'utf8' });
  return JSON.parse(r.stdout).error;
}

test('malformed/expected.json: each case (the issue #16 file among them) is a WeightstreamError with its code, offset, tensor, file and values, as the CLI reports it', async () => {
  const { cases } = JSON.parse(readFileSync(join(fixtures, 'malformed', 'expected.json'), 'utf8'));
  assert.equal(cases.length, 8);
  const wasm = await ws.init();
  const base = { ...wasm.live };
  for (const c of cases) {
    const dir = join(fixtures, 'malformed', c.dir);
    const files = readdirSync(dir).filter((f) => f !== 'blobs');
    let source, options = { dtype: 'f16' };
    if (c.kind === 'mlx') {
      source = join(dir, 'model.safetensors');
      options = { dtype: 'f16', quantization: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) };
    } else if (c.kind === 'ollama') {
      source = { ollama: join(dir, 'manifest.json') };
    } else {
      source = { uqff: files.map((f) => join(dir, f)) };
    }
    for (const s of c.kind === 'mlx' ? [source, streamOf(readFileSync(source), 1), randomStream(readFileSync(source))] : [source]) {
      let err = null;
      // createReader(...).read(...) through decodeAll; issue #16's file made this a RuntimeError
      // (a wasm trap: divide by zero).
      try { await decodeAll(s, options); } catch (e) { err = e; }
      assert.ok(err instanceof ws.WeightstreamError, `${c.dir}: ${err}`);
      assert.equal(err.code, c.status, c.dir);
      assert.equal(err.tensor, c.tensor, c.dir);
      assert.equal(err.found, c.found === null ? null : BigInt(c.found), c.dir);
      assert.equal(err.expected, c.expected === null ? null : BigInt(c.expected), c.dir);
      assert.ok(err.hint.length > 0, c.dir);
      if (c.file === 'config.json') {
        // The quantization option is an object: the offset is in the JSON the package makes of it
        // (JSON.stringify keeps the keys' order): the quantization section's closing brace.
        const doc = JSON.stringify(options.quantization), key = '"quantization":';
        assert.equal(err.offset, doc.indexOf(key) + key.length + JSON.stringify(options.quantization.quantization).length - 1, c.dir);
        assert.equal(err.shard, null, c.dir);
        assert.match(err.message, /\(in the quantization option\)/, c.dir);
      } else {
        assert.equal(err.offset, c.offset, c.dir);
        assert.equal(err.shard, c.kind === 'mlx' ? null : c.file, c.dir);
      }
      if (c.found !== null && c.expected !== null) assert.match(err.message, new RegExp(`\\b${c.found}\\b.*\\b${c.expected}\\b`), c.dir);
    }
    if (haveCli && c.file !== 'config.json') {
      const e = cliError(join(dir, c.open));
      assert.deepEqual([e.code, e.offset, e.tensor], [c.status, c.offset, c.tensor], `${c.dir}: the CLI`);
    }
  }
  assert.deepEqual(wasm.live, base, 'no handle left behind');
});
