#!/usr/bin/env node
// The web page's local server: `node web/serve.mjs [--port 8080] [--host 127.0.0.1]`.
//
// Static files with HTTP Range support (one range per request: 206 + Content-Range; 416 when
// unsatisfiable), no dependencies:
//   /                web/ (the page)
//   /dist/           wasm/dist/ (the weightstream package, built by `cd wasm && npm run build`)
//   /samples/        samples/ (the bundled sample models)
//   /corpus/         tests/corpus/ (malformed and edge-case files, with expected.json)
//   /conventions/    tests/data/conventions/ (MLX, Ollama, UQFF and sharded-MLX fixtures)
//   /testdata/       ../shared/testdata/ when it exists (real GGUF and safetensors files)
//   /api/samples     the sample list the page shows as buttons (JSON)
//   /synthetic/big.safetensors?mib=1024&tensors=64&rate=0
//                    a generated F32 safetensors model of `mib` MiB of data in `tensors` tensors,
//                    computed per request (never stored), with Range support; `rate` (MB/s, 0 =
//                    unlimited) throttles it. See syntheticModel() for the bytes.
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '..');
const testdata = resolve(repo, '..', 'shared', 'testdata');
const conv = join(repo, 'tests', 'data', 'conventions');

const mounts = [
  ['/dist/', join(repo, 'wasm', 'dist')],
  ['/samples/', join(repo, 'samples')],
  ['/corpus/', join(repo, 'tests', 'corpus')],
  ['/conventions/', join(repo, 'tests', 'data', 'conventions')],
  ['/split-gguf/', join(repo, 'tests', 'data', 'split-gguf')],
  ['/testdata/', testdata],
  ['/', here],
];

const types = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.png': 'image/png', '.svg': 'image/svg+xml', '.md': 'text/markdown; charset=utf-8', '.ts': 'text/plain; charset=utf-8',
};

// The samples the page offers (only those present on this machine).
export function sampleList() {
  const list = [
    { label: 'tiny-llama.safetensors', url: '/samples/tiny-llama.safetensors', file: join(repo, 'samples', 'tiny-llama.safetensors') },
    { label: 'sharded (3 shards)', url: '/samples/sharded/model.safetensors.index.json', file: join(repo, 'samples', 'sharded', 'model.safetensors.index.json') },
    { label: 'ok_version_2.gguf (F32, F16, Q8_0)', url: '/corpus/gguf/ok_version_2.gguf', file: join(repo, 'tests', 'corpus', 'gguf', 'ok_version_2.gguf') },
    { label: 'all_quant_types.gguf', url: '/testdata/synthetic/gguf/all_quant_types.gguf', file: join(testdata, 'synthetic', 'gguf', 'all_quant_types.gguf') },
    { label: 'ggml-vocab-llama-spm.gguf (vocab)', url: '/testdata/real/gguf/ggml-vocab-llama-spm.gguf', file: join(testdata, 'real', 'gguf', 'ggml-vocab-llama-spm.gguf') },
    // Convention fixtures (tests/data/conventions/README.md). The UQFF sample is one shard's URL:
    // the page finds model-1.uqff and residual.safetensors beside it, and reads them by Range.
    { label: 'UQFF directory (2 shards + residual)', url: '/conventions/uqff/model-0.uqff', file: join(conv, 'uqff', 'model-0.uqff') },
    { label: 'MLX + config.json', url: '/conventions/mlx/model.safetensors', file: join(conv, 'mlx', 'model.safetensors') },
    { label: 'MLX 2–6-bit + config.json', url: '/conventions/mlx-bits/model.safetensors', file: join(conv, 'mlx-bits', 'model.safetensors') },
    { label: 'sharded MLX (3 shards) + config.json', url: '/conventions/sharded-mlx/model.safetensors.index.json', file: join(conv, 'sharded-mlx', 'model.safetensors.index.json') },
    { label: 'Ollama blob (mixed types)', url: '/conventions/ollama/blobs/sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42', file: join(conv, 'ollama', 'blobs', 'sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42') },
    { label: 'Ollama manifest', url: '/conventions/ollama/manifest.json', file: join(conv, 'ollama', 'manifest.json') },
    // A split GGUF model (written by ggml, split as gguf-split splits): its first split's URL; the
    // package finds the others beside it by name.
    { label: 'split GGUF (3 splits)', url: '/split-gguf/tiny-00001-of-00003.gguf', file: join(repo, 'tests', 'data', 'split-gguf', 'tiny-00001-of-00003.gguf') },
    { label: 'malformed: UQFF without its first shard', url: '/conventions/uqff/model-1.uqff /conventions/uqff/residual.safetensors', file: join(conv, 'uqff', 'model-1.uqff') },
    { label: 'malformed: truncated mid-tensor', url: '/corpus/safetensors/data_truncated_mid_tensor.safetensors', file: join(repo, 'tests', 'corpus', 'safetensors', 'data_truncated_mid_tensor.safetensors') },
    { label: 'synthetic 1 GiB (generated)', url: '/synthetic/big.safetensors?mib=1024&tensors=64' },
  ];
  return list.filter((s) => !s.file || existsSync(s.file)).map(({ label, url }) => ({ label, url }));
}

