// Decode on the GPU, what Node can check without a GPU: plan() says which tensors the GPU decodes
// and what they upload, the decode option's values, and the WGSL exports (the decode itself is
// checked against the CPU decode in Chromium: web/test/gpu-decode.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo } from './helpers.mjs';

const allTypes = readFileSync(join(repo, 'tests', 'data', 'synthetic', 'gguf', 'all_quant_types.gguf'));
const expect = JSON.parse(readFileSync(join(repo, 'tests', 'data', 'synthetic', 'gguf', 'all_quant_types.gguf.expect.json'), 'utf8'));
const covered = ['F16', 'BF16', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q8_0', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'IQ4_NL', 'IQ4_XS', 'MXFP4', 'NVFP4'];

test('plan() with decode: \'gpu\': the covered GGML types decode on the GPU and upload their stored bytes, the rest on the CPU', async () => {
  const p = await ws.plan(allTypes, { dtype: 'f16', decode: 'gpu', limits: { maxBufferSize: 1 << 30 } });
  const byName = new Map(expect.tensors.map((t) => [t.name, t]));
  let upload = 0;
  for (const t of p.tensors) {
    const e = byName.get(t.name);
    const gpu = covered.includes(e.type_name);
    assert.equal(t.decode, gpu ? 'gpu' : 'cpu', `${t.name} ${e.type_name}`);
    // The output is the same either way; the upload is the stored bytes where the GPU decodes.
    if (gpu) { assert.equal(t.uploadBytes, e.n_bytes, t.name); assert.equal(t.byteLength, t.elements * 2, t.name); }
    else assert.equal(t.uploadBytes, t.byteLength, t.name);
    upload += t.uploadBytes;
  }
  assert.equal(p.uploadBytes, upload);
  const cpu = await ws.plan(allTypes, { dtype: 'f16', limits: { maxBufferSize: 1 << 30 } });
  assert.deepEqual(p.tensors.map((t) => [t.name, t.dtype, t.shape, t.byteLength, t.buffers]), cpu.tensors.map((t) => [t.name, t.dtype, t.shape, t.byteLength, t.buffers]));
  assert.ok(cpu.tensors.every((t) => t.decode === 'cpu'));
  assert.equal(cpu.uploadBytes, cpu.outputBytes);
});

test('decode: \'auto\' without a device, and dtype \'raw\', decode nothing on the GPU; a bad value is a TypeError', async () => {
  const auto = await ws.plan(allTypes, { dtype: 'f32', decode: 'auto' });
  assert.ok(auto.tensors.every((t) => t.decode === 'cpu'));
  const raw = await ws.plan(allTypes, { dtype: 'raw', decode: 'gpu' });
  assert.ok(raw.tensors.every((t) => t.decode === null));
  await assert.rejects(ws.plan(allTypes, { dtype: 'f32', decode: 'yes' }), TypeError);
  // A "device" that runs no compute passes: 'gpu' refuses it, before anything is read.
  const device = { limits: {}, queue: { writeBuffer() {}, submit() {} }, createBuffer() { throw new Error('not reached'); } };
  await assert.rejects(ws.loadToWebGPU(device, allTypes, { dtype: 'f32', decode: 'gpu' }), /decode: 'gpu' needs a GPUDevice/);
});

test('the WGSL decoders: one per covered format, each defining the documented functions', () => {
  assert.deepEqual([...ws.GPU_FORMATS].sort(), [...Object.keys(ws.WGSL_FORMATS), ...Object.keys(ws.WGSL_COMPANION_FORMATS)].sort());
  for (const f of covered) assert.ok(ws.GPU_FORMATS.includes(f), f);
  for (const f of ws.GPU_FORMATS) {
    const code = ws.wgslDecoder(f);
    assert.match(code, new RegExp(`fn ws_decode_${f}\\(b: u32, i: u32\\) -> u32`), f);
    assert.match(code, new RegExp(`fn ws_check_${f}\\(b: u32\\) -> u32`), f);
    assert.match(code, /fn ws_f32_to_f16\(x: u32\) -> u32/);
  }
  assert.equal(ws.wgslDecoder('IQ2_XXS'), null);
  for (const [f, d] of Object.entries(ws.WGSL_FORMATS)) assert.ok(d.blockElems > 0 && d.blockBytes > 0, f);
});

// gpt-oss mxfp4 and ModelOpt nvfp4 (issue #27) are MLX's mxfp4 / nvfp4 arithmetic on the same
// bytes: their packed weights decode with the MlxMxfp4 / MlxNvfp4 WGSL decoders (ModelOpt's
// weight_scale_2 as the global scale, multiplied as stored: companion.mjs), uploading the stored
// pieces; the plain tensors beside them as before.
test('plan() with decode: \'gpu\': gpt-oss mxfp4 and ModelOpt nvfp4 weights decode on the GPU', async () => {
  const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
  for (const [dir, names] of [['mxfp4-gpt-oss-no-config', ['model.layers.0.mlp.experts.gate_up_proj', 'model.layers.0.mlp.experts.down_proj']],
    ['modelopt-nvfp4-no-config', ['model.layers.0.mlp.down_proj.weight', 'model.layers.0.self_attn.q_proj.weight']]]) {
    const p = await ws.plan(join(hub, dir, 'model.safetensors'), { dtype: 'f16', decode: 'gpu', limits: { maxBufferSize: 1 << 30 } });
    for (const n of names) {
      const t = p.tensors.find((x) => x.name === n);
      assert.equal(t?.decode, 'gpu', `${dir} ${n}`);
      assert.ok(t.uploadBytes < t.byteLength, `${dir} ${n}: the stored pieces are uploaded`);
    }
  }
});

// compressed-tensors nvfp4- / mxfp4-pack-quantized: the same decoders (nvfp4's global scale
// dividing: ws_global_divides(), global mode 3 in companion.mjs), the stored pieces uploaded.
test('plan() with decode: \'gpu\': compressed-tensors nvfp4 and mxfp4 weights decode on the GPU', async () => {
  const hub = join(repo, 'tests', 'data', 'conventions', 'hub');
  const L = 'model.layers.0.';
  for (const dir of ['ct-nvfp4-no-config', 'ct-mxfp4']) {
    const cfg = join(hub, dir, 'config.json');
    const quantization = dir === 'ct-mxfp4' ? JSON.parse(readFileSync(cfg, 'utf8')) : undefined;
    const p = await ws.plan(join(hub, dir, 'model.safetensors'), { dtype: 'f16', decode: 'gpu', quantization, limits: { maxBufferSize: 1 << 30 } });
    for (const n of [L + 'mlp.down_proj.weight', L + 'self_attn.q_proj.weight']) {
      const t = p.tensors.find((x) => x.name === n);
      assert.equal(t?.decode, 'gpu', `${dir} ${n}`);
      assert.ok(t.uploadBytes < t.byteLength, `${dir} ${n}: the stored pieces are uploaded`);
    }
  }
  // The WGSL decoder of MlxNvfp4 asks the including shader for the dividing rule.
  assert.match(ws.wgslDecoder('MlxNvfp4'), /ws_global_divides\(\)/);
});
