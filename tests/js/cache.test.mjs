// The persistent cache (cache: 'opfs', wasm/js/opfs-cache.mjs) against an in-memory OPFS
// (fake-opfs.mjs: a worker's sync access handles, or the main thread's createWritable) and a
// loopback server that logs every request's range and the bytes it sent: extents merge, a second
// load sends no tensor bytes, an interrupted load resumes with the missing ranges only, an ETag
// change invalidates, quota failures never fail a load, cacheInfo() and evict().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { ws, decodeAll } from './helpers.mjs';
import { FakeDir } from './fake-opfs.mjs';
import { addExtent, segments, coveredBytes } from '../../wasm/js/opfs-cache.mjs';

// A safetensors file of `n` U8 tensors of `each` bytes, byte i of tensor t = (i * 7 + t * 13) & 255.
function model(n = 6, each = 300000, seed = 0) {
  const h = {};
  for (let t = 0; t < n; t++) h[`t${t}`] = { dtype: 'U8', shape: [each], data_offsets: [t * each, (t + 1) * each] };
  let json = JSON.stringify(h);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const out = Buffer.alloc(8 + json.length + n * each);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  out.write(json, 8, 'latin1');
  const d = 8 + json.length;
  for (let t = 0; t < n; t++) for (let i = 0; i < each; i++) out[d + t * each + i] = (i * 7 + t * 13 + seed) & 255;
  return out;
}

// path -> {body, etag}; log: {range, status, sent}; cut: close the connection after that many body
// bytes of the next GET with a body; onRequest(req) runs first.
async function server(files) {
  const s = { log: [], cut: null, onRequest: null, sent: () => s.log.reduce((a, r) => a + r.sent, 0) };
  const srv = createServer((req, res) => {
    s.onRequest?.(req);
    const f = files.get(new URL(req.url, 'http://x').pathname);
    const entry = { path: new URL(req.url, 'http://x').pathname, range: req.headers.range ?? null, ifRange: req.headers['if-range'] ?? null, status: 0, sent: 0 };
    s.log.push(entry);
    if (!f) { entry.status = 404; res.writeHead(404).end(); return; }
    const body = f.body;
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    let start = 0, end = body.length;
    const headers = { ETag: f.etag, 'Accept-Ranges': 'bytes' };
    if (m) {
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]) + 1, body.length) : body.length;
      entry.status = 206;
      res.writeHead(206, { ...headers, 'Content-Range': `bytes ${start}-${end - 1}/${body.length}`, 'Content-Length': end - start });
    } else {
      entry.status = 200;
      res.writeHead(200, { ...headers, 'Content-Length': body.length });
    }
    let at = start;
    const cut = s.cut;
    if (cut !== null && end - start > 1) s.cut = null;
    const pump = () => {
      while (at < end) {
        let n = Math.min(65536, end - at);
        if (cut !== null && end - start > 1) {
          if (entry.sent >= cut) { res.destroy(); return; }
          n = Math.min(n, cut - entry.sent);
        }
        const chunk = body.subarray(at, at + n);
        at += n;
        entry.sent += n;
        if (!res.write(chunk)) { res.once('drain', pump); return; }
      }
      res.end();
    };
    res.on('close', () => { at = end; });
    pump();
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  s.base = `http://127.0.0.1:${srv.address().port}`;
  s.close = () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); });
  return s;
}

const sha = (b) => createHash('sha256').update(b).digest('hex');

