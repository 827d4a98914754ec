// plan()'s checks of the environment (issue #31, storage-checks.mjs): the origin's free storage
// (navigator.storage.estimate(), here a stub) against the bytes a cached load (cache: 'opfs') would
// write, whether that storage is persistent, and shader-f16 for an f16 plan; each a warning with a
// fix. And persist(): every outcome. The cache is the in-memory OPFS of fake-opfs.mjs, the model
// served over loopback HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ws, repo } from './helpers.mjs';
import { FakeDir } from './fake-opfs.mjs';
import { serve } from './http-server.mjs';

const model = readFileSync(join(repo, 'samples', 'tiny-llama.safetensors'));
const storageStub = ({ quota, usage, persisted = true, persist = null, throws = null }) => {
  const calls = { estimate: 0, persisted: 0, persist: 0 };
  return {
    calls,
    async estimate() { calls.estimate++; return { quota, usage }; },
    async persisted() { calls.persisted++; if (throws) throw throws; return persisted; },
    async persist() { calls.persist++; if (throws) throw throws; return persist; },
  };
};

test('plan(cache: opfs): the bytes the load would write against the stubbed estimate; a warning with a fix when they do not fit', async () => {
  const srv = await serve(new Map([['/m.safetensors', model]]), { etag: true });  // an entry is reused when its ETag matches
  try {
    const url = `${srv.base}/m.safetensors`;
    const cacheRoot = new FakeDir();
    // Room for the model: no warning; the figures are the estimate's and the cache's.
    const roomy = storageStub({ quota: 10e9, usage: 1e9 });
    const p = await ws.plan(url, { cache: 'opfs', cacheRoot, storage: roomy });
    assert.equal(p.readBytes, model.length);
    const cachedNow = (await ws.cacheInfo({ cacheRoot }))[0]?.bytesCached ?? 0;  // plan's header read went through the cache
    assert.deepEqual(p.storage, { quota: 10e9, usage: 1e9, available: 9e9, cacheWrite: model.length - cachedNow, cached: cachedNow, persisted: true });
    assert.deepEqual(p.warnings, []);
    assert.equal(roomy.calls.estimate, 1);

    // 1,000 bytes left: the warning says how much would be written and what is left, and the fix.
    const small = storageStub({ quota: 50000, usage: 49000 });
    const q = await ws.plan(url, { cache: 'opfs', cacheRoot, storage: small });
    const cached = (await ws.cacheInfo({ cacheRoot }))[0].bytesCached;
    assert.equal(q.storage.cacheWrite, model.length - cached);
    assert.ok(q.storage.cacheWrite > 1000);
    assert.equal(q.warnings.length, 1);
    const w = q.warnings[0];
    assert.equal(w.code, 'StorageQuota');
    assert.equal(w.message, `the cache would write ${((model.length - cached) / 1e6).toFixed(2)} MB but the origin has 0.00 MB of storage left (quota 0.05 MB, used 0.05 MB): the load would turn the cache off part-way (QuotaExceeded)`);
    assert.match(w.fix, /smaller quantization/);
    assert.match(w.fix, /cache: false/);

    // Once the whole model is cached, a load writes nothing: no warning however small the quota.
    const v = await ws.validate(url, { cache: 'opfs', cacheRoot });
    assert.equal(v.valid, true);
    assert.equal((await ws.cacheInfo({ cacheRoot }))[0].complete, true);
    const r = await ws.plan(url, { cache: 'opfs', cacheRoot, storage: storageStub({ quota: 10, usage: 10 }) });
    assert.deepEqual([r.storage.cacheWrite, r.storage.cached, r.storage.available], [0, model.length, 0]);
    assert.deepEqual(r.warnings, []);

    // Not persisted: a warning that says what persist() is for.
    const e = await ws.plan(url, { cache: 'opfs', cacheRoot, storage: storageStub({ quota: 10e9, usage: 0, persisted: false }) });
    assert.deepEqual(e.warnings.map((x) => x.code), ['StorageNotPersisted']);
    assert.match(e.warnings[0].fix, /persist\(\)/);
    assert.equal(e.storage.persisted, false);

    // Without the cache, or without a StorageManager (Node), nothing is checked.
    const off = await ws.plan(url, { storage: storageStub({ quota: 10, usage: 10 }) });
    assert.deepEqual([off.storage, off.warnings], [null, []]);
    const none = await ws.plan(url, { cache: 'opfs', cacheRoot });
    assert.deepEqual([none.storage, none.warnings], [null, []]);
  } finally {
    await srv.close();
  }
});

