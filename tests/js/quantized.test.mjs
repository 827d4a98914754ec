// Quantized checkpoints of the Hub that the library does not decode (issue #27): the committed
// fixtures of tests/data/conventions/hub (ws-make-samples) are refused with the library's status,
// offset, tensor and detail (the method) — from a path and from a stream in 7-byte pieces, config.json
// given as the quantization option; the detail in the error's message — and never handed on as plain tensors;
// dtype 'raw' still gives the stored bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo, streamOf, decodeAll } from './helpers.mjs';

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

test('hub quantizations not decoded: refused by name, as expected.json says', async () => {
  assert.equal(cases.length, 5);
  for (const c of cases) {
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
        assert.ok(e.message.includes(`(${c.detail})`), `${c.dir}: ${e.message}`);  // the method, in the message
        assert.ok(e.hint.includes('does not decode this quantization'), c.dir);
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
