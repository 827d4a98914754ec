// Quantized checkpoints of the Hub (issue #27): the committed fixtures of
// tests/data/conventions/hub (ws-make-samples) that the library does not decode (or that are
// malformed) are refused with the library's status,
// offset, tensor and detail (the method) — from a path and from a stream in 7-byte pieces, config.json
// given as the quantization option; the detail in the error's message — and never handed on as plain tensors;
// dtype 'raw' still gives the stored bytes. FP8 (status Ok in expected.json) decodes: values computed
// here from the stored bytes and scales, f32 and f16, from a path and from 1-byte and 7-byte streams;
// the parameters the library presents; loadToWebGPU decodes it on the CPU and plan() says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { File } from 'node:buffer';
import { createHash } from 'node:crypto';
import { ws, repo, streamOf, decodeAll, f32ToF16 } from './helpers.mjs';

const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
const cases = JSON.parse(readFileSync(join(hub, 'expected.json'), 'utf8')).cases;

async function refusal(source, options) {
  try {
    await decodeAll(source, options);
  } catch (e) {
    return e;
  }
  return null;
}

// A model whose method is in another config file (quantize_config.json, ...) as `{ index, shards }`
// with that file among the shards (how a page gives picked files); from a path it is read beside.
function withOtherConfig(dir, c) {
  const model = new Uint8Array(readFileSync(join(dir, 'model.safetensors')));
  const header = JSON.parse(new TextDecoder().decode(model.subarray(8, 8 + Number(new DataView(model.buffer).getBigUint64(0, true)))));
  const weightMap = Object.fromEntries(Object.keys(header).filter((k) => k !== '__metadata__').map((k) => [k, 'model.safetensors']));
  const index = new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap }));
  return { index: new File([index], 'model.safetensors.index.json'),
    shards: [{ name: 'model.safetensors', source: model }, { name: c.other_config, source: new Uint8Array(readFileSync(join(dir, c.other_config))) }] };
}

test('hub quantizations not decoded or malformed: refused, as expected.json says', async () => {
  assert.equal(cases.length, 96);  // 41 + compressed-tensors nvfp4 / mxfp4's 8 (3 decoded) + AWQ's 13 (GEMV's 2 neighbours) + bitsandbytes' 10 malformed neighbours (issue #28; bnb.test.mjs decodes its fixtures) + ModelOpt FP8's 8 + 3 of compressed-tensors' stored formats + GPTQ 3-bit's 2 and dynamic's 3 + the module lists' 8 (module-lists.test.mjs decodes theirs)
  for (const c of cases.filter((x) => x.status !== 'Ok')) {
    if (c.other_config) {
      for (const source of [withOtherConfig(join(hub, c.dir), c), join(hub, c.dir, 'model.safetensors')]) {
        const e = await refusal(source, { dtype: 'f32' });
        assert.ok(e instanceof ws.WeightstreamError, `${c.dir}: refused (${e})`);
        assert.equal(e.code, c.status, c.dir);
        assert.equal(e.tensor, c.tensor, c.dir);
        assert.ok(e.message.includes(`(${c.detail})`), `${c.dir}: ${e.message}`);
      }
      continue;
    }
    const dir = join(hub, c.dir);
    const file = join(dir, 'model.safetensors');
    // config.json as the quantization option (a stream has nothing beside it; a path would read it).
    const config = c.config ? JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) : undefined;
    const extra = config ? { quantization: config } : {};
    const sources = [() => file, () => streamOf(new Uint8Array(readFileSync(file)), 7)];
    for (const source of sources) {
      for (const dtype of ['f32', 'f16']) {
        const e = await refusal(source(), { dtype, ...extra });
        assert.ok(e instanceof ws.WeightstreamError, `${c.dir}: refused (${e})`);
        assert.equal(e.code, c.status, c.dir);
        assert.equal(e.offset, c.offset, c.dir);
        assert.equal(e.tensor, c.tensor, c.dir);
        if (c.detail) assert.ok(e.message.includes(`(${c.detail})`), `${c.dir}: ${e.message}`);  // the method, in the message
        if (c.status === 'QuantizationUnsupported') assert.ok(e.hint.includes('does not decode this quantization'), c.dir);
      }
    }
  }
});

