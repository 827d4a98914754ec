// A loopback HTTP server for the tests: serves files from a map, with or without Range support,
// and counts the bytes it sent and the requests it got. `headers`: path -> extra response headers.
//
// For the resume tests: `etag: true` sends an ETag per body (a hash of its bytes, so a changed
// file has another) and honours If-Range (a validator that does not match: 200 and the whole
// file; `ifRange: false` ignores the header, as a careless server would). `drops: {seed, perFile}`
// cuts bodies at byte positions chosen by a seeded generator (`perFile` per file, each used once,
// so a load that resumes ends): a cut either resets the connection after the bytes before it were
// flushed, or — at odd positions — ends a body without Content-Length cleanly, short of what
// Content-Range promised (`cuts: 'reset'` / `'truncate'` makes every cut one kind). `rearm()` chooses new positions for the next load (the next seed);
// `persistentDrop: {path, at}` cuts every response for `path` that covers or starts past `at`
// there, for ever. `onDrop(path, at)` is called at every cut.
//
// For the parallel-download tests and benchmark: `pace` (bytes per second) sends each response no
// faster than that (a per-connection limit, as CDNs apply); `intercept(req, res, n)` sees every
// request first (n counts them from 1) and returns true when it answered it itself (a 429, a
// redirect, a stall); it may also set headers for the normal answer. `stats.active`: responses not
// yet closed; `stats.log[i].t`: when the request came (performance.now()).
import { createServer } from 'node:http';

// mulberry32: small, seeded, reproducible.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Computed once per body (a body replaced in the map is a new one): a 512 MiB file's sum per
// request made the server, not the client, the bottleneck of many Range requests.
const etags = new WeakMap();
function etagOf(body) {
  if (!etags.has(body)) etags.set(body, sumOf(body));
  return etags.get(body);
}
function sumOf(body) {
  let a = 1, b = 0;
  for (let i = 0; i < body.length; i++) { a = (a + body[i]) % 65521; b = (b + a) % 65521; }
  return `"${body.length.toString(16)}-${((b << 16) | a) >>> 0}"`;
}

export async function serve(files, { ranges = true, headers = new Map(), etag = false, ifRange = true, drops = null, persistentDrop = null, onDrop = null, cuts = 'alternate', pace = 0, intercept = null } = {}) {
  const stats = { requests: 0, rangeRequests: 0, bytesSent: 0, drops: 0, ifRange: 0, log: [], active: 0, maxActive: 0 };
  let seed = drops?.seed ?? 0;
  let pending = new Map();  // path -> sorted drop positions not used yet
  const dropsFor = (path, size) => {
    if (!drops) return [];
    if (!pending.has(path)) {
      let h = seed;
      for (const c of path) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
      const r = rng(h);
      const at = new Set();
      for (let i = 0; i < drops.perFile && size > 1; i++) at.add(1 + Math.floor(r() * (size - 1)));
      pending.set(path, [...at].sort((x, y) => x - y));
    }
    return pending.get(path);
  };
  const server = createServer((req, res) => {
    stats.requests++;
    stats.active++;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    res.on('close', () => { stats.active--; });
    if (intercept?.(req, res, stats.requests)) { stats.log.push({ path: req.url, range: req.headers.range ?? null, ifRange: req.headers['if-range'] ?? null, status: res.statusCode, t: performance.now() }); return; }
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const body = files.get(path);
    if (!body) { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end('not found'); return; }
    const tag = etag ? etagOf(body) : null;
    let m = ranges && /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (m && req.headers['if-range'] !== undefined) {
      stats.ifRange++;
      if (ifRange && req.headers['if-range'] !== tag) m = null;  // the file changed: all of it
    }
    stats.log.push({ path, range: req.headers.range ?? null, ifRange: req.headers['if-range'] ?? null, status: m ? 206 : 200, t: performance.now() });
    let start = 0, end = body.length;
    if (m) {
      stats.rangeRequests++;
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]) + 1, body.length) : body.length;
      if (start >= body.length) { res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }); res.end(); return; }
    }
    // Where this body is cut, if anywhere.
    let cut = null;
    if (persistentDrop && persistentDrop.path === path && end > persistentDrop.at) cut = { at: Math.max(start, persistentDrop.at), reset: true };
    const list = dropsFor(path, body.length);
    const k = list.findIndex((p) => p >= start && p < end);
    if (!cut && k >= 0) {
      const at = list[k];
      list.splice(k, 1);
      cut = { at, reset: cuts === 'reset' || (cuts === 'alternate' && (at & 1) === 0) };
    }
    const extra = { ...(tag ? { ETag: tag } : {}), ...headers.get(path) };
    const length = cut && !cut.reset ? {} : { 'Content-Length': end - start };
    if (m) res.writeHead(206, { 'Content-Range': `bytes ${start}-${end - 1}/${body.length}`, ...length, 'Accept-Ranges': 'bytes', ...extra });
    else res.writeHead(200, { ...length, ...extra });
    const stop = cut ? cut.at : end;
    // In 64 KiB writes that wait for the socket, so that a cancelled body stops being sent.
    let at = start;
    const finish = () => {
      if (!cut) { res.end(); return; }
      stats.drops++;
      onDrop?.(path, cut.at);
      if (cut.reset) res.socket?.destroy();  // the bytes before the cut were flushed
      else res.end();                        // a clean end, short of Content-Range
    };
    // Paced: one 64 KiB write, then a pause that keeps the response at `pace` bytes per second.
    const paced = () => {
      if (at >= stop) { finish(); return; }
      const n = Math.min(65536, stop - at);
      const chunk = body.subarray(at, at + n);
      at += n;
      stats.bytesSent += n;
      res.write(chunk, () => { if (at >= stop) finish(); else setTimeout(paced, (n / pace) * 1000); });
    };
    const pump = () => {
      if (pace > 0) { paced(); return; }
      while (at < stop) {
        const n = Math.min(65536, stop - at);
        const chunk = body.subarray(at, at + n);
        at += n;
        stats.bytesSent += n;
        if (at >= stop) { res.write(chunk, finish); return; }
        if (!res.write(chunk)) { res.once('drain', pump); return; }
      }
      finish();
    };
    res.on('close', () => { at = end; });
    pump();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base, stats,
    rearm() { seed++; pending = new Map(); },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}
