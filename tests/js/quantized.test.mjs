// Quantized checkpoints of the Hub that the library does not decode (issue #27): the committed
// fixtures of tests/data/conventions/hub (ws-make-samples) are refused with the library's status,
// offset, tensor and detail (the method) — from a path and from a stream in 7-byte pieces, config.json
// given as the quantization option; the detail in the error's message — and never handed on as plain tensors;
// dtype 'raw' still gives the stored bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { File } from 'node:buffer';
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
// with that file among the shards: nothing is fetched beside a path, so that is how a page gives it.
function withOtherConfig(dir, c) {
  const model = new Uint8Array(readFileSync(join(dir, 'model.safetensors')));
  const header = JSON.parse(new TextDecoder().decode(model.subarray(8, 8 + Number(new DataView(model.buffer).getBigUint64(0, true)))));
  const weightMap = Object.fromEntries(Object.keys(header).filter((k) => k !== '__metadata__').map((k) => [k, 'model.safetensors']));
  const index = new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap }));
  return { index: new File([index], 'model.safetensors.index.json'),
    shards: [{ name: 'model.safetensors', source: model }, { name: c.other_config, source: new Uint8Array(readFileSync(join(dir, c.other_config))) }] };
}

test('hub quantizations not decoded: refused by name, as expected.json says', async () => {
  assert.equal(cases.length, 14);
  for (const c of cases) {
    if (c.other_config) {
      const e = await refusal(withOtherConfig(join(hub, c.dir), c), { dtype: 'f32' });
      assert.ok(e instanceof ws.WeightstreamError, `${c.dir}: refused (${e})`);
      assert.equal(e.code, c.status, c.dir);
      assert.equal(e.tensor, c.tensor, c.dir);
      assert.ok(e.message.includes(`(${c.detail})`), `${c.dir}: ${e.message}`);
      continue;
    }
    const dir = join(hub, c.dir);
    const file = join(dir, 'model.safetensors');
    // Nothing is fetched beside a path or URL: config.json comes as the quantization option.
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