// createReader raw over the URL: every tensor's bytes, and the cache's events.
async function read(url, options) {
  const events = [];
  const out = await decodeAll(url, { dtype: 'raw', ...options, onProgress: (p) => { if (p.type) events.push(p); } });
  return { out, events, cache: events.filter((e) => e.type === 'cache'), warnings: events.filter((e) => e.type === 'cache-warning') };
}
function sameTensors(out, file) {
  const n = Number(file.readBigUInt64LE(0));
  const h = JSON.parse(file.subarray(8, 8 + n).toString('latin1'));
  assert.equal(out.size, Object.keys(h).length);
  for (const [name, t] of Object.entries(h)) {
    const want = file.subarray(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
    assert.equal(sha(out.get(name).bytes), sha(want), name);
  }
}
// The entry's .bin agrees with the file wherever its metadata says it holds bytes.
function entryConsistent(root, file) {
  const files = root.files();
  const metaName = [...files.keys()].find((k) => k.endsWith('.json'));
  const meta = JSON.parse(new TextDecoder().decode(files.get(metaName).bytes));
  const bin = files.get(metaName.replace(/\.json$/, '.bin')).bytes;
  for (const [a, b] of meta.extents) assert.equal(sha(bin.subarray(a, b)), sha(file.subarray(a, b)), `extent ${a}-${b}`);
  return meta;
}
// Reads until `bytes` were handed on, then stops (the loop's break closes every source).
async function readSome(url, options, bytes) {
  let got = 0;
  for await (const ev of ws.createReader({ dtype: 'raw', ...options }).read(url)) {
    if (ev.type === 'tensorData') { got += ev.data.length; if (got >= bytes) break; }
  }
}

test('extents: merged, sorted, half-open; a range cut into cached and missing pieces', () => {
  let e = [];
  e = addExtent(e, 10, 20);
  e = addExtent(e, 30, 40);
  assert.deepEqual(e, [[10, 20], [30, 40]]);
  assert.deepEqual(addExtent(e, 20, 30), [[10, 40]]);          // adjacent on both sides
  assert.deepEqual(addExtent(e, 0, 5), [[0, 5], [10, 20], [30, 40]]);
  assert.deepEqual(addExtent(e, 15, 35), [[10, 40]]);          // overlapping both
  assert.deepEqual(addExtent(e, 50, 60), [[10, 20], [30, 40], [50, 60]]);
  assert.deepEqual(addExtent(e, 5, 45), [[5, 45]]);            // covering both
  assert.deepEqual(addExtent(e, 12, 18), e);                    // inside
  assert.deepEqual(addExtent(e, 7, 7), e);                      // empty
  assert.equal(coveredBytes([[5, 45], [50, 60]]), 50);
  assert.deepEqual(segments([[10, 20], [30, 40]], 0, 50), [[0, 10, false], [10, 20, true], [20, 30, false], [30, 40, true], [40, 50, false]]);
  assert.deepEqual(segments([[10, 20], [30, 40]], 15, 35), [[15, 20, true], [20, 30, false], [30, 35, true]]);
  assert.deepEqual(segments([], 3, 9), [[3, 9, false]]);
  assert.deepEqual(segments([[0, 100]], 3, 9), [[3, 9, true]]);
});

for (const sync of [true, false]) {
  const where = sync ? 'worker (sync access handles)' : 'main thread (createWritable)';

  test(`${where}: a second load sends no tensor bytes; cacheInfo; evict`, async () => {
    const file = model();
    const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
    const root = new FakeDir({ sync });
    const url = `${s.base}/m.safetensors`;
    try {
      const first = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(first.out, file);
      assert.deepEqual(first.cache.map((e) => [e.state, e.size, e.cachedBytes]), [['miss', file.length, 0]]);
      assert.equal(first.warnings.length, 0);
      const info = await ws.cacheInfo({ cacheRoot: root });
      assert.equal(info.length, 1);
      assert.deepEqual({ ...info[0], lastUsed: typeof info[0].lastUsed }, {
        url, size: file.length, bytesCached: file.length, extents: [[0, file.length]], complete: true, etag: '"v1"', lastModified: null, sha256: null, lastUsed: 'number',
      });
      entryConsistent(root, file);
      assert.ok(root.log.some((w) => w.via === (sync ? 'sync' : 'writable')));

      s.log.length = 0;
      const second = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(second.out, file);
      assert.deepEqual(second.cache.map((e) => e.state), ['hit']);
      // One request: byte 0, to see that the server's file is still the entry's.
      assert.deepEqual(s.log.map((r) => [r.range, r.sent]), [['bytes=0-0', 1]]);

      // A filtered load, and validate/inspect, read from the cache too.
      s.log.length = 0;
      const one = await read(url, { cache: 'opfs', cacheRoot: root, filter: ['t3'] });
      assert.deepEqual([...one.out.keys()], ['t3']);
      assert.equal((await ws.validate(url, { cache: 'opfs', cacheRoot: root })).valid, true);
      assert.equal((await ws.inspect(url, { cache: 'opfs', cacheRoot: root })).tensors.length, 6);
      assert.equal(s.sent(), 3, JSON.stringify(s.log));

      assert.equal(await ws.evict(`${s.base}/other.safetensors`, { cacheRoot: root }), 0);
      assert.equal(await ws.evict(url, { cacheRoot: root }), 1);
      assert.deepEqual(await ws.cacheInfo({ cacheRoot: root }), []);
      assert.equal(root.files().size, 0);
      await read(url, { cache: 'opfs', cacheRoot: root });
      assert.equal(await ws.evict({ cacheRoot: root }), 1);
      assert.deepEqual(await ws.cacheInfo({ cacheRoot: root }), []);
    } finally {
      await s.close();
    }
  });

  test(`${where}: an interrupted load leaves a partial entry; the next load requests only the missing ranges`, async () => {
    const file = model();
    const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
    const root = new FakeDir({ sync });
    const url = `${s.base}/m.safetensors`;
    try {
      // Stopped by the caller after ~2 of 6 tensors.
      await readSome(url, { cache: 'opfs', cacheRoot: root }, 2 * 300000);
      let info = (await ws.cacheInfo({ cacheRoot: root }))[0];
      assert.equal(info.complete, false);
      assert.ok(info.bytesCached >= 2 * 300000 && info.bytesCached < file.length, JSON.stringify(info));
      const meta = entryConsistent(root, file);
      assert.equal(meta.extents.length, 1);
      assert.equal(meta.extents[0][0], 0);

      // Cut by the server mid-body (retries: 0: no resume inside the load).
      s.log.length = 0;
      s.cut = 400000;
      await assert.rejects(read(url, { cache: 'opfs', cacheRoot: root, retries: 0 }), (e) => e.code === 'IoError' || e.code === 'TruncatedData');
      const before = (await ws.cacheInfo({ cacheRoot: root }))[0].bytesCached;
      assert.ok(before > info.bytesCached && before < file.length, `${info.bytesCached} -> ${before}`);
      const cachedEnd = entryConsistent(root, file).extents[0][1];

      s.log.length = 0;
      const done = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(done.out, file);
      assert.deepEqual(done.cache.map((e) => [e.state, e.cachedBytes]), [['partial', before]]);
      // The probe, then exactly the missing bytes.
      assert.deepEqual(s.log.map((r) => r.range), ['bytes=0-0', `bytes=${cachedEnd}-${file.length - 1}`]);
      assert.equal(s.sent(), 1 + file.length - before);
      info = (await ws.cacheInfo({ cacheRoot: root }))[0];
      assert.equal(info.complete, true);
      assert.equal(info.bytesCached, file.length);
      entryConsistent(root, file);
    } finally {
      await s.close();
    }
  });

  test(`${where}: a hole in the middle (a filtered load) is filled by a closed range`, async () => {
    const file = model();
    const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
    const root = new FakeDir({ sync });
    const url = `${s.base}/m.safetensors`;
    try {
      const a = await read(url, { cache: 'opfs', cacheRoot: root, filter: ['t1', 't4'], rangeGap: 0 });
      assert.deepEqual([...a.out.keys()].sort(), ['t1', 't4']);
      const meta = entryConsistent(root, file);
      assert.ok(meta.extents.length >= 2, JSON.stringify(meta.extents));
      s.log.length = 0;
      const all = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(all.out, file);
      assert.ok(s.log.slice(1).every((r) => /^bytes=\d+-\d+$/.test(r.range)), JSON.stringify(s.log));
      assert.equal(s.sent(), 1 + file.length - coveredBytes(meta.extents));
      assert.equal((await ws.cacheInfo({ cacheRoot: root }))[0].complete, true);
    } finally {
      await s.close();
    }
  });

  test(`${where}: a changed ETag invalidates the entry; a change in the middle of a load is an error, never mixed bytes`, async () => {
    const v1 = model(), v2 = model(6, 300000, 99);
    const files = new Map([['/m.safetensors', { body: v1, etag: '"v1"' }]]);
    const s = await server(files);
    const root = new FakeDir({ sync });
    const url = `${s.base}/m.safetensors`;
    try {
      await read(url, { cache: 'opfs', cacheRoot: root });
      files.set('/m.safetensors', { body: v2, etag: '"v2"' });
      s.log.length = 0;
      const again = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(again.out, v2);
      assert.deepEqual(again.cache.map((e) => e.state), ['stale']);
      assert.equal(s.sent(), 1 + v2.length);
      assert.equal((await ws.cacheInfo({ cacheRoot: root }))[0].etag, '"v2"');

      // A partial v2 entry; the file changes between the probe and the missing range.
      await ws.evict(url, { cacheRoot: root });
      await readSome(url, { cache: 'opfs', cacheRoot: root }, 300000);
      let n = 0;
      s.onRequest = () => { if (++n === 2) files.set('/m.safetensors', { body: v1, etag: '"v3"' }); };
      await assert.rejects(read(url, { cache: 'opfs', cacheRoot: root }), (e) => e.code === 'IoError' && /changed on the server/.test(e.message) && /"v2" -> "v3"/.test(e.message));
      s.onRequest = null;
      assert.deepEqual(await ws.cacheInfo({ cacheRoot: root }), [], 'the entry is discarded');
      const fresh = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(fresh.out, v1);
    } finally {
      await s.close();
    }
  });

  test(`${where}: QuotaExceededError turns the cache off for the load with a cache-warning; the data is right`, async () => {
    const file = model();
    const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
    const root = new FakeDir({ sync, quota: 700000 });
    const url = `${s.base}/m.safetensors`;
    try {
      const r = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(r.out, file);
      assert.deepEqual(r.warnings.map((w) => w.code), ['QuotaExceeded']);
      assert.match(r.warnings[0].message, /quota/);
      assert.equal(r.warnings[0].url, url);
      const info = (await ws.cacheInfo({ cacheRoot: root }))[0];
      assert.equal(info.complete, false);
      assert.ok(info.bytesCached <= 700000);
      entryConsistent(root, file);
      // The next load uses what is there and warns again when it runs out.
      const again = await read(url, { cache: 'opfs', cacheRoot: root });
      sameTensors(again.out, file);
      assert.deepEqual(again.cache.map((e) => [e.state, e.cachedBytes]), [['partial', info.bytesCached]]);
      // loadToWebGPU and createReader's own event stream carry the warning too.
      const seen = [];
      for await (const ev of ws.createReader({ cache: 'opfs', cacheRoot: new FakeDir({ sync, quota: 1000 }) }).read(url)) if (ev.type.startsWith('cache')) seen.push(ev.type);
      assert.deepEqual(seen, ['cache', 'cache-warning']);
    } finally {
      await s.close();
    }
  });
}

test('a complete entry whose SHA-256 the caller gives is read without any request (quantization: false: no config.json looked for)', async () => {
  const file = model();
  const digest = sha(file);
  const s = await server(new Map([['/m.safetensors', { body: file, etag: `"${digest}"` }]]));
  const root = new FakeDir();
  const url = `${s.base}/m.safetensors`;
  try {
    await read(url, { cache: 'opfs', cacheRoot: root });
    assert.equal((await ws.cacheInfo({ cacheRoot: root }))[0].sha256, digest);  // the ETag's digest
    s.log.length = 0;
    const r = await read(url, { cache: 'opfs', cacheRoot: root, sha256: digest });
    sameTensors(r.out, file);
    assert.deepEqual(s.log, []);
    // Decoding (validate, f32, f16) reads the config.json beside the URL, as the CLI does (none
    // there is fine); quantization: false says there is none, and nothing is requested.
    assert.equal((await ws.validate(url, { cache: 'opfs', cacheRoot: root, sha256: digest })).valid, true);
    assert.deepEqual(s.log.map((l) => [l.path, l.range, l.status]), [['/config.json', 'bytes=0-', 404]]);
    s.log.length = 0;
    assert.equal((await ws.validate(url, { cache: 'opfs', cacheRoot: root, sha256: digest, quantization: false })).valid, true);
    assert.deepEqual(s.log, []);
    // A wrong digest is not a match: the server is asked, and the loader's check fails the file.
    s.log.length = 0;
    const bad = await ws.validate(url, { cache: 'opfs', cacheRoot: root, sha256: '0'.repeat(64), quantization: false });
    assert.equal(bad.error?.code, 'DigestMismatch');
    assert.equal(s.log.length, 1);
  } finally {
    await s.close();
  }
});

test('no OPFS (Node without cacheRoot): a cache-warning, and the load goes on from the network; a bad cache value is a TypeError', async () => {
  const file = model(2, 1000);
  const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
  try {
    const r = await read(`${s.base}/m.safetensors`, { cache: 'opfs' });
    sameTensors(r.out, file);
    assert.deepEqual(r.warnings.map((w) => w.code), ['CacheUnavailable']);
    assert.deepEqual(await ws.cacheInfo(), []);
    assert.equal(await ws.evict(), 0);
    await assert.rejects(ws.validate(`${s.base}/m.safetensors`, { cache: 'indexeddb' }), TypeError);
    await assert.rejects(read(`${s.base}/m.safetensors`, { cache: true }), TypeError);
  } finally {
    await s.close();
  }
});

test('a worker entry held by another load: CacheBusy, read from the network', async () => {
  const file = model(2, 1000);
  const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
  const root = new FakeDir({ sync: true });
  const url = `${s.base}/m.safetensors`;
  try {
    const it = ws.createReader({ dtype: 'raw', cache: 'opfs', cacheRoot: root }).read(url)[Symbol.asyncIterator]();
    await it.next();  // the first load holds the entry's handles
    const t0 = Date.now();
    const r = await read(url, { cache: 'opfs', cacheRoot: root, cacheWaitMs: 300 });
    assert.ok(Date.now() - t0 >= 300, 'it waited for the entry first');
    sameTensors(r.out, file);
    assert.deepEqual(r.warnings.map((w) => w.code), ['CacheBusy']);
    assert.deepEqual(r.cache.map((c) => c.state), ['off']);
    await it.return();
  } finally {
    await s.close();
  }
});

// Two loads of one URL at once (a preflight on the page and a load in a worker, in the browser):
// the second waits until the first has recorded what it wrote, then uses it — never two writers
// committing over each other.
for (const sync of [true, false]) {
  test(`${sync ? 'worker' : 'main thread'}: a second load of the entry waits for the first to record its bytes, then reads them from the cache`, async () => {
    const file = model(4, 200000);
    const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
    const root = new FakeDir({ sync });
    const url = `${s.base}/m.safetensors`;
    try {
      const it = ws.createReader({ dtype: 'raw', cache: 'opfs', cacheRoot: root }).read(url)[Symbol.asyncIterator]();
      let got = 0;
      while (got < 400000) {
        const ev = (await it.next()).value;
        if (ev.type === 'tensorData') got += ev.data.length;
      }
      const second = read(url, { cache: 'opfs', cacheRoot: root });
      await new Promise((r) => setTimeout(r, 100));
      const before = s.log.length;
      await it.return();  // the first load stops: its bytes are recorded, then the entry is free
      const r = await second;
      sameTensors(r.out, file);
      assert.deepEqual(r.warnings, []);
      assert.deepEqual(r.cache.map((c) => c.state), ['partial']);
      assert.ok(r.cache[0].cachedBytes >= 400000, `${r.cache[0].cachedBytes} bytes cached`);
      // The second load asked the server nothing before the first was done with the entry.
      assert.equal(s.log.slice(0, before).filter((l) => l.range === 'bytes=0-0').length, 0);
      const meta = entryConsistent(root, file);
      assert.equal(meta.complete, true);
    } finally {
      await s.close();
    }
  });
}

test('the server not answering the 1-byte check keeps the entry (CacheUnverified) and reads from the network', async () => {
  const file = model(3, 100000);
  const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
  const root = new FakeDir({ sync: true });
  const url = `${s.base}/m.safetensors`;
  try {
    await readSome(url, { cache: 'opfs', cacheRoot: root }, 150000);
    const [cached] = await ws.cacheInfo({ cacheRoot: root });
    assert.ok(cached.bytesCached >= 150000 && !cached.complete, JSON.stringify(cached));
    // The check's request fails (a network error); the load's own requests go through.
    const failing = (u, init) => (init?.headers?.Range === 'bytes=0-0' ? Promise.reject(new TypeError('fetch failed')) : fetch(u, init));
    const r = await read(url, { cache: 'opfs', cacheRoot: root, fetch: failing });
    sameTensors(r.out, file);
    assert.deepEqual(r.warnings.map((w) => w.code), ['CacheUnverified']);
    assert.deepEqual(r.cache.map((c) => c.state), ['off']);
    assert.deepEqual(await ws.cacheInfo({ cacheRoot: root }), [cached], 'the entry is as it was');
    // Asked again, the server answers: the entry is used.
    const again = await read(url, { cache: 'opfs', cacheRoot: root });
    sameTensors(again.out, file);
    assert.deepEqual(again.cache.map((c) => [c.state, c.cachedBytes]), [['partial', cached.bytesCached]]);
  } finally {
    await s.close();
  }
});

test('a partial entry\'s missing bytes are read as after an open request of their own: in parallel, with If-Range', async () => {
  const file = model(6, 300000);
  const s = await server(new Map([['/m.safetensors', { body: file, etag: '"v1"' }]]));
  const root = new FakeDir({ sync: true });
  const url = `${s.base}/m.safetensors`;
  try {
    await readSome(url, { cache: 'opfs', cacheRoot: root, connections: 1 }, 300000);
    const [cached] = await ws.cacheInfo({ cacheRoot: root });
    assert.ok(!cached.complete && file.length - cached.bytesCached >= 1 << 20, JSON.stringify(cached));
    s.log.length = 0;
    const r = await read(url, { cache: 'opfs', cacheRoot: root, connections: 3, maxInflightBytes: 1 << 20 });
    sameTensors(r.out, file);
    assert.deepEqual(r.cache.map((c) => [c.state, c.cachedBytes]), [['partial', cached.bytesCached]]);
    assert.equal(s.log[0].range, 'bytes=0-0');
    const ranges = s.log.slice(1);
    assert.ok(ranges.length >= 3, `${ranges.length} requests: ${ranges.map((l) => l.range).join(', ')}`);
    // The first is the serial start (its response's ETag is checked); the parallel blocks after it
    // name the file they continue (If-Range).
    for (const [i, l] of ranges.entries()) {
      if (i > 0) assert.equal(l.ifRange, '"v1"', l.range);
      const a = Number(/^bytes=(\d+)-/.exec(l.range)[1]);
      assert.ok(a >= cached.extents[0][1], `${l.range} starts inside the cached ${JSON.stringify(cached.extents)}`);
    }
    const meta = entryConsistent(root, file);
    assert.equal(meta.complete, true);
  } finally {
    await s.close();
  }
});