test("hub quantizations: dtype 'raw' hands on the stored tensors", async () => {
  const got = await decodeAll(join(hub, 'fp8-block', 'model.safetensors'), { dtype: 'raw' });
  assert.equal(got.size, 6);
  const w = got.get('model.layers.0.self_attn.kv_a_proj_with_mqa.weight');
  assert.equal(w.bytes.length, 48);
  assert.equal(w.bytes[0], 0x38);  // E4M3 1.0 as stored; its block scale (5.0) is another tensor
});

// --- FP8 ---------------------------------------------------------------------------------------

// E4M3FN (torch.float8_e4m3fn) from its definition: bias 7, subnormals man * 2^-9, 0x7F/0xFF NaN.
function e4m3fn(b) {
  if ((b & 0x7f) === 0x7f) return NaN;
  const e = (b >> 3) & 15, m = b & 7;
  const v = e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7);
  return b & 0x80 ? -v : v;
}
function scaleAt(bytes, dtype, i) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'F32') return dv.getFloat32(4 * i, true);
  if (dtype === 'BF16') { const f = new Float32Array(1); new Uint32Array(f.buffer)[0] = dv.getUint16(2 * i, true) << 16; return f[0]; }
  return 2 ** (bytes[i] - 127);  // F8_E8M0, U8 (ue8m0)
}
const L = 'model.layers.0.';
const FP8 = [
  { dir: 'fp8-block', name: `${L}self_attn.kv_a_proj_with_mqa.weight`, scale: 'F32', rows: 6, cols: 8, br: 4, bc: 4, suffix: '_scale_inv' },
  { dir: 'fp8-block-default', name: `${L}mlp.up_proj.weight`, scale: 'F32', rows: 130, cols: 8, br: 128, bc: 128, suffix: '_scale_inv' },
  { dir: 'fp8-block-bf16', name: `${L}self_attn.q_proj.weight`, scale: 'BF16', rows: 7, cols: 12, br: 3, bc: 5, suffix: '_scale_inv' },
  { dir: 'fp8-block-e8m0', name: `${L}mlp.gate_proj.weight`, scale: 'F8_E8M0', rows: 6, cols: 8, br: 4, bc: 4, suffix: '_scale_inv' },
  { dir: 'fp8-block-e8m0', name: `${L}mlp.up_proj.weight`, scale: 'U8', rows: 4, cols: 8, br: 4, bc: 4, suffix: '_scale_inv' },
  { dir: 'fp8-tensor-channel', name: `${L}self_attn.o_proj.weight`, scale: 'F32', rows: 4, cols: 8, br: 4, bc: 8, suffix: '_scale' },
  { dir: 'fp8-tensor-channel', name: `${L}mlp.down_proj.weight`, scale: 'F32', rows: 4, cols: 8, br: 1, bc: 8, suffix: '_scale' },
];

// weight_dequant's arithmetic, in f32: y[r][c] = f32(x[r][c]) * s[r / br][c / bc] over a ceil grid.
function expected(w, q, s) {
  const out = new Float32Array(w.rows * w.cols), gc = Math.ceil(w.cols / w.bc);
  for (let r = 0; r < w.rows; r++)
    for (let c = 0; c < w.cols; c++) out[r * w.cols + c] = Math.fround(e4m3fn(q[r * w.cols + c]) * scaleAt(s, w.scale, Math.floor(r / w.br) * gc + Math.floor(c / w.bc)));
  return out;
}

