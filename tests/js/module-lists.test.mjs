// The quantization config's lists of modules left unquantized and compressed-tensors' targets
// (issue #27; lib/src/conventions/module_lists.h), through the JS package: a module a list leaves
// unquantized is handed on as stored (an F8_E4M3 router without a scale: its F8 values, plain),
// ModelOpt's hf_quant_config.json is read beside a config.json without quantization_config and its
// exclude_modules wildcard applies, and a mixed-precision compressed-tensors model presents each
// weight's own group arguments. (The refusals — ConventionExcludedQuantized with list and entry —
// are expected.json rows, checked by quantized.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { File } from 'node:buffer';
import { ws, repo, streamOf, decodeAll } from './helpers.mjs';

const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
const L = 'model.layers.0.';

// float8_e4m3fn (bias 7; the fixtures hold no NaN).
function e4m3fn(b) {
  const e = (b >> 3) & 15, m = b & 7;
  const v = e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7);
  return b & 0x80 ? -v : v;
}
const bits32 = (bytes) => new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

test('fp8 modules_to_not_convert: the F8_E4M3 router without a scale is handed on as stored, plain', async () => {
  const dir = join(hub, 'fp8-modules-to-not-convert'), file = join(dir, 'model.safetensors');
  const quantization = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const stored = await decodeAll(file, { dtype: 'raw', quantization });
  const gate = stored.get(`${L}mlp.gate.weight`).bytes;
  const want = new Float32Array([...gate].map(e4m3fn));
  assert.equal(want[0], 1.0);
  const bytes = new Uint8Array(readFileSync(file));
  for (const source of [() => file, () => streamOf(bytes, 7)]) {
    const got = await decodeAll(source(), { dtype: 'f32', quantization });
    const g = got.get(`${L}mlp.gate.weight`);
    assert.equal(g.t.quant, null);  // plain: no convention decodes it
    assert.equal(g.t.source.dtype, 'F8_E4M3');  // as stored, decoded to f32
    assert.deepEqual(bits32(g.bytes), new Uint32Array(want.buffer));
    assert.equal(got.get(`${L}mlp.down_proj.weight`).t.quant.convention, 'fp8');
  }
  // Without the list's entry the same router is an F8 weight missing its scale: refused, never raw.
  quantization.quantization_config.modules_to_not_convert = ['lm_head'];
  await assert.rejects(decodeAll(streamOf(bytes, 7), { dtype: 'f32', quantization }),
    (e) => e.code === 'ConventionMissingCompanion' && e.tensor === `${L}mlp.gate.weight`);
});

test('ModelOpt: hf_quant_config.json beside a config.json without quantization_config; its wildcard leaves q_proj in BF16', async () => {
  const dir = join(hub, 'modelopt-fp8-exclude-wildcard'), file = join(dir, 'model.safetensors');
  const model = new Uint8Array(readFileSync(file));
  const n = Number(new DataView(model.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(model.subarray(8, 8 + n)));
  const weightMap = Object.fromEntries(Object.keys(header).filter((k) => k !== '__metadata__').map((k) => [k, 'model.safetensors']));
  const index = new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap }));
  const picked = { index: new File([index], 'model.safetensors.index.json'), shards: ['model.safetensors', 'config.json', 'hf_quant_config.json']
    .map((name) => ({ name, source: new Uint8Array(readFileSync(join(dir, name))) })) };
  const q = header[`${L}self_attn.q_proj.weight`], d = header[`${L}mlp.down_proj.weight`];
  for (const source of [file, picked]) {
    const got = await decodeAll(source, { dtype: 'f32' });
    const qp = got.get(`${L}self_attn.q_proj.weight`);
    assert.equal(qp.t.quant, null);
    const bf = model.subarray(8 + n + q.data_offsets[0], 8 + n + q.data_offsets[1]);
    const want = new Uint32Array(bf.length / 2);
    for (let i = 0; i < want.length; i++) want[i] = (bf[2 * i] | (bf[2 * i + 1] << 8)) << 16;
    assert.deepEqual(bits32(qp.bytes), want);
    const dp = got.get(`${L}mlp.down_proj.weight`);
    assert.equal(dp.t.quant.convention, 'modelopt');
    const f8 = model.subarray(8 + n + d.data_offsets[0], 8 + n + d.data_offsets[1]);
    assert.deepEqual(bits32(dp.bytes), new Uint32Array(new Float32Array([...f8].map((b) => Math.fround(e4m3fn(b) * 2.5))).buffer));
  }
});

test('compressed-tensors mixed precision: each weight presents its own config group', async () => {
  const dir = join(hub, 'ct-mixed-precision');
  const info = await ws.inspect(join(dir, 'model.safetensors'));
  assert.equal(info.logical.convention, 'compressed-tensors');
  const down = info.logical.weights.get(`${L}mlp.down_proj.weight`).parameters;
  const qp = info.logical.weights.get(`${L}self_attn.q_proj.weight`).parameters;
  assert.equal(down.bits, 4);
  assert.equal(down.strategy, 'group');
  assert.equal(down.group, 16);
  assert.equal(down.symmetric, 'false');
  assert.equal(qp.bits, 8);
  assert.equal(qp.strategy, 'channel');
  assert.equal(qp.symmetric, 'true');
});
