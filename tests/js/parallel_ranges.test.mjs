// Parallel, adaptive Range downloads (issue #31, wasm/js/parallel-ranges.mjs): the policy's pure
// functions, then a URL source read over a loopback server — bytes equal to the file and to a
// serial load through the loader, connections added while the rate rises (a paced server), 429 and
// RateLimit back-off, a stalled connection, cuts mid-range that resume with If-Range, a file changed
// between ranges (SourceChanged), Range requests after a redirect, and an abort that closes every
// response. Small blocks (maxInflightBytes 1 MiB: 256 KiB blocks) keep the files small.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ws, decodeAll } from './helpers.mjs';
import { serve, rng } from './http-server.mjs';
import { toSource } from '../../wasm/js/sources.mjs';
import {
  settings, initialState, afterSample, afterThrottle, serverWaitMs, nextBlock, fitsBudget, worthParallel, worthProbing, GAIN, STARVED,
} from '../../wasm/js/parallel-ranges.mjs';

const KiB = 1024, MiB = 1 << 20;
const small = { maxInflightBytes: 1 * MiB, _measureMs: 40, retryDelay: 1 };

function randomBytes(n, seed) {
  const r = rng(seed), out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (r() * 256) | 0;
  return out;
}

// Every byte of `url` through a UrlSource (chunks() from byte 0), with its events and when each
// request was made (`fetches`: performance.now() times, the server's clock too).
async function readUrl(url, options = {}, signal) {
  const events = [], fetches = [];
  const fetch = (u, init) => { fetches.push(performance.now()); return globalThis.fetch(u, init); };
  const src = await toSource(url, { fetch, ...options, onRetry: (e) => events.push({ ...e, t: performance.now() }) });
  await src.open(signal);
  const parts = [];
  let n = 0;
  try {
    for await (const c of src.chunks(signal)) { parts.push(c); n += c.length; options.onChunk?.(n); }
  } finally { src.close(); }
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return { bytes: all, events, fetches };
}

const blockRequests = (stats, path) => stats.log.filter((l) => l.path === path && l.range && l.range !== 'bytes=0-');

// ---------- the policy ----------

test('policy: settings clamp the count in browsers and size blocks to the budget', () => {
  assert.deepEqual([settings({}, false).max, settings({}, false).pinned, settings({}, false).blockSize], [4, null, 4 * MiB]);
  assert.equal(settings({ maxConnections: 8 }, true).max, 4);
  assert.equal(settings({ maxConnections: 8 }, false).max, 8);
  assert.equal(settings({ connections: 6 }, true).pinned, 4);
  assert.equal(settings({ connections: 1 }, false).max, 1);
  assert.equal(settings({ maxInflightBytes: 1 * MiB }, false).blockSize, 256 * KiB);
  assert.equal(settings({ maxInflightBytes: 1024 * MiB }, false).blockSize, 8 * MiB);
  assert.throws(() => settings({ connections: 0 }, false), TypeError);
  assert.throws(() => settings({ connections: 'many' }, false), TypeError);
  assert.throws(() => settings({ maxInflightBytes: 1000 }, false), TypeError);
  const s = settings({}, false);
  assert.equal(worthParallel(s, 0, 8 * MiB - 1), false);
  assert.equal(worthParallel(s, 0, 8 * MiB), true);
  assert.equal(worthParallel(settings({ connections: 1 }, false), 0, 1 << 30), false);
});