test('FP8: values are weight_dequant\'s, f32 and f16, from a path and from 1- and 7-byte streams', async () => {
  for (const w of FP8) {
    const dir = join(hub, w.dir), file = join(dir, 'model.safetensors');
    // Nothing is fetched beside a path: config.json (where the model has one) is the quantization option.
    const extra = existsSync(join(dir, 'config.json')) ? { quantization: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) } : {};
    const stored = await decodeAll(file, { dtype: 'raw' });
    const want = expected(w, stored.get(w.name).bytes, stored.get(w.name + w.suffix).bytes);
    const bytes = new Uint8Array(readFileSync(file));
    for (const source of [() => file, () => streamOf(bytes, 7), () => streamOf(bytes, 1)]) {
      const f32 = (await decodeAll(source(), { dtype: 'f32', ...extra })).get(w.name);
      assert.equal(f32.t.quant.convention, 'fp8', w.name);
      assert.equal(f32.t.quant.parameters.method, 'fp8');
      assert.deepEqual(new Uint32Array(f32.bytes.buffer.slice(0)), new Uint32Array(want.buffer), `${w.dir} ${w.name} f32`);
      const f16 = (await decodeAll(source(), { dtype: 'f16', ...extra })).get(w.name);
      const got16 = new Uint16Array(f16.bytes.buffer.slice(0));
      for (let i = 0; i < want.length; i++) assert.equal(got16[i], f16Of(want[i]), `${w.dir} ${w.name} f16 value ${i}`);
    }
  }
});

// f32 -> binary16, round to nearest even (the values here are finite).
function f16Of(v) {
  const f = new Float32Array([v]), u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000, a = u & 0x7fffffff;
  if (a >= 0x477ff000) return sign | 0x7c00;
  if (a < 0x38800000) {
    if (a < 0x33000000) return sign;
    const e = a >>> 23, m = (a & 0x7fffff) | 0x800000, shift = 126 - e;
    let q = m >>> shift;
    const rem = m & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (q & 1))) q++;
    return sign | q;
  }
  const r = a - 0x38000000;
  let q = r >>> 13;
  const rem = r & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (q & 1))) q++;
  return sign | q;
}

test("FP8: the issue's first value is 5.0, not 1.0", async () => {
  const dir = join(hub, 'fp8-block');
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const got = await decodeAll(join(dir, 'model.safetensors'), { dtype: 'f32', quantization: config });
  assert.equal(new Float32Array(got.get(`${L}self_attn.kv_a_proj_with_mqa.weight`).bytes.buffer.slice(0, 4))[0], 5.0);
});

test('FP8: inspect() lists the fp8 weights with the parameters the library presents', async () => {
  const dir = join(hub, 'fp8-block-bf16');
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const info = await ws.inspect(join(dir, 'model.safetensors'), { quantization: config });
  assert.equal(info.logical.convention, 'fp8');
  const q = info.logical.weights.get(`${L}self_attn.q_proj.weight`);
  assert.equal(q.format, 'Fp8Block');
  assert.deepEqual(q.parameters, { method: 'fp8', scaling: 'block', block_rows: 3, block_cols: 5, weight_dtype: 'F8_E4M3', scale_dtype: 'BF16' });
  assert.equal(info.logical.weights.get('lm_head.weight').parameters, null);  // plain, no scale
});

