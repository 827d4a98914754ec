// bitsandbytes checkpoints (issue #28): the committed fixtures of tests/data/conventions/hub/bnb*
// (ws-make-samples, laid out as bitsandbytes' Linear4bit / Linear8bitLt save them) decode to the
// values computed here from the stored bytes — 4-bit: code[nibble] * absmax[e / blocksize], the
// high nibble first, the nested absmax f32(f32(code2[q] * nested_absmax[j / 256]) + offset);
// 8-bit: f32(f32(q * SCB[row]) * f32(1/127's constant)) — f32 and f16, from a path and from a
// stream that cannot seek (the shape is in the quant_state JSON, which follows its packed weight:
// the library holds the packed bytes until it has passed). inspect() shows the convention and its
// parameters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, streamOf, decodeAll } from './helpers.mjs';

const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
const L = 'model.layers.0.';
const MODULES = [`${L}mlp.down_proj.weight`, `${L}self_attn.q_proj.weight`];

function tensorOf(file, name) {
  const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
  if (!h[name]) return null;
  const [a, b] = h[name].data_offsets;
  const bytes = file.subarray(8 + n + a, 8 + n + b);
  return { shape: h[name].shape, bytes, dv: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
// bitsandbytes get_4bit_type('nf4'); FP4 as the CUDA kernels decode it (code 8 is -0.0).
const NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
  -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
  0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0].map(Math.fround);
const FP4_MAG = [0, 0.0625, 8, 12, 4, 6, 2, 3].map((x) => Math.fround(x / 12));
const fp4 = (v) => (v < 8 ? FP4_MAG[v] : -FP4_MAG[v - 8]);

function bnb4Values(file, w) {
  const st = tensorOf(file, `${w}.quant_state.bitsandbytes__nf4`) ?? tensorOf(file, `${w}.quant_state.bitsandbytes__fp4`);
  const s = JSON.parse(new TextDecoder().decode(st.bytes));
  const packed = tensorOf(file, w).bytes, absmax = tensorOf(file, `${w}.absmax`);
  const nested = tensorOf(file, `${w}.nested_absmax`), code2 = tensorOf(file, `${w}.nested_quant_map`);
  const n = s.shape.reduce((a, b) => a * b, 1), v = new Float32Array(n);
  for (let e = 0; e < n; e++) {
    const nib = e % 2 === 0 ? packed[e >> 1] >> 4 : packed[e >> 1] & 15, j = Math.floor(e / s.blocksize);
    const a = nested
      ? Math.fround(Math.fround(code2.dv.getFloat32(4 * absmax.bytes[j], true) * nested.dv.getFloat32(4 * Math.floor(j / 256), true)) + Math.fround(s.nested_offset))
      : absmax.dv.getFloat32(4 * j, true);
    v[e] = Math.fround((s.quant_type === 'fp4' ? fp4(nib) : NF4[nib]) * a);
  }
  return v;
}
function bnb8Values(file, w) {
  const q = tensorOf(file, w), scb = tensorOf(file, w.slice(0, -7) + '.SCB');
  const [rows, cols] = q.shape, v = new Float32Array(rows * cols), k = Math.fround(7.874015718698502e-3);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++)
      v[r * cols + c] = Math.fround(Math.fround(q.dv.getInt8(r * cols + c) * scb.dv.getFloat32(4 * r, true)) * k);
  return v;
}
function f16Of(v) {  // f32 -> binary16, round to nearest even (finite values)
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

const CASES = ['bnb-nf4', 'bnb-nf4-nested', 'bnb-fp4-no-config', 'bnb-int8'];

test('bitsandbytes: values are bitsandbytes\' reading of the stored bytes, f32 and f16, from a path', async () => {
  for (const dir of CASES) {
    const d = join(hub, dir), file = join(d, 'model.safetensors');
    const extra = existsSync(join(d, 'config.json')) ? { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) } : {};
    const bytes = new Uint8Array(readFileSync(file));
    const want = Object.fromEntries(MODULES.map((m) => [m, dir === 'bnb-int8' ? bnb8Values(bytes, m) : bnb4Values(bytes, m)]));
    const f32 = await decodeAll(file, { dtype: 'f32', ...extra });
    const f16 = await decodeAll(file, { dtype: 'f16', ...extra });
    for (const m of MODULES) {
      const w = f32.get(m);
      assert.ok(w, `${dir}: ${m} decoded`);
      assert.equal(w.t.quant.convention, 'bitsandbytes', dir);
      assert.deepEqual(new Uint32Array(w.bytes.buffer.slice(w.bytes.byteOffset, w.bytes.byteOffset + w.bytes.byteLength)),
        new Uint32Array(want[m].buffer), `${dir} ${m} f32`);
      const h = f16.get(m).bytes, got16 = new Uint16Array(h.buffer.slice(h.byteOffset, h.byteOffset + h.byteLength));
      for (let i = 0; i < want[m].length; i++) assert.equal(got16[i], f16Of(want[m][i]), `${dir} ${m} f16 value ${i}`);
    }
  }
});

