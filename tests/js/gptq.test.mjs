// GPTQ checkpoints (issue #28): the committed fixtures of tests/data/conventions/hub/gptq*
// (ws-make-samples, laid out as AutoGPTQ's / GPTQModel's `pack`) decode to [out, in] with the
// values computed here from the stored integers as vLLM reads them (zero lane + 1 for v1; value
// scale[g][o] * (q - zero), g = g_idx[i]), f32 and f16, from a path and from 1- and 7-byte streams;
// inspect() shows the convention and the parameters the library presents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, streamOf, decodeAll } from './helpers.mjs';

const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
const L = 'model.layers.0.';
const MODULES = [`${L}mlp.down_proj`, `${L}self_attn.q_proj`];

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
// 3 bits: code k of a 32 is bits 3k .. 3k + 2 of 3 consecutive words (word(n) the n-th) read as
// one little-endian bit string: codes 10 and 21 straddle two words.
function code3(word, base, k) {
  const bit = 3 * k, w = Math.floor(bit / 32), at = bit % 32;
  let v = word(base + w) >>> at;
  if (at + 3 > 32) v |= word(base + w + 1) << (32 - at);
  return v & 7;
}
// The weight [out, in] from qweight [in * bits / 32, out], qzeros, scales and g_idx.
function gptqValues(file, m, bits, v1) {
  const qw = tensorOf(file, `${m}.qweight`), qz = tensorOf(file, `${m}.qzeros`);
  const sc = tensorOf(file, `${m}.scales`), gi = tensorOf(file, `${m}.g_idx`);
  const per = 32 / bits, mask = (1 << bits) - 1, out = qw.shape[1], inn = qw.shape[0] * 32 / bits, zc = qz.shape[1];
  const v = new Float32Array(out * inn);
  for (let o = 0; o < out; o++)
    for (let i = 0; i < inn; i++) {
      const g = gi.dv.getInt32(4 * i, true);
      const q = bits === 3
        ? code3((r) => qw.dv.getUint32(4 * (r * out + o), true), 3 * Math.floor(i / 32), i % 32)
        : (qw.dv.getUint32(4 * (Math.floor(i / per) * out + o), true) >>> (bits * (i % per))) & mask;
      const z = (bits === 3
        ? code3((c) => qz.dv.getUint32(4 * (g * zc + c), true), 3 * Math.floor(o / 32), o % 32)
        : (qz.dv.getUint32(4 * (g * zc + Math.floor(o / per)), true) >>> (bits * (o % per))) & mask) + (v1 ? 1 : 0);
      v[o * inn + i] = Math.fround(f16ToF32(sc.dv.getUint16(2 * (g * out + o), true)) * (q - z));
    }
  return v;
}
function f16Of(v) {  // f32 -> binary16, round to nearest even (finite values, no subnormal results here)
  const f = new Float32Array([v]), u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000, a = u & 0x7fffffff;
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

const CASES = [
  ['gptq', 4, true], ['gptq-no-config', 4, true], ['gptq-desc-act', 4, true], ['gptq-8bit-v2', 8, false],
  ['gptq-2bit', 2, true], ['gptq-v1-zero-spill', 4, true],
  ['gptq-3bit', 3, true],  // 32 codes in 3 words, codes 10 and 21 straddling them
];

test('GPTQ: values are vLLM\'s reading of the packed integers, [out, in], f32 and f16, path and streams', async () => {
  for (const [dir, bits, v1] of CASES) {
    const d = join(hub, dir), file = join(d, 'model.safetensors');
    const extra = existsSync(join(d, 'config.json')) ? { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) } : {};
    const bytes = new Uint8Array(readFileSync(file));
    const want = Object.fromEntries(MODULES.map((m) => [m, gptqValues(bytes, m, bits, v1)]));
    for (const source of [() => file, () => streamOf(bytes, 7), () => streamOf(bytes, 1)]) {
      const f32 = await decodeAll(source(), { dtype: 'f32', ...extra });
      const f16 = await decodeAll(source(), { dtype: 'f16', ...extra });
      for (const m of MODULES) {
        const w = f32.get(`${m}.weight`);  // the parameter's name, as transformers loads it
        assert.ok(w, `${dir}: ${m} decoded`);
        assert.equal(w.t.quant.convention, 'gptq', dir);
        assert.deepEqual(new Uint32Array(w.bytes.buffer.slice(w.bytes.byteOffset, w.bytes.byteOffset + w.bytes.byteLength)),
          new Uint32Array(want[m].buffer), `${dir} ${m} f32`);
        const h = f16.get(`${m}.weight`).bytes, got16 = new Uint16Array(h.buffer.slice(h.byteOffset, h.byteOffset + h.byteLength));
        for (let i = 0; i < want[m].length; i++) assert.equal(got16[i], f16Of(want[m][i]), `${dir} ${m} f16 value ${i}`);
      }
    }
  }
});