test("FP8: loadToWebGPU decodes on the CPU; with decode 'gpu' plan() says so (cpuFallback)", async () => {
  const { FakeDevice } = await import('./fake-gpu.mjs');
  const dir = join(hub, 'fp8-block');
  const bytes = new Uint8Array(readFileSync(join(dir, 'model.safetensors')));
  const quantization = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const name = `${L}self_attn.kv_a_proj_with_mqa.weight`;
  const p = await ws.plan(bytes, { dtype: 'f16', decode: 'gpu', quantization, limits: { maxBufferSize: 1 << 30 } });
  const t = p.tensors.find((x) => x.name === name);
  assert.equal(t.decode, 'cpu');
  assert.equal(t.cpuFallback, 'Fp8Block has no GPU decode pass: decoded on the CPU');
  assert.equal(p.tensors.find((x) => x.name === 'model.embed_tokens.weight').cpuFallback, undefined);  // BF16: not quantized
  for (const decode of ['cpu', 'auto']) {
    const device = new FakeDevice();
    const r = await ws.loadToWebGPU(device, streamOf(bytes, 7), { dtype: 'f32', decode, quantization });
    assert.equal(new Float32Array(r.tensors[name].buffer.data.buffer, 0, 1)[0], 5.0, decode);
  }
});

// --- decoded: gpt-oss MXFP4 and ModelOpt NVFP4 -----------------------------------------------------

// A stored tensor's bytes, from the file's header.
function storedOf(file, name) {
  const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
  const [a, b] = h[name].data_offsets;
  return file.subarray(8 + n + a, 8 + n + b);
}
// transformers' FP4_VALUES (integrations/mxfp4.py) = ModelOpt's e2m1_values.
const FP4 = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6];
// convert_moe_packed_tensors: ldexp(FP4[nibble], scale - 127), low nibble first (exact in f32).
function gptOss(blocks, scales) {
  const out = new Float32Array(scales.length * 32);
  for (let r = 0; r < scales.length; r++)
    for (let j = 0; j < 16; j++) {
      const b = blocks[r * 16 + j];
      out[r * 32 + 2 * j] = FP4[b & 15] * 2 ** (scales[r] - 127);
      out[r * 32 + 2 * j + 1] = FP4[b >> 4] * 2 ** (scales[r] - 127);
    }
  return out;
}
// NVFP4QTensor.dequantize: FP4[code] * f32(f32(e4m3(s)) * weight_scale_2), each product in f32.
function e4m3(x) {
  const e = (x >> 3) & 15, m = x & 7;
  const v = e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7);
  return x & 0x80 ? -v : v;
}
function modelOpt(weight, scale, global) {
  const out = new Float32Array(weight.length * 2);
  for (let g = 0; g < scale.length; g++) {
    const s = Math.fround(e4m3(scale[g]) * global);
    for (let j = 0; j < 8; j++) {
      const b = weight[g * 8 + j];
      out[g * 16 + 2 * j] = Math.fround(FP4[b & 15] * s);
      out[g * 16 + 2 * j + 1] = Math.fround(FP4[b >> 4] * s);
    }
  }
  return out;
}

async function checkDecoded(dir, want, conv, options = {}) {
  const file = join(hub, dir, 'model.safetensors');
  const bytes = new Uint8Array(readFileSync(file));
  for (const source of [() => file, () => streamOf(bytes, 7)]) {
    for (const dtype of ['f32', 'f16']) {
      const got = await decodeAll(source(), { dtype, ...options });
      for (const [name, values] of want) {
        const w = got.get(name);
        assert.ok(w, `${dir}: ${name}`);
        assert.equal(w.t.quant.convention, conv, name);
        if (dtype === 'f32') assert.deepEqual(new Float32Array(w.bytes.buffer), values, `${dir} ${name}`);
        else assert.deepEqual([...new Uint16Array(w.bytes.buffer)], [...values].map(f32ToF16), `${dir} ${name} f16`);
      }
    }
  }
}

