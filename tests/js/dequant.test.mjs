// Dequantization through JS equals ggml's reference output (shared/testdata/vectors/ggml) bit for
// bit: every tensor of all_quant_types.gguf, decoded to f32 (and to f16, against the vectors
// rounded here), streamed whole and in 7-byte pieces, with both kernel families. MLX weights are
// checked against formulas computed here. The set of formats this build decodes is asserted, so a
// kernel that goes missing fails here rather than being skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ws, repo, testdata, streamOf, safetensors, gguf, f32ToF16, decodeAll } from './helpers.mjs';

const cli = process.env.WS_CLI ?? join(repo, 'build', 'release', 'tools', 'weightstream');

const ggufPath = join(testdata, 'synthetic', 'gguf', 'all_quant_types.gguf');
const vectorsJson = join(testdata, 'synthetic', 'gguf', 'all_quant_types.tensor_vectors.json');
const vectors = JSON.parse(readFileSync(vectorsJson, 'utf8'));
const expectedOf = (v) => new Uint32Array(new Uint8Array(readFileSync(join(dirname(vectorsJson), v.expected_file))).buffer);

// Every format of dequant.h has a kernel now; this list changes only with the library's.
const ALL_FORMATS = ['F32', 'F16', 'BF16', 'F8_E4M3', 'F8_E5M2', 'F8_E8M0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q8_0',
  'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'Q8_K', 'IQ4_NL', 'IQ4_XS', 'TQ1_0', 'TQ2_0', 'MXFP4', 'NVFP4', 'Q1_0', 'Q2_0',
  'IQ1_S', 'IQ1_M', 'IQ2_XXS', 'IQ2_XS', 'IQ2_S', 'IQ3_XXS', 'IQ3_S', 'I2_S', 'MlxAffine', 'MlxMxfp4', 'MlxMxfp8', 'MlxNvfp4', 'F8Q8'];

test('this build decodes every format of the library', async () => {
  assert.deepEqual(await ws.supportedFormats(), ALL_FORMATS);
});

// Bit-exact, except that NaNs compare by being NaN and by sign (payloads are not specified).
function sameBits(got, want, isNaN, signBit, what) {
  assert.equal(got.length, want.length, what);
  for (let i = 0; i < want.length; i++) {
    if (got[i] === want[i]) continue;
    if (isNaN(want[i]) && isNaN(got[i]) && (want[i] & signBit) === (got[i] & signBit)) continue;
    assert.fail(`${what}: element ${i} is 0x${got[i].toString(16)}, ggml gives 0x${want[i].toString(16)}`);
  }
}
const nan32 = (b) => (b & 0x7F800000) === 0x7F800000 && (b & 0x7FFFFF) !== 0;
const nan16 = (b) => (b & 0x7C00) === 0x7C00 && (b & 0x3FF) !== 0;

test(`f32: the ${vectors.length} GGML types of all_quant_types.gguf equal ggml's output, read by range (seekable) and streamed in 7-byte pieces, both kernel families`, async () => {
  assert.equal(vectors.length, 28);
  const bytes = new Uint8Array(readFileSync(ggufPath));
  const runs = [
    ['file path, one tensor at a time by range', null],
    ['stream in 7-byte pieces', await decodeAll(streamOf(bytes, 7), { dtype: 'f32' })],
    ['stream, reference kernels', await decodeAll(streamOf(bytes, 4096), { dtype: 'f32', kernel: 'reference' })],
    ['stream, SIMD128 kernels', await decodeAll(streamOf(bytes, 4096), { dtype: 'f32', kernel: 'simd128' })],
  ];
  for (const v of vectors) {
    const want = expectedOf(v);
    for (const [how, all] of runs) {
      const got = all ?? await decodeAll(ggufPath, { dtype: 'f32', filter: [v.tensor] });
      const r = got.get(v.tensor);
      assert.equal(r.t.dtype, 'f32');
      assert.equal(r.t.quant?.format ?? r.t.source.dtype, v.type);
      assert.deepEqual(r.t.shape, v.ne);
      sameBits(new Uint32Array(r.bytes.buffer), want, nan32, 0x80000000, `${v.type} (${how})`);
    }
  }
});