// ---------- the synthetic model ----------
// `tensors` F32 tensors "layers.<i>.weight" of shape [rows, 1024], together `mib` MiB; the header
// JSON is padded with spaces to a multiple of 8. Data byte p (from the data start) is
// PATTERN[p % PATTERN.length]: 1 MiB of f32 values of a smooth bell-shaped distribution.
const PATTERN = (() => {
  const f = new Float32Array(262144);
  let s = 0x9e3779b9;
  for (let i = 0; i < f.length; i++) {
    let acc = 0;
    for (let k = 0; k < 4; k++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; acc += s / 4294967296; }
    f[i] = (acc - 2) * 0.5;  // Irwin-Hall(4), centred: roughly normal, |x| ≤ 1
  }
  return new Uint8Array(f.buffer);
})();

export function syntheticModel(params) {
  const mib = Math.max(1, Math.min(8192, Number(params.get?.('mib') ?? params.mib ?? 1024) | 0));
  const count = Math.max(1, Math.min(131072, Number(params.get?.('tensors') ?? params.tensors ?? 64) | 0));
  const rowBytes = 4096;
  const rowsTotal = (mib * 1048576) / rowBytes;
  const header = { __metadata__: { generator: 'weightstream web/serve.mjs', pattern: '1 MiB of f32 repeated' } };
  const tensors = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const rows = Math.floor(rowsTotal / count) + (i < rowsTotal % count ? 1 : 0);
    const bytes = rows * rowBytes;
    header[`layers.${i}.weight`] = { dtype: 'F32', shape: [rows, 1024], data_offsets: [at, at + bytes] };
    tensors.push({ name: `layers.${i}.weight`, begin: at, end: at + bytes });
    at += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const head = Buffer.alloc(8 + json.length);
  head.writeBigUInt64LE(BigInt(json.length), 0);
  head.write(json, 8, 'latin1');
  return { head, dataSize: at, size: head.length + at, tensors };
}

// Bytes [start, end) of the synthetic model, in chunks.
export function* syntheticChunks(model, start, end, chunk = 262144) {
  let pos = start;
  while (pos < end) {
    const n = Math.min(chunk, end - pos);
    const out = Buffer.allocUnsafe(n);
    let o = 0;
    while (o < n) {
      const p = pos + o;
      if (p < model.head.length) {
        const k = Math.min(n - o, model.head.length - p);
        model.head.copy(out, o, p, p + k);
        o += k;
      } else {
        const d = (p - model.head.length) % PATTERN.length;
        const k = Math.min(n - o, PATTERN.length - d);
        out.set(PATTERN.subarray(d, d + k), o);
        o += k;
      }
    }
    yield out;
    pos += n;
  }
}

// ---------- ranges ----------
function parseRange(h, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(String(h).trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;  // unsupported (e.g. several ranges): full body
  let start, end;
  if (m[1] === '') { start = Math.max(0, size - Number(m[2])); end = size - 1; }
  else { start = Number(m[1]); end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1); }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

// For the tests (they run this server in their own process): every GET's path, range and the body
// bytes written for it; `rate` (MB/s) throttles every synthetic model.
export const traffic = { log: [], rate: 0, reset() { this.log.length = 0; } };

function sendRangeHead(req, res, size, type, etag = null) {
  res.setHeader('Accept-Ranges', 'bytes');
  if (etag) res.setHeader('ETag', etag);
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'no-store');
  const r = req.headers.range ? parseRange(req.headers.range, size) : null;
  if (r === 'unsatisfiable') {
    res.writeHead(416, { 'Content-Range': `bytes */${size}` });
    res.end();
    return null;
  }
  if (r) {
    res.writeHead(206, { 'Content-Range': `bytes ${r.start}-${r.end}/${size}`, 'Content-Length': r.end - r.start + 1 });
    return r;
  }
  res.writeHead(200, { 'Content-Length': size });
  return { start: 0, end: size - 1 };
}

