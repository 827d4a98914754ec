// weightstream JS benchmark: a model by URL, read serially (connections: 1) and by the adaptive
// parallel Range downloader (the default), from a loopback server that paces each response (as a
// CDN limits each connection), and the same unpaced. In one run, alternating, so both see the same
// machine.
//
//   node bench/js/parallel-download.mjs [--mib 512] [--pace 16] [--runs 1] [--unpaced-runs 5] [--json]
//
// The model: a safetensors file of --mib MiB of U8 tensors (32 of them), its bytes from a seeded
// generator. The server runs in a child process (its copy of the file is not this process's
// memory). Each load is createReader({dtype: 'raw'}).read(url): every tensor's bytes go through the
// wasm module, and a SHA-256 of them (in the paced runs) shows that every byte equals the serial
// load's. Reported per load: wall time, MB/s, peak RSS and ArrayBuffers above the process's before
// the load (sampled every 20 ms), the connections the downloader settled on, and the requests the
// server got.
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const MiB = 1 << 20;
const args = process.argv.slice(2);
const arg = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);

// ---- the server (child) -----------------------------------------------------------------------

function model(size) {
  const n = 32, each = Math.floor(size / n / 64) * 64;
  const h = {};
  for (let i = 0; i < n; i++) h[`t${String(i).padStart(2, '0')}`] = { dtype: 'U8', shape: [each], data_offsets: [i * each, (i + 1) * each] };
  let json = JSON.stringify(h);
  while ((json.length + 8) % 8) json += ' ';
  const head = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + head.length + n * each);
  new DataView(file.buffer).setBigUint64(0, BigInt(head.length), true);
  file.set(head, 8);
  // xorshift32 words: cheap, reproducible, not compressible.
  const words = new Uint32Array(file.buffer, 0, Math.floor(file.length / 4));
  let x = 2463534242;
  for (let i = Math.ceil((8 + head.length) / 4); i < words.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; words[i] = x >>> 0; }
  return file;
}

if (args[0] === '--serve') {
  const { serve } = await import(join(repo, 'tests', 'js', 'http-server.mjs'));
  const file = model(arg('--mib', 512) * MiB);
  const paced = await serve(new Map([['/m.safetensors', file]]), { etag: true, pace: arg('--pace', 16) * MiB });
  const unpaced = await serve(new Map([['/m.safetensors', file]]), { etag: true });
  process.send({ paced: paced.base, unpaced: unpaced.base, size: file.length });
  process.on('message', (m) => {
    if (m === 'stats') process.send({ stats: { paced: paced.stats.requests, unpaced: unpaced.stats.requests } });
    if (m === 'exit') process.exit(0);
  });
} else {
  await main();
}

async function main() {
  const ws = await import(join(repo, 'wasm', 'dist', 'weightstream.mjs'));
  const mib = arg('--mib', 512), pace = arg('--pace', 16), runs = arg('--runs', 1), unpacedRuns = arg('--unpaced-runs', 5);
  const child = fork(fileURLToPath(import.meta.url), ['--serve', '--mib', String(mib), '--pace', String(pace)]);
  const next = () => new Promise((r) => child.once('message', r));
  const info = await next();
  const requests = async () => { child.send('stats'); for (;;) { const m = await next(); if (m.stats) return m.stats; } };

  async function load(base, which, opts, verify) {
    const url = `${base}/m.safetensors`;
    const hash = verify ? createHash('sha256') : null;
    let connections = 1;
    const onProgress = (e) => { if (e.type === 'connections') { connections = e.connections; if (process.env.WS_BENCH_DEBUG) console.error(which, JSON.stringify(e)); } };
    globalThis.gc?.();
    const m0 = process.memoryUsage();
    let rss = m0.rss, ab = m0.arrayBuffers;
    const sampler = setInterval(() => { const m = process.memoryUsage(); rss = Math.max(rss, m.rss); ab = Math.max(ab, m.arrayBuffers); }, 20);
    const r0 = await requests();
    const t0 = performance.now();
    let bytes = 0;
    for await (const ev of ws.createReader({ dtype: 'raw', onProgress, ...opts }).read(url)) {
      if (ev.type === 'connections') connections = ev.connections;
      if (ev.type === 'tensorData') { bytes += ev.data.length; hash?.update(ev.data); }
    }
    const s = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const r1 = await requests();
    return {
      which, s, mbps: info.size / 1e6 / s, rssMiB: (rss - m0.rss) / MiB, abMiB: (ab - m0.arrayBuffers) / MiB,
      connections, requests: r1[base === info.paced ? 'paced' : 'unpaced'] - r0[base === info.paced ? 'paced' : 'unpaced'],
      bytes, sha256: hash?.digest('hex') ?? null,
    };
  }

  const rows = [];
  const serial = { connections: 1 }, adaptive = {};
  for (let i = 0; i < runs; i++) {
    rows.push({ server: `paced ${pace} MiB/s per response`, ...(await load(info.paced, 'serial', serial, true)) });
    rows.push({ server: `paced ${pace} MiB/s per response`, ...(await load(info.paced, 'adaptive', adaptive, true)) });
  }
  for (let i = 0; i < unpacedRuns; i++) {
    // Alternating order, so that neither always runs first.
    const pair = i % 2 ? [['adaptive', adaptive], ['serial', serial]] : [['serial', serial], ['adaptive', adaptive]];
    for (const [w, o] of pair) rows.push({ server: 'unpaced', ...(await load(info.unpaced, w, o, false)) });
  }
  child.send('exit');

  const paced = rows.filter((r) => r.server !== 'unpaced');
  const same = paced.every((r) => r.sha256 === paced[0].sha256 && r.bytes === paced[0].bytes);
  const med = (xs) => { const v = [...xs].sort((a, b) => a - b); return v[Math.floor((v.length - 1) / 2)]; };
  const ratio = (server) => {
    const s = rows.filter((r) => (r.server === 'unpaced') === (server === 'unpaced'));
    return med(s.filter((r) => r.which === 'serial').map((r) => r.s)) / med(s.filter((r) => r.which === 'adaptive').map((r) => r.s));
  };
  const summary = {
    mib, pace, size: info.size, node: process.version, cpus: (await import('node:os')).cpus().length,
    load: (await import('node:os')).loadavg().map((x) => +x.toFixed(1)),
    pacedSpeedup: ratio('paced'), unpacedSpeedup: unpacedRuns ? ratio('unpaced') : null, bytesEqual: same,
  };
  if (args.includes('--json')) { console.log(JSON.stringify({ summary, rows }, null, 1)); return; }
  console.log(`model: ${mib} MiB safetensors (${info.size} bytes) by URL; node ${process.version}, ${summary.cpus} CPUs, load ${summary.load.join(' ')}`);
  console.log('server                          load      wall s    MB/s  peak RSS MiB  peak ArrayBuffers MiB  connections  requests');
  for (const r of rows) {
    console.log(`${r.server.padEnd(31)} ${r.which.padEnd(9)} ${r.s.toFixed(2).padStart(6)} ${r.mbps.toFixed(1).padStart(7)} ${r.rssMiB.toFixed(0).padStart(13)} ${r.abMiB.toFixed(0).padStart(22)} ${String(r.connections).padStart(12)} ${String(r.requests).padStart(9)}`);
  }
  console.log(`paced: adaptive ${summary.pacedSpeedup.toFixed(2)}x serial (median wall time); unpaced: ${summary.unpacedSpeedup?.toFixed(3) ?? '-'}x; every byte equal (SHA-256 of the paced loads): ${same}`);
}