test('policy: a connection is added while the rate rises by >= 5 %, the last one dropped when it did not', () => {
  const s = settings({}, false);
  let st = initialState(s);
  assert.deepEqual(st, { target: 1, cap: 4, lastRate: null, settled: false });
  st = afterSample(st, 100);                 // the first sample: try a second connection
  assert.equal(st.target, 2);
  st = afterSample(st, 100 * GAIN);          // exactly +5 %: one more
  assert.equal(st.target, 3);
  st = afterSample(st, 105 * 1.049);         // +4.9 %: back to 2, for good
  assert.deepEqual([st.target, st.settled], [2, true]);
  assert.equal(afterSample(st, 1e9).target, 2);
  // Up to the cap, then settled there.
  let up = initialState(s);
  for (const r of [1, 2, 3, 4, 5]) up = afterSample(up, r);
  assert.deepEqual([up.target, up.settled], [4, true]);
  // A consumer that hardly waited for bytes: no connection added, the count settled where it is.
  assert.deepEqual(afterSample(initialState(s), 100, 0.09), { target: 1, cap: 4, lastRate: 100, settled: true });
  assert.equal(afterSample(initialState(s), 100, STARVED).target, 2);
  assert.deepEqual(afterSample({ target: 3, cap: 4, lastRate: 50, settled: false }, 90, 0.01), { target: 3, cap: 4, lastRate: 90, settled: true });
  // The budget held a block back: the consumer sets the pace; the last connection is dropped.
  assert.deepEqual(afterSample({ target: 3, cap: 4, lastRate: 50, settled: false }, 90, 0.5, true), { target: 2, cap: 4, lastRate: 90, settled: true });
  assert.deepEqual(afterSample({ target: 1, cap: 4, lastRate: null, settled: false }, 90, 0.5, true), { target: 1, cap: 4, lastRate: 90, settled: true });
  // Near the end of the read no connection is tried: 100 MB/s, 500 ms samples: at least 100 MB left.
  assert.equal(worthProbing(100e6 + 1, 100e6, 500), true);
  assert.equal(worthProbing(100e6, 100e6, 500), false);
  // Pinned: never changes.
  const pin = initialState(settings({ connections: 3 }, false));
  assert.deepEqual([pin.target, pin.settled, afterSample(pin, 5).target], [3, true, 3]);
});

test('policy: a throttle halves the running connections and caps them there', () => {
  const st = afterThrottle({ target: 4, cap: 4, lastRate: 10, settled: false }, 4);
  assert.deepEqual(st, { target: 2, cap: 2, lastRate: 10, settled: true });
  assert.deepEqual(afterThrottle(st, 1), { target: 1, cap: 1, lastRate: 10, settled: true });
  assert.equal(afterThrottle({ target: 1, cap: 4, lastRate: null, settled: false }, 0).target, 1);
});