test('GPTQ: inspect() shows the convention, the [out, in] shape and the parameters', async () => {
  const d = join(hub, 'gptq-8bit-v2');
  const info = await ws.inspect(join(d, 'model.safetensors'), { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) });
  assert.equal(info.logical.convention, 'gptq');
  const w = info.logical.weights.get(`${L}mlp.down_proj.weight`);
  assert.equal(w.format, 'GptqPacked');
  assert.deepEqual(w.parameters, { method: 'gptq', bits: 8, group: 32, checkpoint_format: 'gptq_v2', g_idx: 'stored', scale_dtype: 'F16' });
  assert.equal(info.logical.weights.get(`${L}self_attn.q_proj.bias`).parameters, null);  // plain
});

test('GPTQ: a g_idx value past the groups is QuantGroupIndexOutOfRange at its byte', async () => {
  const d = join(hub, 'gptq-g-idx-range'), file = join(d, 'model.safetensors');
  const bytes = new Uint8Array(readFileSync(file));
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const at = 8 + n + h[`${L}mlp.down_proj.g_idx`].data_offsets[0] + 4 * 40;
  const quantization = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
  for (const source of [() => file, () => streamOf(bytes, 7)]) {
    await assert.rejects(decodeAll(source(), { dtype: 'f32', quantization }), (e) => {
      assert.equal(e.code, 'QuantGroupIndexOutOfRange');
      assert.equal(e.offset, at);
      return true;
    });
  }
});

// GPTQ v1's zero spill is the library's warning (issue #28; lib/include/weightstream/warning.h):
// validate() and loadToWebGPU() return it, createReader() hands it out as an event, each with the
// code, the file, the qzeros tensor, the offset of its first all-ones lane's word and the count of
// all-ones lanes — computed here from the stored words and equal to the case's expected.json
// entry; inspect() reads headers only and has none; a path and a 7-byte stream alike.
test('GPTQ v1 zero spill: warnings with file, tensor, offset and count, from every reading host', async () => {
  const { FakeDevice } = await import('./fake-gpu.mjs');
  const cases = JSON.parse(readFileSync(join(hub, 'expected.json'), 'utf8')).cases;
  for (const [dir, bits] of [['gptq-v1-zero-spill', 4], ['gptq-3bit', 3], ['gptq-8bit-v2', 8]]) {
    const path = join(hub, dir, 'model.safetensors');
    const file = new Uint8Array(readFileSync(path));
    const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
    const want = [];
    if (dir !== 'gptq-8bit-v2') {
      for (const m of MODULES) {
        const qz = tensorOf(file, `${m}.qzeros`);
        const words = bits === 3 ? 3 : 1, lanes = bits === 3 ? 32 : 32 / bits, mask = (1 << bits) - 1;
        let count = 0, first = null;
        for (let b = 0; b < qz.dv.byteLength / 4; b += words) {
          let hits = 0;
          for (let k = 0; k < lanes; k++) {
            const code = bits === 3 ? code3((i) => qz.dv.getUint32(4 * i, true), b, k) : (qz.dv.getUint32(4 * b, true) >>> (bits * k)) & mask;
            if (code === mask) hits++;
          }
          if (hits && first === null) first = 8 + n + header[`${m}.qzeros`].data_offsets[0] + 4 * b;
          count += hits;
        }
        if (count) want.push({ code: 'GptqZeroSpill', file: null, offset: first, tensor: `${m}.qzeros`, weight: `${m}.weight`, count });
      }
    }
    want.sort((a, b) => a.offset - b.offset);
    if (dir === 'gptq-v1-zero-spill') assert.equal(want.length, 1);
    // expected.json states the same (code, tensor, offset, count).
    const stated = cases.find((c) => c.dir === dir).warnings ?? [];
    assert.deepEqual(stated, want.map(({ code, tensor, offset, count }) => ({ code, tensor, offset, count })), dir);
    const strip = (ws_) => ws_.map(({ message, ...w }) => { assert.match(message, /^a GPTQ v1 .* in this tensor\. /); return w; });
    // config.json as the quantization option: a stream has nothing beside it (gptq_v2 is stated there).
    const quantization = JSON.parse(readFileSync(join(hub, dir, 'config.json'), 'utf8'));
    for (const source of [() => path, () => streamOf(file, 7)]) {
      const v = await ws.validate(source(), { quantization });
      assert.equal(v.valid, true, dir);
      assert.deepEqual(strip(v.warnings), want, `${dir} validate`);
      const model = await ws.loadToWebGPU(new FakeDevice(), source(), { dtype: 'f32', quantization });
      assert.deepEqual(strip(model.warnings), want, `${dir} loadToWebGPU`);
      model.destroy();
      const events = [];
      for await (const ev of ws.createReader({ dtype: 'f16', quantization }).read(source())) if (ev.type === 'warning') events.push(ev);
      assert.deepEqual(strip(events.map(({ type, ...w }) => w)), want, `${dir} createReader`);
    }
    assert.deepEqual((await ws.inspect(path, { quantization })).warnings, [], `${dir} inspect: headers only`);
  }
});
