// weightstream/worker (wasm/js/worker.mjs): loadInWorker() and serveLoads() over a MessageChannel
// (the two ends of a Worker), with the fake GPU device: the model crosses without its buffers,
// progress and cache events are forwarded, errors keep their fields, abort destroys what was made,
// functions are refused before anything is posted. (The real Worker + WebGPU: web/test.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repo, testdata, ws } from './helpers.mjs';
import { FakeDevice } from './fake-gpu.mjs';
import { serve } from './http-server.mjs';

const workerModule = await import(pathToFileURL(join(repo, 'wasm', 'dist', 'worker.mjs')).href);
const { loadInWorker, serveLoads } = workerModule;
const sample = join(testdata, 'real', 'safetensors', 'dtypes.safetensors');

// Both ends: `main` is what the page holds (the Worker), `scope` the worker's global scope.
function channel() {
  const { port1, port2 } = new MessageChannel();
  port1.start();
  port2.start();
  return { main: port1, scope: port2, close() { port1.close(); port2.close(); } };
}

test('worker.d.ts names exactly the module\'s exports; package.json exports ./worker', () => {
  const dts = readFileSync(join(repo, 'wasm', 'types', 'worker.d.ts'), 'utf8');
  const declared = [...dts.matchAll(/^export declare function (\w+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(declared, Object.keys(workerModule).sort());
  const pkg = JSON.parse(readFileSync(join(repo, 'wasm', 'package.json'), 'utf8'));
  assert.deepEqual(pkg.exports['./worker'], { types: './dist/worker.d.ts', default: './dist/worker.mjs' });
});

test('a load in the worker: the description crosses, the buffers stay; progress forwarded; destroy', async () => {
  const ch = channel();
  const device = new FakeDevice();
  const loads = serveLoads({ device: () => device, scope: ch.scope });
  const bytes = readFileSync(sample);
  const srv = await serve(new Map([['/m.safetensors', bytes]]), { headers: new Map([['/m.safetensors', { ETag: '"a"' }]]) });
  try {
    const progress = [];
    const m = await loadInWorker(ch.main, `${srv.base}/m.safetensors`, { dtype: 'f32', progressInterval: 0, onProgress: (p) => progress.push(p) });
    const local = await ws.loadToWebGPU(new FakeDevice(), sample, { dtype: 'f32' });
    assert.deepEqual(Object.keys(m.tensors).sort(), Object.keys(local.tensors).sort());
    for (const [name, t] of Object.entries(local.tensors)) {
      const r = m.tensors[name];
      assert.equal(r.buffer, undefined);
      assert.equal(r.buffers, 1);
      assert.deepEqual([r.dtype, r.shape, r.byteLength], [t.dtype, t.shape, t.byteLength], name);
      const there = loads.models.get(m.id).tensors[name].buffer;
      assert.deepEqual(there.data.subarray(0, t.byteLength), t.buffer.data.subarray(0, t.byteLength), name);
    }
    assert.equal(m.bytes, bytes.length);
    assert.ok(progress.length >= 1 && progress.at(-1).bytes === bytes.length, JSON.stringify(progress.at(-1)));
    const live = device.live().length;
    assert.ok(live > 0);
    m.destroy();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(device.live().length, 0);
    assert.equal(loads.models.size, 0);

    // The cache's events cross too (in Node the worker has no OPFS: the warning).
    const seen = [];
    await loadInWorker(ch.main, `${srv.base}/m.safetensors`, { cache: 'opfs', onProgress: (p) => { if (p.type) seen.push(p.type + ':' + (p.state ?? p.code)); } })
      .catch((e) => assert.fail(e));
    assert.deepEqual(seen, ['cache-warning:CacheUnavailable']);
  } finally {
    await srv.close();
    ch.close();
  }
});

test('errors keep code, offset, tensor and message; misuse is a TypeError; abort destroys every buffer', async () => {
  const ch = channel();
  const device = new FakeDevice();
  serveLoads({ device, scope: ch.scope });
  try {
    const bad = readFileSync(join(repo, 'tests', 'corpus', 'safetensors', 'data_truncated_mid_tensor.safetensors'));
    await assert.rejects(loadInWorker(ch.main, new Uint8Array(bad)), (e) => {
      assert.ok(e instanceof ws.WeightstreamError);
      assert.equal(e.code, 'TruncatedData');
      assert.equal(typeof e.offset, 'number');
      assert.match(e.message, /^TruncatedData at byte/);
      return true;
    });
    assert.throws(() => loadInWorker(ch.main, 'x.safetensors', { filter: () => true }), TypeError);
    assert.throws(() => loadInWorker(ch.main, { index: 'a.index.json', shards: () => null }), TypeError);
    await assert.rejects(loadInWorker(ch.main, 'x.safetensors', { dtype: 'f64' }), TypeError);

    // A throttled stream of a big model, aborted once buffers exist.
    let json = JSON.stringify({ a: { dtype: 'U8', shape: [4 * 1048576], data_offsets: [0, 4 * 1048576] }, b: { dtype: 'U8', shape: [4 * 1048576], data_offsets: [4 * 1048576, 8 * 1048576] } });
    json = json.padEnd(Math.ceil(json.length / 8) * 8, ' ');
    const big = Buffer.alloc(8 + json.length + 8 * 1048576);
    big.writeBigUInt64LE(BigInt(json.length), 0);
    big.write(json, 8, 'latin1');
    let at = 0;
    const stream = new ReadableStream({
      async pull(c) {
        if (at >= big.length) { c.close(); return; }
        await new Promise((r) => setTimeout(r, 5));
        c.enqueue(new Uint8Array(big.subarray(at, at + 65536)));
        at += 65536;
      },
    });
    const controller = new AbortController();
    const p = loadInWorker(ch.main, stream, { signal: controller.signal, onProgress: () => { if (device.buffers.length && !controller.signal.aborted) controller.abort(new Error('stop')); }, progressInterval: 0 });
    await assert.rejects(p, (e) => e.code === 'Aborted' && e.name === 'AbortError');
    assert.ok(device.buffers.length >= 1);
    assert.equal(device.live().length, 0, 'every buffer destroyed before the promise settles');
  } finally {
    ch.close();
  }
});
