// loadToWebGPU against a fake GPUDevice (fake-gpu.mjs): buffers, aligned writes from wasm memory,
// decoding, maxBufferSize and splitting, filters, destroy-on-error and abort. Real-GPU tests
// belong to web/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, testdata, safetensors, streamOf } from './helpers.mjs';
import { FakeDevice } from './fake-gpu.mjs';

const wasm = await ws.init();
const STORAGE_COPY_DST_SRC = 0x80 | 0x08 | 0x04;
const realFile = (name) => new Uint8Array(readFileSync(join(testdata, 'real', 'safetensors', name)));

function assertClean(device) {
  assert.deepEqual(device.violations, []);
}
function assertNothingLive(device, base) {
  assert.deepEqual(device.live(), [], 'every GPU buffer destroyed');
  assert.deepEqual(wasm.live, base, 'every wasm handle and scratch buffer freed');
}

test('raw: one buffer per tensor holding exactly the stored bytes, padded to 4; every write aligned', async () => {
  const bytes = realFile('dtypes.safetensors');
  const header = await ws.inspect(bytes);
  const device = new FakeDevice({ wasmMemory: wasm.memory });
  const r = await ws.loadToWebGPU(device, streamOf(bytes, 7));  // 7-byte pieces: carries everywhere
  assertClean(device);
  assert.equal(device.buffers.length, header.tensors.length);
  for (const t of header.tensors) {
    const e = r.tensors[t.name];
    assert.equal(e.dtype, t.dtype);
    assert.deepEqual(e.shape, t.shape);
    assert.equal(e.byteLength, t.byteLength);
    assert.equal(e.buffer.usage, STORAGE_COPY_DST_SRC);
    assert.equal(e.buffer.size, Math.max(4, Math.ceil(t.byteLength / 4) * 4));
    const stored = bytes.subarray(t.offset, t.offset + t.byteLength);
    assert.deepEqual(e.buffer.data.subarray(0, t.byteLength), stored, t.name);
    assert.ok(e.buffer.data.subarray(t.byteLength).every((b) => b === 0), `${t.name}: zero padding`);
  }
  assert.equal(device.bytesWritten, header.tensors.reduce((s, t) => s + Math.ceil(t.byteLength / 4) * 4, 0));
  assert.ok(device.writesFromWasm > 0);
  r.destroy();
  assert.deepEqual(device.live(), []);
});

test('large pieces are written straight from wasm memory (only 1-3 carried bytes go through JS)', async () => {
  const data = new Uint8Array(3 * 1000 + 2).map((_, i) => i * 31);
  const bytes = safetensors({ a: { dtype: 'U8', shape: [data.length], data } });
  const device = new FakeDevice({ wasmMemory: wasm.memory });
  await ws.loadToWebGPU(device, streamOf(bytes, 1001));
  assertClean(device);
  // Pieces of 1001 bytes: at most one carried word per piece boundary (and the last) goes
  // through JS; everything else leaves wasm memory directly.
  const carried = device.writes - device.writesFromWasm;
  assert.ok(device.writesFromWasm >= 3, `${device.writesFromWasm} writes from wasm memory`);
  assert.ok(carried <= Math.ceil(bytes.length / 1001) + 1, `${carried} carried words`);
  assert.ok(device.bytesWritten - 4 * carried >= data.length - 4 * (Math.ceil(bytes.length / 1001) + 1));
  assert.deepEqual(device.buffers[0].data.subarray(0, data.length), data);
});