test('gpt-oss mxfp4: <p>_blocks + <p>_scales decode as transformers dequantizes them', async () => {
  const E = 'model.layers.0.mlp.experts.';
  const bytes = new Uint8Array(readFileSync(join(hub, 'mxfp4-gpt-oss', 'model.safetensors')));
  const want = new Map(['gate_up_proj', 'down_proj'].map((p) => [E + p, gptOss(storedOf(bytes, E + p + '_blocks'), storedOf(bytes, E + p + '_scales'))]));
  const config = JSON.parse(readFileSync(join(hub, 'mxfp4-gpt-oss', 'config.json'), 'utf8'));
  await checkDecoded('mxfp4-gpt-oss', want, 'mxfp4', { quantization: config });
  await checkDecoded('mxfp4-gpt-oss-no-config', want, 'mxfp4');
  const info = await ws.inspect(join(hub, 'mxfp4-gpt-oss-no-config', 'model.safetensors'));
  assert.equal(info.logical.convention, 'mxfp4');
  const w = [...info.logical.weights].find((x) => x.name === E + 'gate_up_proj');
  assert.deepEqual([w.mode, w.bits, w.group, w.shape], ['mxfp4', 4, 32, [2, 64, 64]]);
});

test('ModelOpt nvfp4: weight_scale_2 multiplies the E4M3 block scale, as NVFP4QTensor.dequantize', async () => {
  const L = 'model.layers.0.';
  const bytes = new Uint8Array(readFileSync(join(hub, 'modelopt-nvfp4', 'model.safetensors')));
  const want = new Map(['mlp.down_proj', 'self_attn.q_proj'].map((m) => [L + m + '.weight', modelOpt(storedOf(bytes, L + m + '.weight'),
    storedOf(bytes, L + m + '.weight_scale'), new Float32Array(storedOf(bytes, L + m + '.weight_scale_2').slice().buffer)[0])]));
  const config = JSON.parse(readFileSync(join(hub, 'modelopt-nvfp4', 'config.json'), 'utf8'));
  await checkDecoded('modelopt-nvfp4', want, 'modelopt', { quantization: config });
  await checkDecoded('modelopt-nvfp4-no-config', want, 'modelopt');
  const got = await decodeAll(join(hub, 'modelopt-nvfp4-no-config', 'model.safetensors'), { dtype: 'f32' });
  assert.equal(got.get(L + 'mlp.down_proj.weight').t.quant.globalScale, L + 'mlp.down_proj.weight_scale_2');
  // A weight_scale_2 of zero: refused at its bytes, never all zeros.
  const bad = bytes.slice();
  const g = storedOf(bytes, L + 'mlp.down_proj.weight_scale_2');
  bad.fill(0, g.byteOffset, g.byteOffset + 4);
  const e = await refusal(bad, { dtype: 'f32' });
  assert.equal(e?.code, 'InvalidBlockData');
  assert.equal(e.offset, g.byteOffset);
});

test("filter selects a gpt-oss weight by its name (<p>, not the stored <p>_blocks)", async () => {
  const E = 'model.layers.0.mlp.experts.';
  const got = await decodeAll(join(hub, 'mxfp4-gpt-oss-no-config', 'model.safetensors'), { dtype: 'f32', filter: [E + 'gate_up_proj'] });
  assert.deepEqual([...got.keys()], [E + 'gate_up_proj']);
  assert.equal(got.get(E + 'gate_up_proj').bytes.length, 2 * 64 * 64 * 4);
});

// --- compressed-tensors pack-quantized ---------------------------------------------------------

// unpack_from_int32 (compressed-tensors pack_quantized.py): value i of a word at bit i * bits,
// minus 2^(bits-1); zero points packed down the rows; _dequantize: (q - zp) * scale, in f32.
function ctValues(packed, scaleBytes, zp, rows, cols, bits, groups, legacy = false, gIdx = null) {
  const pf = 32 / bits, mask = (1 << bits) - 1, off = 1 << (bits - 1), rowWords = cols / pf, group = cols / groups;
  const words = new Uint32Array(packed.slice().buffer);
  const zw = zp && !legacy ? new Uint32Array(zp.slice().buffer) : null;
  const z8 = zp && legacy ? new Int8Array(zp.slice().buffer) : null;
  const sc = new Uint16Array(scaleBytes.slice().buffer);
  const bf16 = (h) => new Float32Array(new Uint32Array([h << 16]).buffer)[0];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; ++r) {
    for (let c = 0; c < cols; ++c) {
      const g = gIdx ? gIdx[c] : Math.floor(c / group);  // weight_g_idx: column c in group g_idx[c]
      const q = ((words[r * rowWords + Math.floor(c / pf)] >>> ((c % pf) * bits)) & mask) - off;
      const z = zw ? ((zw[Math.floor(r / pf) * groups + g] >>> ((r % pf) * bits)) & mask) - off : z8 ? z8[r * groups + g] : 0;
      out[r * cols + c] = Math.fround(Math.fround(q - z) * bf16(sc[r * groups + g]));
    }
  }
  return out;
}

