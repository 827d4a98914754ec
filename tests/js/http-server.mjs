// A loopback HTTP server for the tests: serves files from a map, with or without Range support,
// and counts the bytes it sent and the requests it got. `headers`: path -> extra response headers.
import { createServer } from 'node:http';

export async function serve(files, { ranges = true, headers = new Map() } = {}) {
  const stats = { requests: 0, rangeRequests: 0, bytesSent: 0 };
  const server = createServer((req, res) => {
    stats.requests++;
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const body = files.get(path);
    if (!body) { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end('not found'); return; }
    const m = ranges && /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    let start = 0, end = body.length;
    if (m) {
      stats.rangeRequests++;
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]) + 1, body.length) : body.length;
      if (start >= body.length) { res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }); res.end(); return; }
      res.writeHead(206, { 'Content-Range': `bytes ${start}-${end - 1}/${body.length}`, 'Content-Length': end - start, 'Accept-Ranges': 'bytes', ...headers.get(path) });
    } else {
      res.writeHead(200, { 'Content-Length': body.length, ...headers.get(path) });
    }
    // In 64 KiB writes that wait for the socket, so that a cancelled body stops being sent.
    let at = start;
    const pump = () => {
      while (at < end) {
        const n = Math.min(65536, end - at);
        const chunk = body.subarray(at, at + n);
        at += n;
        stats.bytesSent += n;
        if (!res.write(chunk)) { res.once('drain', pump); return; }
      }
      res.end();
    };
    res.on('close', () => { at = end; });
    pump();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, stats, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}