const sleep = (ms) => new Promise((f) => setTimeout(f, ms));

async function sendSynthetic(req, res, url) {
  const model = syntheticModel(url.searchParams);
  const rate = Number(url.searchParams.get('rate') || traffic.rate || 0) * 1e6;
  // The same parameters make the same bytes: the ETag names them.
  const r = sendRangeHead(req, res, model.size, 'application/octet-stream', `"synthetic-${model.size}-${model.tensors.length}"`);
  if (!r || req.method === 'HEAD') { res.end(); return; }
  // start / end (ms): when the response began and closed, for the tests that count connections
  // open at once.
  const entry = { path: url.pathname + url.search, range: req.headers.range ?? null, sent: 0, start: Date.now(), end: null };
  traffic.log.push(entry);
  let closed = false;
  res.on('close', () => { closed = true; entry.end = Date.now(); });
  const t0 = Date.now();
  let sent = 0;
  for (const chunk of syntheticChunks(model, r.start, r.end + 1, 262144)) {
    if (closed) return;
    if (!res.write(chunk)) {
      await new Promise((f) => {
        const done = () => { res.off('drain', done); res.off('close', done); f(); };
        res.on('drain', done);
        res.on('close', done);
      });
    }
    sent += chunk.length;
    entry.sent += chunk.length;
    if (rate > 0) {
      const due = t0 + (sent / rate) * 1000;
      if (due > Date.now()) await sleep(due - Date.now());
    }
  }
  res.end();
}

function sendFile(req, res, file) {
  const st = statSync(file);
  const r = sendRangeHead(req, res, st.size, types[extname(file)] ?? 'application/octet-stream', `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`);
  if (!r) return;
  if (req.method === 'HEAD' || st.size === 0) { res.end(); return; }
  const s = createReadStream(file, { start: r.start, end: r.end });
  s.on('error', () => res.destroy());
  res.on('close', () => s.destroy());
  s.pipe(res);
}

function resolveStatic(pathname) {
  for (const [prefix, dir] of mounts) {
    if (!pathname.startsWith(prefix)) continue;
    const rel = pathname.slice(prefix.length) || 'index.html';
    const file = resolve(dir, rel);
    if (file !== dir && !file.startsWith(dir + sep)) return null;  // no way out of the mount
    if (existsSync(file) && statSync(file).isDirectory()) return existsSync(join(file, 'index.html')) ? join(file, 'index.html') : null;
    return existsSync(file) ? file : null;
  }
  return null;
}

export function handler(req, res) {
  let url;
  try { url = new URL(req.url, 'http://localhost'); } catch { res.writeHead(400).end(); return; }
  if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405).end(); return; }
  let pathname;
  try { pathname = decodeURIComponent(url.pathname); } catch { res.writeHead(400).end(); return; }
  if (pathname === '/api/samples') {
    res.writeHead(200, { 'Content-Type': types['.json'], 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(sampleList()));
    return;
  }
  if (pathname.startsWith('/synthetic/') && pathname.endsWith('.safetensors')) { sendSynthetic(req, res, url).catch(() => res.destroy()); return; }
  const file = resolveStatic(pathname);
  if (!file) { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end(`not found: ${pathname}\n`); return; }
  sendFile(req, res, file);
}

// Starts the server; resolves to {server, url, close()}. Port 0 picks a free one.
export function startServer({ port = 8080, host = '127.0.0.1' } = {}) {
  return new Promise((ok, fail) => {
    const server = createServer(handler);
    server.on('error', fail);
    server.listen(port, host, () => {
      const a = server.address();
      ok({ server, url: `http://${host}:${a.port}/`, close: () => new Promise((f) => { server.closeAllConnections?.(); server.close(f); }) });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : dflt; };
  const port = Number(arg('--port', process.env.PORT ?? 8080));
  const host = arg('--host', process.env.HOST ?? '127.0.0.1');
  if (!existsSync(join(repo, 'wasm', 'dist', 'weightstream.mjs'))) {
    console.error('weightstream web: wasm/dist is not built; run `cd wasm && npm ci && npm run build` first');
    process.exit(1);
  }
  const { url } = await startServer({ port, host });
  console.log(`weightstream web page: ${url}  (serving web/, wasm/dist, samples/, tests/corpus${existsSync(testdata) ? ', ../shared/testdata' : ''}; Ctrl-C stops)`);
}