test('compressed-tensors pack-quantized: (q - zp) * scale from the packed words, as compressed-tensors decompresses', async () => {
  const L = 'model.layers.0.';
  for (const [dir, bits, groups, symmetric, legacy] of [['ct-w4a16-group', 4, 2, true], ['ct-w4-asym-group', 4, 2, false],
    ['ct-w4-asym-legacy-zp', 4, 2, false, true], ['ct-w8-channel', 8, 1, true], ['ct-w2-asym-channel', 2, 1, false]]) {
    const bytes = new Uint8Array(readFileSync(join(hub, dir, 'model.safetensors')));
    const want = new Map(['mlp.down_proj', 'self_attn.q_proj'].map((m) => [L + m + '.weight', ctValues(storedOf(bytes, L + m + '.weight_packed'),
      storedOf(bytes, L + m + '.weight_scale'), symmetric ? null : storedOf(bytes, L + m + '.weight_zero_point'), 8, 32, bits, groups, legacy)]));
    const config = JSON.parse(readFileSync(join(hub, dir, 'config.json'), 'utf8'));
    await checkDecoded(dir, want, 'compressed-tensors', { quantization: config });
    const info = await ws.inspect(join(hub, dir, 'model.safetensors'));
    assert.equal(info.logical.convention, 'compressed-tensors');
    const w = info.logical.weights.get(L + 'mlp.down_proj.weight');
    assert.deepEqual(w.shape, [8, 32], dir);
    assert.equal(w.parameters.method, 'compressed-tensors pack-quantized', dir);
    assert.equal(w.parameters.strategy, groups > 1 ? 'group' : 'channel', dir);
    assert.equal(w.parameters.bits, bits, dir);
    assert.equal(w.parameters.symmetric, symmetric ? 'true' : 'false', dir);
  }
});

test('compressed-tensors weight_g_idx (actorder group): each column with its group; -1 is column order', async () => {
  for (const dir of ['ct-g-idx', 'ct-g-idx-unset']) {
    const unset = dir === 'ct-g-idx-unset';
    const bytes = new Uint8Array(readFileSync(join(hub, dir, 'model.safetensors')));
    const d = L + 'mlp.down_proj', q = L + 'self_attn.q_proj';
    const gIdx = new Int32Array(storedOf(bytes, d + '.weight_g_idx').slice().buffer);
    assert.equal(gIdx[3], unset ? -1 : 1);
    const zp = (m) => (unset ? storedOf(bytes, m + '.weight_zero_point') : null);
    const want = new Map([
      [d + '.weight', ctValues(storedOf(bytes, d + '.weight_packed'), storedOf(bytes, d + '.weight_scale'), zp(d), 8, 32, 4, 2, false, unset ? null : gIdx)],
      [q + '.weight', ctValues(storedOf(bytes, q + '.weight_packed'), storedOf(bytes, q + '.weight_scale'), zp(q), 8, 32, 4, 2)]]);
    const config = JSON.parse(readFileSync(join(hub, dir, 'config.json'), 'utf8'));
    await checkDecoded(dir, want, 'compressed-tensors', { quantization: config });
    const info = await ws.inspect(join(hub, dir, 'model.safetensors'));
    assert.equal(info.logical.weights.get(d + '.weight').parameters.actorder, 'group (weight_g_idx)', dir);
  }
  for (const dir of ['ct-g-idx-range', 'ct-g-idx-overfull']) {
    const e = await refusal(join(hub, dir, 'model.safetensors'), { dtype: 'f32' });
    assert.ok(e instanceof ws.WeightstreamError, `${dir}: refused (${e})`);
    assert.equal(e.code, 'QuantGroupIndexOutOfRange', dir);
  }
});