test("dtype 'f32' and 'f16': BF16 decoded exactly, odd element counts padded", async () => {
  const bf16 = new Uint16Array([0x3F80, 0xC000, 0x7F80, 0x0001, 0x4049]);  // 1, -2, inf, tiny, 3.140625
  const bytes = safetensors({ w: { dtype: 'BF16', shape: [5], data: new Uint8Array(bf16.buffer) } });
  const device = new FakeDevice();
  const r32 = await ws.loadToWebGPU(device, bytes, { dtype: 'f32' });
  const f32 = new Float32Array(r32.tensors.w.buffer.data.buffer, 0, 5);
  assert.deepEqual([...new Uint32Array(f32.buffer, 0, 5)], [...bf16].map((h) => (h << 16) >>> 0));
  assert.equal(r32.tensors.w.dtype, 'f32');
  assert.equal(r32.tensors.w.byteLength, 20);
  const r16 = await ws.loadToWebGPU(device, bytes, { dtype: 'f16' });
  const e = r16.tensors.w;
  assert.equal(e.byteLength, 10);
  assert.equal(e.buffer.size, 12);
  // 1, -2, inf, 0 (9.2e-41 underflows f16), 3.140625 rounded to f16 (0x4248 = 3.140625 exactly).
  assert.deepEqual([...new Uint16Array(e.buffer.data.buffer, 0, 6)], [0x3C00, 0xC000, 0x7C00, 0x0000, 0x4248, 0]);
  assertClean(device);
});

test('maxBufferSize: a clear error before any data or buffer, or split: true over several buffers', async () => {
  const data = new Uint8Array(1000).map((_, i) => i);
  const bytes = safetensors({ small: { dtype: 'U8', shape: [8], data: data.subarray(0, 8) }, big: { dtype: 'F32', shape: [250], data } });
  const base = { ...wasm.live };
  const device = new FakeDevice({ maxBufferSize: 256 });
  await assert.rejects(ws.loadToWebGPU(device, bytes), (e) => {
    assert.ok(e instanceof ws.WeightstreamError);
    assert.equal(e.code, 'BufferTooLarge');
    assert.equal(e.tensor, 'big');
    assert.match(e.message, /^BufferTooLarge at byte \d+ in tensor "big": .*1000 bytes as F32; maxBufferSize is 256.*split: true/);
    return true;
  });
  assert.equal(device.buffers.length, 0, 'checked at the header: nothing created');
  assertNothingLive(device, base);

  const r = await ws.loadToWebGPU(device, streamOf(bytes, 13), { split: true });
  assertClean(device);
  const e = r.tensors.big;
  assert.equal(e.buffer, undefined);
  assert.equal(e.buffers.length, 4);
  assert.equal(e.pieceBytes, 256);
  assert.deepEqual(e.buffers.map((b) => b.size), [256, 256, 256, 232]);
  const joined = new Uint8Array(1000);
  e.buffers.forEach((b, i) => joined.set(b.data.subarray(0, Math.min(256, 1000 - i * 256)), i * 256));
  assert.deepEqual(joined, data);
  assert.ok(r.tensors.small.buffer);
});

test('filter: only the named tensors get buffers; a seekable source reads only their bytes', async () => {
  const big = new Uint8Array(16 << 20);
  const small = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  const bytes = safetensors({ big: { dtype: 'U8', shape: [big.length], data: big }, small: { dtype: 'U8', shape: [8], data: small } });
  const device = new FakeDevice();
  const seen = [];
  const r = await ws.loadToWebGPU(device, new Blob([bytes]), { filter: ['small'], onProgress: (p) => seen.push(p) });
  assert.deepEqual(Object.keys(r.tensors), ['small']);
  assert.equal(device.buffers.length, 1);
  assert.deepEqual(r.tensors.small.buffer.data, small);
  const last = seen[seen.length - 1];
  // The header (as far as the loader asks), then just the 8 bytes of `small`.
  assert.equal(last.bytes, bytes.length - big.length, `read ${last.bytes} bytes of ${bytes.length}`);
  assert.equal(last.totalBytes, last.bytes, 'the total is what the plan reads');
  assert.equal(last.tensors, 1);
  // The same through a stream (not seekable): everything is read, still one buffer.
  const device2 = new FakeDevice();
  const r2 = await ws.loadToWebGPU(device2, streamOf(bytes), { filter: (name) => name === 'small' });
  assert.deepEqual(Object.keys(r2.tensors), ['small']);
  assert.equal(device2.buffers.length, 1);
});

