// URLs (a loopback server, with and without Range support) and sharded models
// (model.safetensors.index.json, from disk and over HTTP).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ws, safetensors, f32ToF16 } from './helpers.mjs';
import { serve } from './http-server.mjs';
import { FakeDevice } from './fake-gpu.mjs';

const wasm = await ws.init();
const fill = (n, seed) => new Uint8Array(n).map((_, i) => (i * 131 + seed * 17) & 0xFF);

// One 32 MiB tensor and a few small ones. Large next to what loopback sockets and the fetch
// stream buffer before a cancelled body stops (with 8 MiB that was about half of it, varying with
// the kernel's buffer sizing: the "only the selected bytes" check failed on some days).
function bigModel() {
  return safetensors({
    'model.big': { dtype: 'U8', shape: [32 << 20], data: fill(32 << 20, 1) },
    'model.norm': { dtype: 'F32', shape: [4], data: new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer) },
    'model.small': { dtype: 'U8', shape: [10], data: fill(10, 2) },
  });
}

test('a URL with Range support: a filter reads the header and only the selected bytes', async () => {
  const bytes = bigModel();
  const srv = await serve(new Map([['/m.safetensors', bytes]]));
  try {
    const device = new FakeDevice();
    const r = await ws.loadToWebGPU(device, `${srv.base}/m.safetensors`, { filter: ['model.small', 'model.norm'] });
    assert.deepEqual(Object.keys(r.tensors).sort(), ['model.norm', 'model.small']);
    assert.deepEqual(r.tensors['model.small'].buffer.data.subarray(0, 10), fill(10, 2));
    assert.ok(srv.stats.rangeRequests >= 2, 'the first request and the plan used ranges');
    // The first request's body is cancelled after the header; the tensors come by range.
    assert.ok(srv.stats.bytesSent < bytes.length / 2, `${srv.stats.bytesSent} of ${bytes.length} bytes sent`);
    const h = await ws.inspect(`${srv.base}/m.safetensors`);
    assert.equal(h.size, bytes.length);
    assert.equal(h.tensors.length, 3);
  } finally {
    await srv.close();
  }
});

test('a URL without Range support: the whole body streams, same tensors; HTTP errors are IoError', async () => {
  const bytes = bigModel();
  const srv = await serve(new Map([['/m.safetensors', bytes]]), { ranges: false });
  try {
    const device = new FakeDevice();
    const r = await ws.loadToWebGPU(device, new URL(`${srv.base}/m.safetensors`), { filter: ['model.small'] });
    assert.deepEqual(r.tensors['model.small'].buffer.data.subarray(0, 10), fill(10, 2));
    assert.equal(srv.stats.rangeRequests, 0);
    assert.deepEqual(await ws.validate(`${srv.base}/m.safetensors`), { valid: true, format: 'safetensors', tensors: 3, error: null, warnings: [] });
    const missing = await ws.validate(`${srv.base}/missing.safetensors`);
    assert.equal(missing.error.code, 'IoError');
    assert.match(missing.error.message, /HTTP 404 Not Found for http:\/\/127\.0\.0\.1:\d+\/missing\.safetensors/);
    // A Response works as a source too.
    const res = await fetch(`${srv.base}/m.safetensors`);
    assert.equal((await ws.inspect(res)).tensors.length, 3);
  } finally {
    await srv.close();
  }
});

// Three shards and their index, as save_pretrained writes them (weight_map sorted by name).
function shardedModel() {
  const shards = {
    'model-00001-of-00003.safetensors': { 'a.weight': fill(64, 1), 'b.weight': fill(32, 2) },
    'model-00002-of-00003.safetensors': { 'c.weight': fill(128, 3) },
    'model-00003-of-00003.safetensors': { 'd.weight': fill(16, 4), 'e.bias': fill(8, 5) },
  };
  const files = new Map();
  const weightMap = {};
  let total = 0;
  for (const [file, tensors] of Object.entries(shards)) {
    const t = {};
    for (const [name, data] of Object.entries(tensors)) { t[name] = { dtype: 'U8', shape: [data.length], data }; weightMap[name] = file; total += data.length; }
    files.set(file, safetensors(t));
  }
  const index = { metadata: { total_size: total }, weight_map: weightMap };
  return { files, index, shards };
}

function writeModel(dir, files, index) {
  for (const [f, b] of files) writeFileSync(join(dir, f), b);
  writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify(index));
  return join(dir, 'model.safetensors.index.json');
}