test("f16: every GGML type equals ggml's f32 output rounded to f16 (nearest even)", async () => {
  const got = await decodeAll(ggufPath, { dtype: 'f16' });
  for (const v of vectors) {
    const want32 = expectedOf(v);
    const f32 = new Float32Array(want32.buffer);
    const want = new Uint16Array(f32.length);
    for (let i = 0; i < f32.length; i++) want[i] = f32ToF16(f32[i]);
    const r = got.get(v.tensor);
    assert.equal(r.t.dtype, 'f16');
    assert.equal(r.t.byteLength, want.length * 2);
    sameBits(new Uint16Array(r.bytes.buffer), want, nan16, 0x8000, `${v.type} as f16`);
  }
  // Types with nothing to decode stay as stored.
  assert.equal(got.get('i32').t.dtype, 'I32');
});

test('a block with an infinite fp16 scale: InvalidBlockData at the block, naming the tensor', async () => {
  const blocks = new Uint8Array(18 * 4);           // 4 Q4_0 blocks of 18 bytes
  for (let b = 0; b < 4; b++) blocks[b * 18 + 1] = 0x3C;  // d = 1.0
  blocks[2 * 18] = 0x00; blocks[2 * 18 + 1] = 0x7C;       // block 2: d = +inf
  const file = gguf([{ name: 'w', type: 2, ne: [128], data: blocks }]);
  const dataStart = file.length - 96;
  await assert.rejects(decodeAll(streamOf(file, 5), { dtype: 'f32' }), (e) => {
    assert.equal(e.code, 'InvalidBlockData');
    assert.equal(e.tensor, 'w');
    assert.equal(e.offset, dataStart + 2 * 18);
    assert.match(e.message, /^InvalidBlockData at byte \d+ in tensor "w": .*the file is corrupt or was written by a buggy quantizer\.$/);
    return true;
  });
  // dtype 'raw' hands the bytes on untouched.
  const raw = await decodeAll(file, {});
  assert.deepEqual(raw.get('w').bytes, blocks);
});

// MLX affine, 4 bits, groups of 64: q packed LSB-first in U32 words, w = scale * q + bias.
function mlxModel(scalesFirst, rows = 3, k = 128) {
  const group = 64, groups = k / group;
  const q = Array.from({ length: rows * k }, (_, i) => (i * 7 + (i >> 5)) & 15);
  const packed = new Uint32Array(rows * k / 8);
  q.forEach((v, i) => { packed[i >> 3] |= v << (4 * (i & 7)); });
  const bf = (x) => new Uint32Array(new Float32Array([x]).buffer)[0] >>> 16;  // exact for these values
  const sc = Array.from({ length: rows * groups }, (_, g) => [0.25, -0.5, 0.125, 2, 0.375, -1.5][g % 6]);
  const bi = Array.from({ length: rows * groups }, (_, g) => [1, -0.75, 0, 3.5, -2, 0.5][g % 6]);
  const scales = new Uint16Array(sc.map(bf));
  const biases = new Uint16Array(bi.map(bf));
  const want = new Float32Array(rows * k);
  for (let i = 0; i < want.length; i++) {
    const g = Math.floor(i / group);
    want[i] = Math.fround(Math.fround(sc[g] * q[i]) + bi[g]);
  }
  const t = {
    'layer.weight': { dtype: 'U32', shape: [rows, k / 8], data: new Uint8Array(packed.buffer) },
    'layer.scales': { dtype: 'BF16', shape: [rows, groups], data: new Uint8Array(scales.buffer) },
    'layer.biases': { dtype: 'BF16', shape: [rows, groups], data: new Uint8Array(biases.buffer) },
    'norm.weight': { dtype: 'F32', shape: [2], data: new Uint8Array(new Float32Array([1, 2]).buffer) },
  };
  const order = scalesFirst ? ['layer.scales', 'layer.biases', 'layer.weight', 'norm.weight'] : ['layer.weight', 'norm.weight', 'layer.scales', 'layer.biases'];
  return { bytes: safetensors(Object.fromEntries(order.map((n) => [n, t[n]])), { format: 'mlx' }), want, rows, k };
}