test('policy: the server\'s wait from Retry-After and the RateLimit headers', () => {
  const h = (o) => (n) => o[n] ?? null;
  assert.equal(serverWaitMs(h({})), null);
  assert.equal(serverWaitMs(h({ 'retry-after': '3' })), 3000);
  assert.equal(serverWaitMs(h({ 'retry-after': 'Wed, 21 Oct 2015 07:28:05 GMT' }), Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 5000);
  assert.equal(serverWaitMs(h({ ratelimit: '"api";r=0;t=55' })), 55000);
  assert.equal(serverWaitMs(h({ ratelimit: '"api";r=12;t=55' })), null);
  assert.equal(serverWaitMs(h({ ratelimit: '"a";r=5;t=9, "b";r=0;t=2' })), 2000);
  assert.equal(serverWaitMs(h({ ratelimit: 'limit=100, remaining=0, reset=7' })), 7000);
  assert.equal(serverWaitMs(h({ 'ratelimit-remaining': '0', 'ratelimit-reset': '4' })), 4000);
  assert.equal(serverWaitMs(h({ 'ratelimit-remaining': '3', 'ratelimit-reset': '4' })), null);
});

test('policy: blocks and the byte budget', () => {
  assert.equal(nextBlock(0, 10 * MiB, 4 * MiB), 4 * MiB);
  assert.equal(nextBlock(4 * MiB, 10 * MiB - 1, 4 * MiB), 10 * MiB - 1);  // under 2 MiB left: joined to this block
  assert.equal(nextBlock(4 * MiB, 10 * MiB, 4 * MiB), 8 * MiB);
  assert.equal(nextBlock(0, 5 * MiB, 4 * MiB), 5 * MiB);
  assert.equal(fitsBudget(0, 33 * MiB, 32 * MiB, 1), false);
  assert.equal(fitsBudget(0, 33 * MiB, 32 * MiB, 0), true);
  assert.equal(fitsBudget(2 * MiB, 33 * MiB, 32 * MiB, 3), true);
});

// ---------- over a loopback server ----------

test('paced server: the adaptive read adds connections, bytes equal the file, memory within the budget', async () => {
  const body = randomBytes(6 * MiB, 31);
  let peak;
  const srv = await serve(new Map([['/f.bin', body]]), { etag: true, pace: 8 * MiB });
  try {
    const conn = [];
    const { bytes, events } = await readUrl(`${srv.base}/f.bin`, { ...small, onChunk: () => {} });
    for (const e of events) if (e.type === 'connections') conn.push(e.connections);
    assert.deepEqual(Buffer.compare(Buffer.from(bytes), Buffer.from(body)), 0);
    assert.ok(Math.max(...conn) >= 2, `connections ${conn}`);
    assert.ok(srv.stats.maxActive >= 2 && srv.stats.maxActive <= 4, `max active ${srv.stats.maxActive}`);
    // Every block's request carries the first response's ETag as If-Range; each byte came once.
    const blocks = blockRequests(srv.stats, '/f.bin');
    assert.ok(blocks.length >= 3 && blocks.every((l) => /^"/.test(l.ifRange)), JSON.stringify(blocks));
    // Only the open response, cut when the second connection started, sent bytes not used.
    peak = srv.stats.bytesSent;
    assert.ok(peak <= body.length + 1 * MiB + 4 * 65536, `sent ${peak} for ${body.length}`);
  } finally { await srv.close(); }
});

test('connections: 1 is the serial reader (one request), a pinned count runs that many', async () => {
  const body = randomBytes(3 * MiB, 7);
  const srv = await serve(new Map([['/f.bin', body]]), { etag: true, pace: 16 * MiB });
  try {
    const one = await readUrl(`${srv.base}/f.bin`, { ...small, connections: 1 });
    assert.equal(srv.stats.requests, 1);
    assert.deepEqual(one.bytes, body);
    const before = srv.stats.requests;
    const three = await readUrl(`${srv.base}/f.bin`, { ...small, connections: 3 });
    assert.deepEqual(three.bytes, body);
    // The open request, then 256 KiB blocks from where it was cut.
    assert.ok(srv.stats.requests - before >= 11, `${srv.stats.requests - before} requests`);
    assert.equal(srv.stats.maxActive, 3);
    // A range read (the loader's jump): its own request is the serial start, then blocks.
    for (const connections of [3, 'auto']) {
      const src = await toSource(`${srv.base}/f.bin`, { ...small, connections });
      await src.open();
      const parts = [];
      for await (const c of src.range(100003, 3 * MiB - 5)) parts.push(Buffer.from(c));
      src.close();
      assert.deepEqual(new Uint8Array(Buffer.concat(parts)), body.subarray(100003, 3 * MiB - 5), String(connections));
    }
    assert.ok(srv.stats.log.some((l) => l.range === `bytes=100003-${3 * MiB - 6}`));
  } finally { await srv.close(); }
});

test('the loader: a model read in parallel gives the serial load\'s tensors, byte for byte', async () => {
  // A safetensors file of 4 MiB of U8 tensors (no decoding: the bytes themselves).
  const tensors = [['a', 1536 * KiB], ['b', 2 * MiB], ['c', 512 * KiB + 3]];
  const h = {};
  let off = 0;
  for (const [n, len] of tensors) { h[n] = { dtype: 'U8', shape: [len], data_offsets: [off, off + len] }; off += len; }
  let json = JSON.stringify(h);
  while ((json.length + 8) % 8) json += ' ';
  const head = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + head.length + off);
  new DataView(file.buffer).setBigUint64(0, BigInt(head.length), true);
  file.set(head, 8);
  file.set(randomBytes(off, 99), 8 + head.length);
  const srv = await serve(new Map([['/m.safetensors', file]]), { etag: true, pace: 16 * MiB });
  try {
    const url = `${srv.base}/m.safetensors`;
    const serial = await decodeAll(url, { ...small, connections: 1 });
    const n0 = srv.stats.requests;
    const par = await decodeAll(url, { ...small, connections: 4 });
    assert.ok(srv.stats.requests - n0 > 4, `${srv.stats.requests - n0} requests`);
    assert.deepEqual([...par.keys()], [...serial.keys()]);
    for (const [k, v] of serial) assert.deepEqual(par.get(k).bytes, v.bytes, k);
    assert.deepEqual(serial.get('b').bytes, file.subarray(8 + head.length + 1536 * KiB, 8 + head.length + 1536 * KiB + 2 * MiB));
  } finally { await srv.close(); }
});

test('HTTP 429 with Retry-After: half the connections, no new request until it passes, every byte', async () => {
  const body = randomBytes(4 * MiB, 5);
  let refused = null;
  const srv = await serve(new Map([['/f.bin', body]]), {
    etag: true, pace: 16 * MiB,
    intercept: (req, res, n) => {
      if (refused === null && n >= 4 && req.headers.range !== 'bytes=0-') {
        refused = performance.now();
        res.writeHead(429, { 'Retry-After': '1' });
        res.end();
        return true;
      }
      return false;
    },
  });
  try {
    const { bytes, events, fetches } = await readUrl(`${srv.base}/f.bin`, { ...small, connections: 4 });
    assert.deepEqual(bytes, body);
    const back = events.find((e) => e.type === 'connections' && e.reason === 'http 429');
    assert.ok(back, JSON.stringify(events));
    assert.equal(back.connections, 2);
    assert.equal(back.waitMs, 1000);
    // No request made for 1 s after the client saw the 429.
    const after = fetches.filter((t) => t > back.t);
    assert.ok(after.length > 0 && refused < back.t);
    assert.ok(after[0] - back.t >= 990, `a request ${after[0] - back.t} ms after the 429`);
    assert.ok(events.filter((e) => e.type === 'retry').length >= 1);
  } finally { await srv.close(); }
});

test('RateLimit r=0: no new request until its reset', async () => {
  const body = randomBytes(3 * MiB, 6);
  let limited = null;
  const srv = await serve(new Map([['/f.bin', body]]), {
    etag: true,
    intercept: (req, res, n) => {
      if (n === 3) { limited = performance.now(); res.setHeader('RateLimit', '"default";r=0;t=1'); }
      return false;
    },
  });
  try {
    const { bytes, events, fetches } = await readUrl(`${srv.base}/f.bin`, { ...small, connections: 2 });
    assert.deepEqual(bytes, body);
    const held = events.find((e) => e.type === 'connections' && e.reason === 'ratelimit' && e.waitMs === 1000);
    assert.ok(held, JSON.stringify(events));
    const after = fetches.filter((t) => t > held.t);
    assert.ok(limited < held.t && after.length > 0 && after[0] - held.t >= 990, `${after[0] - held.t} ms`);
  } finally { await srv.close(); }
});

test('a connection that stalls is aborted and its block requested again from its next byte', async () => {
  const body = randomBytes(3 * MiB, 8);
  let stalled = null;
  const srv = await serve(new Map([['/f.bin', body]]), {
    etag: true,
    intercept: (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (stalled === null && m && Number(m[1]) === 1 * MiB) {
        stalled = res;
        res.writeHead(206, { 'Content-Range': `bytes ${m[1]}-${m[2]}/${body.length}`, 'Content-Length': Number(m[2]) - Number(m[1]) + 1 });
        res.write(body.subarray(Number(m[1]), Number(m[1]) + 1000));  // then nothing
        return true;
      }
      return false;
    },
  });
  try {
    const t0 = performance.now();
    const { bytes, events } = await readUrl(`${srv.base}/f.bin`, { ...small, connections: 2, stallTimeout: 300 });
    assert.deepEqual(bytes, body);
    assert.ok(stalled, 'the stalling response was sent');
    const retry = events.find((e) => e.type === 'retry');
    assert.equal(retry.offset, 1 * MiB + 1000);
    assert.match(retry.error.message, /no bytes for 300 ms/);
    assert.ok(srv.stats.log.some((l) => l.range === `bytes=${1 * MiB + 1000}-${1 * MiB + 256 * KiB - 1}` && l.ifRange), JSON.stringify(srv.stats.log.map((l) => l.range)));
    assert.ok(performance.now() - t0 < 5000);
  } finally { stalled?.destroy(); await srv.close(); }
});

test('cuts mid-range resume with If-Range from the next byte of that range', async () => {
  const body = randomBytes(4 * MiB, 9);
  const srv = await serve(new Map([['/f.bin', body]]), { etag: true, drops: { seed: 31, perFile: 6 } });
  try {
    const { bytes, events } = await readUrl(`${srv.base}/f.bin`, { ...small, connections: 3, retries: 3 });
    assert.deepEqual(bytes, body);
    assert.ok(srv.stats.drops >= 4, `${srv.stats.drops} cuts`);
    // One retry per cut in bytes still wanted (the open response's cut after it was left is not).
    const retries = events.filter((e) => e.type === 'retry').length;
    assert.ok(retries >= 3 && retries <= srv.stats.drops, `${retries} retries, ${srv.stats.drops} cuts`);
    // A resume asks for the rest of its block only (an end that is a block's, not the file's).
    const resumes = srv.stats.log.filter((l) => /^bytes=\d+-\d+$/.test(l.range ?? '') && Number(/^bytes=(\d+)-/.exec(l.range)[1]) % (256 * KiB) !== 0);
    assert.ok(resumes.length >= 1, JSON.stringify(srv.stats.log.map((l) => l.range)));
    for (const l of resumes) {
      assert.ok(l.ifRange, l.range);
      const end = Number(/-(\d+)$/.exec(l.range)[1]) + 1;
      assert.ok(end % (256 * KiB) === 0 || end === body.length, l.range);
    }
  } finally { await srv.close(); }
});

test('a file changed between ranges is SourceChanged', async () => {
  const body = randomBytes(4 * MiB, 10);
  const files = new Map([['/f.bin', body]]);
  const srv = await serve(files, {
    etag: true, pace: 16 * MiB,
    intercept: (req, res, n) => { if (n === 4) { const b2 = body.slice(); b2[3 * MiB] ^= 1; files.set('/f.bin', b2); } return false; },
  });
  try {
    await assert.rejects(readUrl(`${srv.base}/f.bin`, { ...small, connections: 3 }), (e) => {
      assert.equal(e.code, 'SourceChanged', e.message);
      assert.match(e.message, /If-Range failed|ETag/);
      return true;
    });
  } finally { await srv.close(); }
});

test('after a redirect, the Range requests go to the resolved URL', async () => {
  const body = randomBytes(2 * MiB, 11);
  const srv = await serve(new Map([['/cdn/f.bin', body]]), {
    etag: true,
    intercept: (req, res) => {
      if (req.url.startsWith('/r/')) { res.writeHead(302, { Location: '/cdn/f.bin' }); res.end(); return true; }
      return false;
    },
  });
  try {
    const { bytes } = await readUrl(`${srv.base}/r/f.bin`, { ...small, connections: 2 });
    assert.deepEqual(bytes, body);
    assert.equal(srv.stats.log.filter((l) => l.path.startsWith('/r/')).length, 1);
    assert.ok(blockRequests(srv.stats, '/cdn/f.bin').length >= 6);
  } finally { await srv.close(); }
});

test('an abort ends every request at once', async () => {
  const body = randomBytes(8 * MiB, 12);
  const srv = await serve(new Map([['/f.bin', body]]), { etag: true, pace: 2 * MiB });
  try {
    const ac = new AbortController();
    let activeAtAbort = 0;
    await assert.rejects(readUrl(`${srv.base}/f.bin`, {
      ...small, maxInflightBytes: 8 * MiB, connections: 4,
      onChunk: (n) => { if (n > 512 * KiB && !ac.signal.aborted) { activeAtAbort = srv.stats.active; ac.abort(); } },
    }, ac.signal), (e) => e.code === 'Aborted');
    assert.ok(activeAtAbort >= 3, `${activeAtAbort} responses open at the abort: ${JSON.stringify(srv.stats.log.map((l) => [l.range, Math.round(l.t)]))}`);
    for (let i = 0; i < 50 && srv.stats.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(srv.stats.active, 0);
    const sent = srv.stats.bytesSent;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(srv.stats.bytesSent, sent);
  } finally { await srv.close(); }
});