test('a sharded model from disk: every shard cross-checked, tensors from all shards', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-sharded-'));
  try {
    const { files, index, shards } = shardedModel();
    const path = writeModel(dir, files, index);
    assert.deepEqual(await ws.validate(path), { valid: true, format: 'safetensors', tensors: 5, error: null, warnings: [] });
    const h = await ws.inspect(path);
    assert.equal(h.sharded, true);
    assert.equal(h.shards.length, 3);
    assert.deepEqual(h.tensors.map((t) => `${t.shard}:${t.name}`).sort(), Object.entries(shards).flatMap(([f, t]) => Object.keys(t).map((n) => `${f}:${n}`)).sort());
    for (const dtype of ['raw', 'f32']) {
      const base = { ...wasm.live };
      const device = new FakeDevice();
      const r = await ws.loadToWebGPU(device, path, { dtype });
      assert.deepEqual(r.metadata, { total_size: 248 });
      for (const [file, tensors] of Object.entries(shards)) {
        for (const [name, data] of Object.entries(tensors)) {
          assert.equal(r.tensors[name].shard, file);
          assert.deepEqual(r.tensors[name].buffer.data.subarray(0, data.length), data, name);
        }
      }
      assert.deepEqual(wasm.live, base);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sharded models that do not add up: the index names a tensor another shard holds, a missing shard, an unsafe shard path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-sharded-'));
  try {
    const { files, index } = shardedModel();
    const wrong = { ...index, weight_map: { ...index.weight_map, 'b.weight': 'model-00003-of-00003.safetensors' } };
    const path = writeModel(dir, files, wrong);
    const r = await ws.validate(path);
    assert.equal(r.valid, false);
    assert.equal(r.error.code, 'ShardTensorWrongShard');
    assert.equal(r.error.shard, 'model-00001-of-00003.safetensors');
    assert.equal(r.error.tensor, 'b.weight');
    assert.match(r.error.message, /of model-00001-of-00003\.safetensors in tensor "b\.weight": .*\(the index places it in model-00003-of-00003\.safetensors\)/);
    const device = new FakeDevice();
    await assert.rejects(ws.loadToWebGPU(device, path), { code: 'ShardTensorWrongShard' });
    assert.deepEqual(device.live(), []);

    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { ...index.weight_map, 'x.weight': 'model-00004-of-00003.safetensors' } }));
    const missing = await ws.validate(path);
    assert.equal(missing.error.code, 'IoError');
    assert.equal(missing.error.shard, 'model-00004-of-00003.safetensors');
    assert.match(missing.error.message, /^IoError at byte 0 of model-00004-of-00003\.safetensors: .*The index names this shard: is the download complete\?$/);

    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { 'a.weight': '../secret.safetensors' } }));
    const unsafe = await ws.validate(path);
    assert.equal(unsafe.error.code, 'UnsafeShardPath');
    assert.match(unsafe.error.message, /"\.\.\/secret\.safetensors"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sharded model over HTTP: index, then every shard; progress adds up (the index is read too)', async () => {
  const { files, index } = shardedModel();
  const map = new Map([...files].map(([f, b]) => [`/repo/${f}`, b]));
  map.set('/repo/model.safetensors.index.json', new TextEncoder().encode(JSON.stringify(index)));
  const srv = await serve(map);
  try {
    const events = [];
    for await (const ev of ws.createReader({ progressInterval: 0 }).read(`${srv.base}/repo/model.safetensors.index.json`)) events.push(ev);
    const headers = events.filter((e) => e.type === 'header');
    assert.deepEqual(headers.map((e) => e.shard).sort(), [...files.keys()]);
    assert.equal(events.filter((e) => e.type === 'tensorEnd').length, 5);
    const end = events[events.length - 1];
    assert.equal(end.type, 'end');
    assert.deepEqual(end.index.shards, [...files.keys()]);
    const lastProgress = events.filter((e) => e.type === 'progress').pop();
    const shardBytes = [...files.values()].reduce((s, b) => s + b.length, 0);
    const indexBytes = map.get('/repo/model.safetensors.index.json').length;
    assert.equal(lastProgress.bytes, indexBytes + shardBytes);
    assert.equal(lastProgress.totalBytes, indexBytes + shardBytes);
    assert.equal(lastProgress.tensors, 5);
  } finally {
    await srv.close();
  }
});

test('loadToWebGPU of two shards: each tensor lands in its own buffer, the shards read one after the other', async () => {
  // Two shards of one 1 MiB F32 tensor each, arriving over HTTP in 64 KiB writes: the loader reads
  // the model's files in order (the 'concurrency' option of the earlier pipeline is gone).
  const n = 262144;
  const a = new Float32Array(n).map((_, i) => i), b = new Float32Array(n).map((_, i) => -i);
  const files = new Map([
    ['/m/model-00001-of-00002.safetensors', safetensors({ a: { dtype: 'F32', shape: [n], data: new Uint8Array(a.buffer) } })],
    ['/m/model-00002-of-00002.safetensors', safetensors({ b: { dtype: 'F32', shape: [n], data: new Uint8Array(b.buffer) } })],
  ]);
  files.set('/m/model.safetensors.index.json', new TextEncoder().encode(JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } })));
  const srv = await serve(files);
  try {
    for (const dtype of ['raw', 'f32', 'f16']) {
      const device = new FakeDevice();
      const order = [];
      for await (const ev of ws.createReader({ dtype, chunkSize: 4096 }).read(`${srv.base}/m/model.safetensors.index.json`)) if (ev.type === 'tensorData') order.push(ev.tensor.name);
      assert.ok(order.lastIndexOf('a') < order.indexOf('b'), `${dtype}: a's pieces, then b's`);
      const model = await ws.loadToWebGPU(device, `${srv.base}/m/model.safetensors.index.json`, { dtype, chunkSize: 4096 });
      const want = dtype === 'f16' ? (x) => new Uint8Array(new Uint16Array([...x].map((v) => f32ToF16(v))).buffer) : (x) => new Uint8Array(x.buffer);
      assert.deepEqual(model.tensors.a.buffer.data, want(a), `${dtype}: a`);
      assert.deepEqual(model.tensors.b.buffer.data, want(b), `${dtype}: b`);
      model.destroy();
    }
  } finally {
    await srv.close();
  }
});