test('compressed-tensors naive-/int-/float-quantized: the stored I8 or F8_E4M3 weight times its scale', async () => {
  const cases = [['ct-int8-asym-group', 'BF16', 1, 16, false, true, 'naive-quantized'], ['ct-int8-channel', 'BF16', 1, 32, false, false, 'int-quantized'],
    ['ct-fp8-block', 'F32', 4, 16, true, false, 'float-quantized'], ['ct-fp8-tensor', 'F32', 8, 32, true, false, 'float-quantized']];
  for (const [dir, sdt, br, bc, fp8, asym, format] of cases) {
    const bytes = new Uint8Array(readFileSync(join(hub, dir, 'model.safetensors')));
    const want = new Map();
    for (const m of ['mlp.down_proj', 'self_attn.q_proj']) {
      const p = L + m, w = storedOf(bytes, p + '.weight'), s = storedOf(bytes, p + '.weight_scale');
      const z = asym ? new Int8Array(storedOf(bytes, p + '.weight_zero_point').slice().buffer) : null;
      const out = new Float32Array(8 * 32);
      for (let r = 0; r < 8; ++r) {
        for (let c = 0; c < 32; ++c) {
          const si = Math.floor(r / br) * (32 / bc) + Math.floor(c / bc);
          const x = fp8 ? e4m3fn(w[r * 32 + c]) : ((w[r * 32 + c] << 24) >> 24) - (z ? z[si] : 0);
          out[r * 32 + c] = Math.fround(x * scaleAt(s, sdt, si));
        }
      }
      want.set(p + '.weight', out);
    }
    const config = JSON.parse(readFileSync(join(hub, dir, 'config.json'), 'utf8'));
    await checkDecoded(dir, want, 'compressed-tensors', { quantization: config });
    const info = await ws.inspect(join(hub, dir, 'model.safetensors'));
    assert.equal(info.logical.weights.get(L + 'mlp.down_proj.weight').parameters.method, `compressed-tensors ${format}`, dir);
  }
});

// --- compressed-tensors nvfp4- / mxfp4-pack-quantized ------------------------------------------

// NVFP4PackedCompressor.decompress (compressed-tensors nvfp4/helpers.py unpack_fp4_from_uint8, low
// nibble first; forward.py _dequantize): scale = f32(e4m3(weight_scale)) / weight_global_scale,
// rounded once (a double quotient of two f32 values rounded to f32 is the f32 quotient), then
// FP4[code] * scale rounded once. MXFP4PackedCompressor: FP4[code] * 2^(weight_scale - 127), exact.
function ctFp4(packed, scales, global, group) {
  const out = new Float32Array(packed.length * 2), per = group / 2;
  for (let g = 0; g < scales.length; g++) {
    const s = global === null ? 2 ** (scales[g] - 127) : Math.fround(e4m3(scales[g]) / global);
    for (let j = 0; j < per; j++) {
      const b = packed[g * per + j];
      out[g * group + 2 * j] = Math.fround(FP4[b & 15] * s);
      out[g * group + 2 * j + 1] = Math.fround(FP4[b >> 4] * s);
    }
  }
  return out;
}

