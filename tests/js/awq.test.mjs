// AWQ checkpoints (issue #28): the committed fixtures of tests/data/conventions/hub/awq*
// (ws-make-samples, laid out as AutoAWQ's WQLinear_GEMM.from_linear) decode to [out, in] with the
// values computed here from the stored integers as AutoAWQ's dequantize_gemm reads them (the code
// and zero of output o in lane AWQ_REVERSE_ORDER[o % 8] = 0,4,1,5,2,6,3,7 of their words; value
// scale[g][o] * (q - zero), no + 1), f32 and f16, from a path and from 1- and 7-byte streams;
// inspect() shows the convention and the parameters; GEMV (WQLinear_GEMV) decodes too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { File } from 'node:buffer';
import { ws, repo, streamOf, decodeAll } from './helpers.mjs';

const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
const L = 'model.layers.0.';
const MODULES = [`${L}mlp.down_proj`, `${L}self_attn.k_proj`];
const REVERSE = [0, 4, 1, 5, 2, 6, 3, 7];

function tensorOf(file, name) {
  const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
  const [a, b] = h[name].data_offsets;
  const bytes = file.subarray(8 + n + a, 8 + n + b);
  return { shape: h[name].shape, dv: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  return e === 0 ? s * m * 2 ** -24 : s * (1 + m / 1024) * 2 ** (e - 15);
}
// The weight [out, in] from qweight [in, out / 8], qzeros [groups, out / 8] and scales [groups, out].
function awqValues(file, m) {
  const qw = tensorOf(file, `${m}.qweight`), qz = tensorOf(file, `${m}.qzeros`), sc = tensorOf(file, `${m}.scales`);
  const inn = qw.shape[0], words = qw.shape[1], out = sc.shape[1], group = inn / sc.shape[0];
  assert.equal(words * 8, out);
  const v = new Float32Array(out * inn);
  for (let o = 0; o < out; o++)
    for (let i = 0; i < inn; i++) {
      const g = Math.floor(i / group), shift = 4 * REVERSE[o % 8], c = Math.floor(o / 8);
      const q = (qw.dv.getUint32(4 * (i * words + c), true) >>> shift) & 15;
      const z = (qz.dv.getUint32(4 * (g * words + c), true) >>> shift) & 15;
      v[o * inn + i] = Math.fround(f16ToF32(sc.dv.getUint16(2 * (g * out + o), true)) * (q - z));
    }
  return v;
}
function f16Of(v) {  // f32 -> binary16, round to nearest even (finite values, no subnormal results here)
  const f = new Float32Array([v]), u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000, a = u & 0x7fffffff;
  if (a < 0x33000000) return sign;
  const r = a - 0x38000000;
  let q = r >>> 13;
  const rem = r & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (q & 1))) q++;
  return sign | q;
}

test('AWQ: values are AutoAWQ\'s reading of the packed integers, [out, in], f32 and f16, path and streams', async () => {
  for (const dir of ['awq', 'awq-no-config', 'awq-exllama']) {
    const d = join(hub, dir), file = join(d, 'model.safetensors');
    const extra = existsSync(join(d, 'config.json')) ? { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) } : {};
    const bytes = new Uint8Array(readFileSync(file));
    const want = Object.fromEntries(MODULES.map((m) => [m, awqValues(bytes, m)]));
    for (const source of [() => file, () => streamOf(bytes, 7), () => streamOf(bytes, 1)]) {
      const f32 = await decodeAll(source(), { dtype: 'f32', ...extra });
      const f16 = await decodeAll(source(), { dtype: 'f16', ...extra });
      for (const m of MODULES) {
        const w = f32.get(`${m}.weight`);  // the parameter's name, as transformers loads it
        assert.ok(w, `${dir}: ${m} decoded`);
        assert.equal(w.t.quant.convention, 'awq', dir);
        assert.deepEqual(new Uint32Array(w.bytes.buffer.slice(w.bytes.byteOffset, w.bytes.byteOffset + w.bytes.byteLength)),
          new Uint32Array(want[m].buffer), `${dir} ${m} f32`);
        const h = f16.get(`${m}.weight`).bytes, got16 = new Uint16Array(h.buffer.slice(h.byteOffset, h.byteOffset + h.byteLength));
        for (let i = 0; i < want[m].length; i++) assert.equal(got16[i], f16Of(want[m][i]), `${dir} ${m} f16 value ${i}`);
      }
      assert.equal(f32.get('lm_head.weight').bytes.byteLength, 8 * 32 * 4, `${dir}: lm_head plain`);
    }
  }
});