test('MLX affine int4 (scales before or after the weight in the file): f32 and f16 equal w = scale * q + bias', async () => {
  for (const scalesFirst of [true, false]) {
    const { bytes, want, rows, k } = mlxModel(scalesFirst);
    const got = await decodeAll(streamOf(bytes, 11), { dtype: 'f32', quantization: { group_size: 64, bits: 4 } });
    assert.deepEqual([...got.keys()].sort(), ['layer.weight', 'norm.weight'], 'scales and biases are consumed');
    const w = got.get('layer.weight');
    assert.deepEqual(w.t.shape, [rows, k]);
    assert.deepEqual(w.t.quant, { format: 'MlxAffine', mode: 'affine', bits: 4, groupSize: 64, scales: 'layer.scales', biases: 'layer.biases' });
    assert.deepEqual(new Float32Array(w.bytes.buffer), want, scalesFirst ? 'scales first' : 'scales last');
    const half = await decodeAll(bytes, { dtype: 'f16', quantization: { quantization: { group_size: 64, bits: 4 } } });
    assert.deepEqual([...new Uint16Array(half.get('layer.weight').bytes.buffer)], [...want].map(f32ToF16));
  }
});

// The rules are the library's (ws::LogicalModel): without a config, shapes that fit several
// (bits, group) pairs are ConventionUnknownParams at the weight, as the CLI reports them; a config
// that states bits without group_size does not complete itself from the shapes either: mlx-lm's
// load_model reads quantization["group_size"] (a KeyError), so since issue #14 the config itself
// is rejected (ConfigQuantizationIncomplete at the section's closing brace; it was
// ConventionUnknownParams at the weight).
test('MLX without a complete config: ambiguous shapes are the library\'s ConventionUnknownParams, a section without group_size is ConfigQuantizationIncomplete (as the CLI says)', async () => {
  const { bytes } = mlxModel(true);
  const dir = mkdtempSync(join(tmpdir(), 'ws-mlx-'));
  try {
    // 16 packed words and 2 scales per row: bits × group = 256 fits 4×64, 8×32 and 2×128.
    // { bits: 4 } is read as {"quantization":{"bits":4}}: its closing brace is byte 25.
    for (const [quantization, code, offset, tensor] of [[null, 'ConventionUnknownParams', null, 'layer.weight'], [{ bits: 4 }, 'ConfigQuantizationIncomplete', 25, null]]) {
      let err = null;
      try { await decodeAll(bytes, { dtype: 'f32', quantization }); } catch (e) { err = e; }
      assert.ok(err instanceof ws.WeightstreamError, String(err));
      assert.equal(err.code, code);
      assert.equal(err.tensor, tensor);
      if (offset !== null) assert.equal(err.offset, offset);
      assert.ok(err.hint.length > 0);
      if (existsSync(cli)) {
        writeFileSync(join(dir, 'model.safetensors'), bytes);
        if (quantization) writeFileSync(join(dir, 'config.json'), JSON.stringify({ quantization }));
        const r = spawnSync(cli, ['dequant', join(dir, 'model.safetensors'), '--tensor', 'layer.weight', '-o', join(dir, 'x.bin'), '--json', '--no-progress'], { encoding: 'utf8' });
        const c = JSON.parse(r.stdout).error;
        assert.deepEqual([err.code, err.offset, err.tensor], [c.code, c.offset, c.tensor]);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ok = await decodeAll(bytes, { dtype: 'f32', quantization: { bits: 4, group_size: 64 } });
  assert.equal(ok.get('layer.weight').t.quant.groupSize, 64);
});

test('wasm scratch buffers (dequantizer output among them) are 64-byte aligned', async () => {
  // The SIMD128 kernels write 16-byte vectors; emmalloc's malloc alone gives 8-byte alignment,
  // where every fourth store would split a cache line.
  const { init } = await import(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'wasm', 'dist', 'weightstream.mjs'));
  const w = await init();
  const sizes = [0, 1, 7, 100, 4096, 65537];
  const ptrs = sizes.map((n) => w.alloc(n));
  for (const [i, p] of ptrs.entries()) assert.equal(p % 64, 0, `ws_alloc(${sizes[i]}) = ${p}`);
  for (const p of ptrs) w.free(p);
});