// A slow model stream whose pulls are counted, and whose cancellation is seen.
function slowModel(n, pieceBytes) {
  const tensors = {};
  for (let i = 0; i < n; i++) tensors[`t${i}`] = { dtype: 'U8', shape: [pieceBytes], data: new Uint8Array(pieceBytes).fill(i) };
  const bytes = safetensors(tensors);
  const state = { pulls: 0, cancelled: false };
  let at = 0;
  const stream = new ReadableStream({
    async pull(c) {
      state.pulls++;
      await new Promise((r) => setTimeout(r, 1));
      if (at >= bytes.length) { c.close(); return; }
      c.enqueue(bytes.slice(at, at + 4096));
      at += 4096;
    },
    cancel() { state.cancelled = true; },
  });
  return { stream, state, bytes };
}

test('abort mid-stream: rejects promptly with AbortError, destroys every buffer, releases the stream and wasm memory, no callbacks after', async () => {
  const base = { ...wasm.live };
  const { stream, state } = slowModel(16, 10000);
  const device = new FakeDevice();
  const controller = new AbortController();
  let callsAfterAbort = 0;
  let aborted = false;
  const p = ws.loadToWebGPU(device, stream, {
    signal: controller.signal,
    progressInterval: 0,
    onProgress: (pr) => {
      if (aborted) callsAfterAbort++;
      if (pr.tensors >= 3 && !aborted) { aborted = true; controller.abort(new Error('user cancelled')); }
    },
  });
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof ws.WeightstreamError);
    assert.equal(e.code, 'Aborted');
    assert.equal(e.name, 'AbortError');
    assert.equal(e.cause.message, 'user cancelled');
    return true;
  });
  assert.ok(aborted);
  assert.ok(device.buffers.length >= 3, `${device.buffers.length} buffers were created`);
  assertNothingLive(device, base);
  assert.equal(callsAfterAbort, 0);
  assert.ok(state.cancelled, 'the source stream was cancelled');
  const pulls = state.pulls;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(state.pulls, pulls, 'nothing is read after the abort');
});

test('abort while waiting for the network: a stalled read does not delay the abort', async () => {
  const base = { ...wasm.live };
  const bytes = safetensors({ a: { dtype: 'U8', shape: [100], data: new Uint8Array(100) } });
  let cancelled = false;
  const stream = new ReadableStream({
    start(c) { c.enqueue(bytes.subarray(0, 60)); },  // then nothing more, ever
    cancel() { cancelled = true; },
  });
  const device = new FakeDevice();
  const controller = new AbortController();
  const p = ws.loadToWebGPU(device, stream, { signal: controller.signal });
  setTimeout(() => controller.abort(), 30);
  const t0 = performance.now();
  await assert.rejects(p, { code: 'Aborted' });
  assert.ok(performance.now() - t0 < 1000);
  assert.ok(cancelled);
  assertNothingLive(device, base);
});

test('an already-aborted signal: nothing is read or created', async () => {
  const base = { ...wasm.live };
  const device = new FakeDevice();
  const bytes = realFile('basic_f32.safetensors');
  await assert.rejects(ws.loadToWebGPU(device, bytes, { signal: AbortSignal.abort() }), { code: 'Aborted' });
  assert.equal(device.buffers.length, 0);
  assertNothingLive(device, base);
});

test('an invalid file mid-way: buffers created before the error are destroyed, the error names the tensor', async () => {
  const base = { ...wasm.live };
  const bytes = safetensors({ a: { dtype: 'U8', shape: [16], data: new Uint8Array(16) }, b: { dtype: 'U8', shape: [16], data: new Uint8Array(16) } });
  const device = new FakeDevice();
  await assert.rejects(ws.loadToWebGPU(device, streamOf(bytes.subarray(0, bytes.length - 5))), (e) => {
    assert.equal(e.code, 'TruncatedData');
    assert.equal(e.tensor, 'b');
    assert.equal(e.offset, bytes.length - 5);
    assert.match(e.message, /was the download interrupted\?$/);
    return true;
  });
  assert.equal(device.buffers.length, 2);
  assertNothingLive(device, base);
});