// The f32 bytes' SHA-256 the CLI's `weightstream dequant --all` wrote (tests/golden/cli).
function cliDigests(dir) {
  const out = readFileSync(join(repo, 'tests', 'golden', 'cli', 'tests', 'data', 'conventions', 'hub', dir, 'model.safetensors', 'dequant.out'), 'utf8');
  return new Map(out.split('--- files written\n')[1].trim().split('\n').map((l) => l.split(/\s+/)).map(([n, , h]) => [n.replace(/\.bin$/, ''), h]));
}

test('compressed-tensors nvfp4-/mxfp4-pack-quantized: values as compressed-tensors decompresses them, bytes as the CLI writes them', async () => {
  for (const [dir, nv, cols] of [['ct-nvfp4', true, 32], ['ct-nvfp4-no-config', true, 32], ['ct-mxfp4', false, 64]]) {
    const bytes = new Uint8Array(readFileSync(join(hub, dir, 'model.safetensors')));
    const want = new Map();
    for (const m of ['mlp.down_proj', 'self_attn.q_proj']) {
      const p = L + m;
      const global = nv ? new DataView(storedOf(bytes, p + '.weight_global_scale').slice().buffer).getFloat32(0, true) : null;
      want.set(p + '.weight', ctFp4(storedOf(bytes, p + '.weight_packed'), storedOf(bytes, p + '.weight_scale'), global, nv ? 16 : 32));
    }
    const cfgPath = join(hub, dir, 'config.json');
    const options = existsSync(cfgPath) ? { quantization: JSON.parse(readFileSync(cfgPath, 'utf8')) } : {};
    await checkDecoded(dir, want, 'compressed-tensors', options);
    // The CLI's f32 files, byte for byte (their digests).
    const digests = cliDigests(dir);
    const got = await decodeAll(join(hub, dir, 'model.safetensors'), { dtype: 'f32', ...options });
    for (const [name, w] of got) assert.equal(createHash('sha256').update(w.bytes).digest('hex'), digests.get(name), `${dir} ${name}: the CLI's bytes`);
    const info = await ws.inspect(join(hub, dir, 'model.safetensors'));
    const w = info.logical.weights.get(L + 'mlp.down_proj.weight');
    assert.deepEqual(w.shape, [8, cols], dir);
    assert.equal(w.parameters.method, `compressed-tensors ${nv ? 'nvfp4' : 'mxfp4'}-pack-quantized`, dir);
    assert.equal(w.parameters.global_scale, nv ? 'divides (weight_global_scale)' : undefined, dir);
    const t = got.get(L + 'mlp.down_proj.weight').t;
    assert.equal(t.quant.mode, nv ? 'nvfp4' : 'mxfp4', dir);
    if (nv) assert.equal(t.quant.globalScale, L + 'mlp.down_proj.weight_global_scale', dir);
  }
  // input_global_scale is handed on as stored (a plain F32 tensor).
  const got = await decodeAll(join(hub, 'ct-nvfp4-no-config', 'model.safetensors'), { dtype: 'f32' });
  assert.equal(new Float32Array(got.get(L + 'mlp.down_proj.input_global_scale').bytes.slice().buffer)[0], Math.fround(448 * 6 / 3.25));
});

test('compressed-tensors nvfp4: a weight_global_scale of zero, inf or NaN is InvalidBlockData at its bytes', async () => {
  const bytes = new Uint8Array(readFileSync(join(hub, 'ct-nvfp4-no-config', 'model.safetensors')));
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const at = 8 + n + h[L + 'mlp.down_proj.weight_global_scale'].data_offsets[0];
  for (const bits of [0, 0x80000000, 0x7F800000, 0x7FC00000]) {
    const f = bytes.slice();
    new DataView(f.buffer).setUint32(at, bits, true);
    const e = await refusal(f, { dtype: 'f16' });
    assert.ok(e instanceof ws.WeightstreamError, `0x${bits.toString(16)}: refused (${e})`);
    assert.equal(e.code, 'InvalidBlockData');
    assert.equal(e.offset, at);
    assert.equal(e.tensor, L + 'mlp.down_proj.weight');
  }
});