test('plan(cache: opfs) of a local file: nothing is cached, nothing is checked', async () => {
  const p = await ws.plan(join(repo, 'samples', 'tiny-llama.safetensors'), { cache: 'opfs', storage: storageStub({ quota: 10, usage: 10 }) });
  assert.deepEqual([p.storage, p.warnings], [null, []]);
});

test('plan(dtype: f16) on a device without shader-f16: a warning; with it, or for f32, none', async () => {
  const file = join(repo, 'samples', 'tiny-llama.safetensors');
  const device = (features) => ({ limits: { maxBufferSize: 1 << 28, maxStorageBufferBindingSize: 1 << 27 }, features: new Set(features) });
  const without = await ws.plan(file, { dtype: 'f16', device: device([]) });
  assert.deepEqual(without.warnings.map((w) => w.code), ['NoShaderF16']);
  assert.equal(without.warnings[0].message, 'the device lacks the shader-f16 feature: WGSL shaders cannot read the f16 buffers (enable f16;)');
  assert.match(without.warnings[0].fix, /requiredFeatures: \['shader-f16'\]/);
  // The adapter has it: request it. The adapter lacks it too: f32 is the way.
  const adapterHas = await ws.plan(file, { dtype: 'f16', device: device([]), adapter: { features: new Set(['shader-f16']) } });
  assert.match(adapterHas.warnings[0].message, /though its adapter has it$/);
  const adapterLacks = await ws.plan(file, { dtype: 'f16', device: device([]), adapter: { features: new Set() } });
  assert.match(adapterLacks.warnings[0].message, /and its adapter does not have it$/);
  assert.match(adapterLacks.warnings[0].fix, /^load dtype 'f32'/);
  assert.deepEqual((await ws.plan(file, { dtype: 'f16', device: device(['shader-f16']) })).warnings, []);
  assert.deepEqual((await ws.plan(file, { dtype: 'f32', device: device([]) })).warnings, []);
  assert.deepEqual((await ws.plan(file, { dtype: 'f16' })).warnings, []);  // no device: nothing to check
});

test('persist(): already, granted, denied, unsupported, error — each reported, none thrown', async () => {
  const already = storageStub({ persisted: true, persist: true });
  assert.deepEqual(await ws.persist({ storage: already }), { persisted: true, outcome: 'already', message: "the origin's storage is persistent already: the browser evicts it only when the user clears it" });
  assert.equal(already.calls.persist, 0);
  const granted = storageStub({ persisted: false, persist: true });
  assert.deepEqual([(await ws.persist({ storage: granted })).outcome, granted.calls.persist], ['granted', 1]);
  const denied = await ws.persist({ storage: storageStub({ persisted: false, persist: false }) });
  assert.deepEqual([denied.persisted, denied.outcome], [false, 'denied']);
  assert.match(denied.message, /Safari removes site data unused for 7 days/);
  assert.deepEqual([(await ws.persist({ storage: {} })).outcome, (await ws.persist()).outcome], ['unsupported', 'unsupported']);
  const error = await ws.persist({ storage: storageStub({ throws: new DOMException('no', 'InvalidStateError') }) });
  assert.deepEqual([error.persisted, error.outcome, error.message], [false, 'error', 'navigator.storage.persist() failed: InvalidStateError: no']);
});