// AutoAWQ's older quant_config.json beside the model names the method: from a path it is read
// beside the file; picked files give it as one of the shards of an index (as a page does).
test('AWQ: quant_config.json (w_bit, q_group_size) beside the model, from a path and as picked files', async () => {
  const d = join(hub, 'awq-quant-config'), file = join(d, 'model.safetensors');
  const bytes = new Uint8Array(readFileSync(file));
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const weightMap = Object.fromEntries(Object.keys(header).map((k) => [k, 'model.safetensors']));
  const index = new File([new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap }))], 'model.safetensors.index.json');
  const picked = { index, shards: [{ name: 'model.safetensors', source: bytes },
    { name: 'quant_config.json', source: new Uint8Array(readFileSync(join(d, 'quant_config.json'))) }] };
  for (const source of [file, picked]) {
    const got = await decodeAll(source, { dtype: 'f32' });
    for (const m of MODULES) {
      const w = got.get(`${m}.weight`);
      assert.ok(w, `${m} decoded`);
      assert.equal(w.t.quant.convention, 'awq');
      assert.deepEqual(new Uint32Array(w.bytes.buffer.slice(w.bytes.byteOffset, w.bytes.byteOffset + w.bytes.byteLength)),
        new Uint32Array(awqValues(bytes, m).buffer), m);
    }
  }
});

test('AWQ: inspect() shows the convention, the [out, in] shape and the parameters', async () => {
  const d = join(hub, 'awq');
  const info = await ws.inspect(join(d, 'model.safetensors'), { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) });
  assert.equal(info.logical.convention, 'awq');
  const w = info.logical.weights.get(`${L}self_attn.k_proj.weight`);
  assert.equal(w.format, 'GptqPacked');
  assert.deepEqual(w.shape, [32, 96]);
  assert.deepEqual(w.parameters, { method: 'awq', bits: 4, group: 32, version: 'gemm', scale_dtype: 'F16' });
  assert.equal(info.logical.weights.get('lm_head.weight').parameters, null);  // modules_to_not_convert: plain
});

// GEMV (AutoAWQ gemv.py WQLinear_GEMV.from_linear): qweight [out, in / 8] in natural lane order,
// qzeros [out, W] and scales [out, 8 W] padded (W = calculate_zeros_width); value
// scale[o][g] * (q - zero), g = i / 32 (the fixture's group_size).
function awqGemvValues(file, m) {
  const qw = tensorOf(file, `${m}.qweight`), qz = tensorOf(file, `${m}.qzeros`), sc = tensorOf(file, `${m}.scales`);
  const out = qw.shape[0], words = qw.shape[1], inn = words * 8, zw = qz.shape[1];
  assert.equal(sc.shape[1], zw * 8);
  const v = new Float32Array(out * inn);
  for (let o = 0; o < out; o++)
    for (let i = 0; i < inn; i++) {
      const g = Math.floor(i / 32);
      const q = (qw.dv.getUint32(4 * (o * words + Math.floor(i / 8)), true) >>> (4 * (i % 8))) & 15;
      const z = (qz.dv.getUint32(4 * (o * zw + Math.floor(g / 8)), true) >>> (4 * (g % 8))) & 15;
      v[o * inn + i] = Math.fround(f16ToF32(sc.dv.getUint16(2 * (o * zw * 8 + g), true)) * (q - z));
    }
  return v;
}

test('AWQ: version gemv decodes as from_linear packs it, path and streams; GEMM tensors under it are refused', async () => {
  const d = join(hub, 'awq-gemv'), file = join(d, 'model.safetensors');
  const bytes = new Uint8Array(readFileSync(file));
  const quantization = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
  for (const source of [() => file, () => streamOf(bytes, 7), () => streamOf(bytes, 1)]) {
    const f32 = await decodeAll(source(), { dtype: 'f32', quantization });
    for (const m of MODULES) {
      const w = f32.get(`${m}.weight`);  // the parameter's name, as transformers loads it
      assert.ok(w, `${m} decoded`);
      assert.equal(w.t.quant.convention, 'awq');
      assert.deepEqual(new Uint32Array(w.bytes.buffer.slice(w.bytes.byteOffset, w.bytes.byteOffset + w.bytes.byteLength)),
        new Uint32Array(awqGemvValues(bytes, m).buffer), m);
    }
  }
  const info = await ws.inspect(file, { quantization });
  assert.deepEqual(info.logical.weights.get(`${L}self_attn.k_proj.weight`).parameters,
    { method: 'awq', bits: 4, group: 32, version: 'gemv', scale_dtype: 'F16' });
  const g = join(hub, 'awq-gemv-gemm-tensors'), gemm = new Uint8Array(readFileSync(join(g, 'model.safetensors')));
  const at = new TextDecoder().decode(gemm.subarray(0, 1024)).indexOf(`"${L}mlp.down_proj.scales"`);
  await assert.rejects(decodeAll(streamOf(gemm, 7), { dtype: 'f32', quantization }), (e) => {
    assert.equal(e.code, 'ConventionCompanionShape');
    assert.equal(e.offset, at);
    return true;
  });
});