test('bitsandbytes: a stream that cannot seek (a ReadableStream) decodes as the path does: values, shapes, parameters', async () => {
  // The packed weight passes before its quant_state JSON: the library holds it until the JSON has
  // passed; a tensor's shape and parameters are the JSON's at its tensorBegin.
  for (const dir of CASES) {
    const d = join(hub, dir);
    const extra = existsSync(join(d, 'config.json')) ? { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) } : {};
    const bytes = new Uint8Array(readFileSync(join(d, 'model.safetensors')));
    for (const dtype of ['f32', 'f16']) {
      const want = await decodeAll(join(d, 'model.safetensors'), { dtype, ...extra });
      for (const piece of [1, 7, 4096]) {
        const got = await decodeAll(streamOf(bytes, piece), { dtype, ...extra });
        assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${dir} ${dtype} ${piece}`);
        for (const [name, w] of want) {
          const g = got.get(name);
          assert.deepEqual(g.bytes, w.bytes, `${dir} ${dtype} ${piece} ${name}`);
          assert.deepEqual(g.t.shape, w.t.shape, `${dir} ${name} shape`);
          assert.deepEqual(g.t.quant, w.t.quant, `${dir} ${name} quant`);
          assert.equal(g.t.byteLength, w.t.byteLength, `${dir} ${name} byteLength`);
        }
      }
    }
  }
  const down = (await decodeAll(streamOf(new Uint8Array(readFileSync(join(hub, 'bnb-nf4-nested', 'model.safetensors'))), 7), { dtype: 'f32',
    quantization: JSON.parse(readFileSync(join(hub, 'bnb-nf4-nested', 'config.json'), 'utf8')) })).get(MODULES[0]);
  assert.deepEqual(down.t.shape, [64, 320]);
  assert.equal(down.t.quant.parameters.blocksize, 64);
});

test('bitsandbytes: inspect() shows the convention, the JSON\'s shape and the parameters', async () => {
  const d = join(hub, 'bnb-nf4-nested');
  const info = await ws.inspect(join(d, 'model.safetensors'), { quantization: JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) });
  assert.equal(info.logical.convention, 'bitsandbytes');
  const w = info.logical.weights.get(`${L}mlp.down_proj.weight`);
  assert.equal(w.format, 'Bnb4');
  assert.deepEqual(w.shape, [64, 320]);
  assert.deepEqual(w.parameters, { method: 'bitsandbytes', quant_type: 'nf4', blocksize: 64, double_quant: 'true', dtype: 'BF16' });
  assert.equal(info.logical.weights.get(`${L}self_attn.q_proj.bias`).parameters, null);  // plain
});

test('bitsandbytes: a quant_state JSON that does not parse is BnbQuantStateInvalid at its byte', async () => {
  const d = join(hub, 'bnb-state-not-json');
  const expected = JSON.parse(readFileSync(join(hub, 'expected.json'), 'utf8')).cases.find((c) => c.dir === 'bnb-state-not-json');
  const quantization = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
  await assert.rejects(decodeAll(join(d, 'model.safetensors'), { dtype: 'f32', quantization }), (e) => {
    assert.equal(e.code, 'BnbQuantStateInvalid');
    assert.equal(e.offset, expected.offset);
    return true;
  });
});

// dtype 'raw' (the loader's as_stored): every tensor of the file as stored, the quant_state JSON
// tensors too under their names that carry the method; no convention; from a 7-byte stream too.
test('bitsandbytes: dtype raw hands on every tensor as stored, the quant_state JSON included', async () => {
  const d = join(hub, 'bnb-nf4-nested'), file = join(d, 'model.safetensors');
  const bytes = new Uint8Array(readFileSync(file));
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const state = `${L}mlp.down_proj.weight.quant_state.bitsandbytes__nf4`;
  assert.ok(names.includes(state));
  for (const source of [() => file, () => streamOf(bytes, 7)]) {
    const got = await decodeAll(source(), { dtype: 'raw' });
    assert.deepEqual([...got.keys()].sort(), [...names].sort());
    for (const name of names) {
      const [a, b] = header[name].data_offsets;
      assert.deepEqual(new Uint8Array(got.get(name).bytes), bytes.subarray(8 + n + a, 8 + n + b), name);
    }
    assert.ok(new TextDecoder().decode(got.get(state).bytes).startsWith('{"quant_type": "nf4", '));
  }
});
