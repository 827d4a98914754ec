// weightstream JS benchmark: throughput of the wasm module streaming and dequantizing, against the
// naive way (arrayBuffer() the whole file, parse the header in JS, slice tensors), in one run.
//
//   node --expose-gc bench/js/bench.mjs [--mib N] [--json] [--cases f16] [--f16 bf16,q4k,mlx]
//
// Inputs are synthetic and built here: a safetensors model of BF16 tensors (raw streaming), a
// GGUF of Q4_0 tensors (→ f32) and an MLX model of 4-bit affine weights with BF16 scales and
// biases, group 64 (→ f16). Each is streamed as a ReadableStream of 1 MiB chunks that reuse one
// buffer, so the source costs nothing and the numbers are the module's. Reported per case: MB/s
// of input (best of 3 runs after an untimed one), peak memory (RSS and ArrayBuffers above the baseline, sampled at
// every chunk), and for the raw case the same load done naively. `--cases f16` runs only the f16
// table (its rows narrowed by `--f16`: q4k, mlx, bf16).
import { gzipSync } from 'node:zlib';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', '..', 'wasm', 'dist');
const ws = await import(join(dist, 'weightstream.mjs'));
// dist/ is bundled (esbuild): the format table's reader comes from the sources, over the same instance.
const { formatTable } = await import(join(here, '..', '..', 'wasm', 'js', 'formats.mjs'));
const args = process.argv.slice(2);
const MiB = 1 << 20;
const SIZE = Number(args.includes('--mib') ? args[args.indexOf('--mib') + 1] : 512) * MiB;
const asJson = args.includes('--json');
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1].split(',') : null);
const onlyF16 = opt('--cases')?.includes('f16') ?? false;
const f16Rows = opt('--f16');
const gc = globalThis.gc ?? (() => {});

// ---- inputs -------------------------------------------------------------------------------------

const le64 = (v) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); return b; };
const u32 = (v) => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); return b; };
const cat = (...p) => { const o = new Uint8Array(p.reduce((s, x) => s + x.length, 0)); let a = 0; for (const x of p) { o.set(x, a); a += x.length; } return o; };

function safetensorsHeader(entries, metadata) {
  const h = metadata ? { __metadata__: metadata } : {};
  let off = 0;
  for (const [name, dtype, shape, bytes] of entries) { h[name] = { dtype, shape, data_offsets: [off, off + bytes] }; off += bytes; }
  let json = JSON.stringify(h);
  while ((json.length + 8) % 8) json += ' ';
  const j = new TextEncoder().encode(json);
  return { head: cat(le64(j.length), j), dataSize: off };
}

// A stream of `head` then `dataSize` bytes cut from `pattern` (the same buffer every time).
function streamOf(head, dataSize, pattern, onChunk) {
  let sent = -1;
  return new ReadableStream({
    pull(c) {
      if (sent < 0) { c.enqueue(head); sent = 0; return; }
      if (sent >= dataSize) { c.close(); return; }
      const n = Math.min(pattern.length, dataSize - sent);
      c.enqueue(n === pattern.length ? pattern : pattern.subarray(0, n));
      sent += n;
      onChunk?.();
    },
  });
}

// Raw: BF16 tensors of 16 MiB (a 7B model's layers are 32-128 MiB; smaller ones here give more
// tensor boundaries per byte, the harder case).
function rawModel() {
  const entries = [];
  for (let i = 0; i < SIZE / (16 * MiB); i++) entries.push([`layers.${i}.weight`, 'BF16', [4096, 2048], 16 * MiB]);
  const pattern = new Uint8Array(MiB).map((_, i) => (i * 2654435761) >>> 24);
  return { ...safetensorsHeader(entries), pattern };
}

// A GGUF of `n` tensors of GGML type `type` (4096 columns), each `tensorBytes` of blocks.
function ggufHead(type, n, tensorBytes, blockBytes, blockElems) {
  const enc = new TextEncoder();
  const parts = [enc.encode('GGUF'), u32(3), le64(n), le64(0)];
  for (let i = 0; i < n; i++) {
    const name = enc.encode(`blk.${i}.ffn.weight`);
    parts.push(le64(name.length), name, u32(2), le64(4096), le64(tensorBytes / blockBytes * blockElems / 4096), u32(type), le64(i * tensorBytes));
  }
  const head = cat(...parts);
  return cat(head, new Uint8Array((32 - (head.length % 32)) % 32));
}

// Q4_0: blocks of {f16 d, 16 bytes of nibbles}; d = 1/64 in every block (finite, so validation passes).
function q4Model() {
  const blockBytes = 18, blockElems = 32;
  const tensorBytes = 18 * MiB;  // 1 Mi blocks
  const n = Math.max(1, Math.round(SIZE / tensorBytes));
  const head = ggufHead(2, n, tensorBytes, blockBytes, blockElems);
  const pattern = new Uint8Array(blockBytes * 58254);  // ~1 MiB of whole blocks
  for (let b = 0; b < 58254; b++) {
    pattern[b * 18] = 0x00; pattern[b * 18 + 1] = 0x24;  // f16 1/64
    for (let k = 2; k < 18; k++) pattern[b * 18 + k] = (b * 31 + k * 7) & 0xFF;
  }
  return { head, dataSize: n * tensorBytes, pattern, elements: n * tensorBytes / blockBytes * blockElems };
}

// Q4_K, 4096 x 4096 per tensor (65,536 blocks of {f16 d, f16 dmin, 12 bytes of 6-bit scales and
// mins, 128 bytes of nibbles}, 9 MiB): d = 1/64, dmin = 1/128 (finite), the rest varied.
function q4kModel() {
  const blockBytes = 144, blockElems = 256, blocks = 7281;  // ~1 MiB of whole blocks
  const tensorBytes = 4096 * 4096 / blockElems * blockBytes;
  const n = Math.max(1, Math.round(SIZE / tensorBytes));
  const pattern = new Uint8Array(blockBytes * blocks);
  for (let b = 0; b < blocks; b++) {
    const o = b * blockBytes;
    pattern[o] = 0x00; pattern[o + 1] = 0x24; pattern[o + 2] = 0x00; pattern[o + 3] = 0x20;
    for (let k = 4; k < blockBytes; k++) pattern[o + k] = (b * 31 + k * 7) & 0xFF;
  }
  return { head: ggufHead(12, n, tensorBytes, blockBytes, blockElems), dataSize: n * tensorBytes, pattern, elements: n * 4096 * 4096,
    kernel: { format: 'Q4_K', elements: 4096 * 4096, inBytes: tensorBytes } };
}

// BF16, 4096 x 4096 per tensor (32 MiB): values of magnitude 2^-7..2^-4 with varied mantissas and
// signs, as trained weights are (no overflow to inf, no subnormals in f16).
function bf16Model() {
  const tensorBytes = 4096 * 4096 * 2;
  const entries = [];
  for (let i = 0; i < Math.max(1, Math.round(SIZE / tensorBytes)); i++) entries.push([`layers.${i}.weight`, 'BF16', [4096, 4096], tensorBytes]);
  const pattern = new Uint8Array(MiB);
  for (let i = 0; i < MiB; i += 2) {
    const h = Math.imul(i + 1, 2654435761) >>> 0;
    pattern[i] = h & 0xFF;
    pattern[i + 1] = ((h >>> 8) & 0x80) | 0x3C | ((h >>> 9) & 1);
  }
  const { head, dataSize } = safetensorsHeader(entries);
  return { head, dataSize, pattern, elements: dataSize / 2, kernel: { format: 'BF16', elements: 4096 * 4096, inBytes: tensorBytes } };
}

// MLX affine 4-bit, group 64: per layer `w.scales`, `w.biases` (BF16, [rows, K/64]) then
// `w.weight` (U32, [rows, K/8]); rows × K = 4096 × 4096.
function mlxModel() {
  const rows = 4096, k = 4096;
  const wBytes = rows * k / 2, sBytes = rows * (k / 64) * 2;
  const layers = Math.max(1, Math.round(SIZE / (wBytes + 2 * sBytes)));
  const entries = [];
  for (let i = 0; i < layers; i++) {
    entries.push([`l${i}.scales`, 'BF16', [rows, k / 64], sBytes], [`l${i}.biases`, 'BF16', [rows, k / 64], sBytes], [`l${i}.weight`, 'U32', [rows, k / 8], wBytes]);
  }
  const { head, dataSize } = safetensorsHeader(entries, { format: 'mlx' });
  // Every piece of the data is a valid BF16 scale or bias as well as packed weights: 0x3C00 = 0.0078125.
  const pattern = new Uint8Array(MiB).map((_, i) => (i & 1 ? 0x3C : (i >> 1) & 0x7F));
  return { head, dataSize, pattern, elements: layers * rows * k,
    kernel: { format: 'MlxAffine', elements: rows * k, inBytes: wBytes, bits: 4, group: 64, scaleBytes: sBytes } };
}

// ---- measurement --------------------------------------------------------------------------------

class Peak {
  constructor() { gc(); const m = process.memoryUsage(); this.base = m; this.rss = 0; this.ab = 0; }
  sample() {
    const m = process.memoryUsage();
    this.rss = Math.max(this.rss, m.rss - this.base.rss);
    this.ab = Math.max(this.ab, m.arrayBuffers - this.base.arrayBuffers);
  }
}

// `sample`: read the process's memory at every chunk (process.memoryUsage() reads /proc: about
// 10 µs a call, so the rate-only cases leave it out).
async function streamed(model, options, sample = true) {
  const peak = new Peak();
  const t0 = performance.now();
  let out = 0, tensors = 0;
  const stream = streamOf(model.head, model.dataSize, model.pattern, sample ? () => peak.sample() : null);
  for await (const ev of ws.createReader(options).read(stream)) {
    if (ev.type === 'tensorData') out += ev.data.length;
    else if (ev.type === 'tensorEnd') tensors++;
  }
  const s = (performance.now() - t0) / 1000;
  peak.sample();
  return { seconds: s, inMBs: (model.head.length + model.dataSize) / 1e6 / s, outMBs: out / 1e6 / s, out, tensors, peak };
}

// The naive load: the whole response in one ArrayBuffer, the header parsed in JS, each tensor a
// copy (what a loader that hands tensors on must do, as the file buffer is too big to keep).
async function naive(model) {
  const peak = new Peak();
  const t0 = performance.now();
  const stream = streamOf(model.head, model.dataSize, model.pattern, () => peak.sample());
  const buf = await new Response(stream).arrayBuffer();
  peak.sample();
  const dv = new DataView(buf);
  const n = Number(dv.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, n)));
  let tensors = 0;
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const slice = buf.slice(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
    tensors += slice.byteLength > 0 ? 1 : 0;
    peak.sample();
  }
  const s = (performance.now() - t0) / 1000;
  return { seconds: s, inMBs: buf.byteLength / 1e6 / s, tensors, peak };
}

// The same decode with nothing around it: one tensor of the model's shape, its stored bytes (the
// model's pattern repeated) already in wasm memory, decoded by ws_bench_decode (wasm/src/
// abi_bench.cpp) in pieces of the reader's read size into one output piece of the reader's output
// size, as the loader does. Fastest of calls until >= 0.5 s and >= 5 calls; output MB/s.
function kernelRate(wasm, model, dtype) {
  const k = model.kernel, MiBs = 1 << 20;
  const fmt = formatTable(wasm).byName.get(k.format);
  const input = wasm.alloc(k.inBytes), out = wasm.alloc(MiBs), words = wasm.alloc(4 * 15);
  const scales = k.scaleBytes ? wasm.alloc(k.scaleBytes) : 0, biases = k.scaleBytes ? wasm.alloc(k.scaleBytes) : 0;
  try {
    const fill = (at, n) => { for (let o = 0; o < n; o += model.pattern.length) wasm.u8.set(model.pattern.subarray(0, Math.min(model.pattern.length, n - o)), at + o); };
    fill(input, k.inBytes);
    if (scales) { fill(scales, k.scaleBytes); fill(biases, k.scaleBytes); }
    const u = wasm.u32, w = words >> 2;
    u.set([fmt.id, dtype === 'f16' ? 1 : 0, k.bits ?? 0, k.group ?? 0, wasm.dtypeNames.indexOf('BF16'), scales, biases,
      k.elements % 2 ** 32, Math.floor(k.elements / 2 ** 32), MiBs, out, MiBs, input, k.inBytes, 1], w);
    let bestS = Infinity, total = 0, calls = 0;
    while (total < 0.5 || calls < 5) {
      const t0 = performance.now();
      const st = wasm.x.ws_bench_decode(words);
      const s = (performance.now() - t0) / 1000;
      if (st !== 0) throw new Error(`ws_bench_decode ${k.format}: ${wasm.statusName(st)}`);
      bestS = Math.min(bestS, s); total += s; calls++;
    }
    return k.elements * (dtype === 'f16' ? 2 : 4) / 1e6 / bestS;
  } finally {
    for (const p of [input, out, words, scales, biases]) wasm.free(p);
  }
}

// One untimed run first (JIT warm-up: V8 optimizes the async generators of the pull loop and tiers
// the wasm kernels up over the first few hundred MiB), then the fastest of `runs`.
async function best(fn, runs = 3) {
  await fn();
  let b = null;
  for (let i = 0; i < runs; i++) {
    const r = await fn();
    if (!b || r.seconds < b.seconds) b = { ...r, peak: b && b.peak.rss > r.peak.rss ? b.peak : r.peak };
  }
  return b;
}

// ---- run ----------------------------------------------------------------------------------------

const wasm = await ws.init();
const results = {};
const raw = rawModel();
const q4 = q4Model();
const mlx = mlxModel();
if (!onlyF16) {
  results.raw = await best(() => streamed(raw, { dtype: 'raw' }));
  results.naive = await best(() => naive(raw), 2);
  results.q4 = await best(() => streamed(q4, { dtype: 'f32' }));
  results.mlx = await best(() => streamed(mlx, { dtype: 'f16', quantization: { group_size: 64, bits: 4 } }));
}
// f16 output on real-shaped models (4096 x 4096 weights): the JS path against the kernel alone.
const q4k = q4kModel(), bf16 = bf16Model();
const f16Cases = [
  ['Q4_K → f16', q4k, { dtype: 'f16' }, 'q4k'],
  ['MLX int4 → f16', mlx, { dtype: 'f16', quantization: { group_size: 64, bits: 4 } }, 'mlx'],
  ['BF16 → f16', bf16, { dtype: 'f16' }, 'bf16'],
].filter((c) => !f16Rows || f16Rows.includes(c[3]));
results.f16 = [];
for (const [name, model, options] of f16Cases) {
  const r = await best(() => streamed(model, options, false));
  results.f16.push({ name, inMB: (model.head.length + model.dataSize) / 1e6, outMBs: r.outMBs, kernelMBs: kernelRate(wasm, model, 'f16'), out: r.out });
}

const files = readdirSync(dist).filter((f) => f.endsWith('.mjs') || f.endsWith('.wasm'));
const size = { wasm: 0, wasmGz: 0, js: 0, jsGz: 0, jsBundleGz: 0 };
const jsAll = [];
for (const f of files) {
  const b = readFileSync(join(dist, f));
  if (f.endsWith('.wasm')) { size.wasm += b.length; size.wasmGz += gzipSync(b, { level: 9 }).length; } else { size.js += b.length; size.jsGz += gzipSync(b, { level: 9 }).length; jsAll.push(b); }
}
size.jsBundleGz = gzipSync(Buffer.concat(jsAll), { level: 9 }).length;

if (asJson) {
  console.log(JSON.stringify({ sizeMiB: SIZE / MiB, results, size, memory: wasm.memory.buffer.byteLength }, (k, v) => (v instanceof Peak ? { rss: v.rss, arrayBuffers: v.ab } : v)));
} else {
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  const row = (name, r, out) => `| ${name} | ${mb(raw.head.length + (r === results.q4 ? q4.dataSize : r === results.mlx ? mlx.dataSize : raw.dataSize))} | ${r.inMBs.toFixed(0)} MB/s | ${out ?? '-'} | ${mb(r.peak.rss)} | ${mb(r.peak.ab)} |`;
  console.log(`node ${process.version}, ${SIZE / MiB} MiB inputs, best of 3 after 1 untimed; wasm memory ${wasm.memory.buffer.byteLength / MiB} MiB\n`);
  if (!onlyF16) {
    console.log('| case | input | input rate | output rate | peak RSS above baseline | peak ArrayBuffers |');
    console.log('|---|---|---|---|---|---|');
    console.log(row('stream raw (createReader)', results.raw));
    console.log(row('naive: arrayBuffer() + JSON.parse + slice', results.naive));
    console.log(row('stream Q4_0 → f32', results.q4, `${results.q4.outMBs.toFixed(0)} MB/s`));
    console.log(row('stream MLX int4 → f16', results.mlx, `${results.mlx.outMBs.toFixed(0)} MB/s`));
  }
  // Ratios only where the streamed peak is measurable (sampling is per chunk; below 64 KiB it is noise).
  const ratio = (a, b) => (b >= 65536 ? `${(a / b).toFixed(0)}×` : `n/a (streamed peak < 64 KiB, naive ${mb(a)})`);
  console.log('\nf16 output, 4096 × 4096 weights: createReader() against the kernel alone (ws_bench_decode), same process\n');
  console.log('| case | input | createReader output rate | kernel output rate | ratio (target ≥ 0.7) |');
  console.log('|---|---|---|---|---|');
  for (const c of results.f16) console.log(`| ${c.name} | ${c.inMB.toFixed(1)} MB | ${c.outMBs.toFixed(0)} MB/s | ${c.kernelMBs.toFixed(0)} MB/s | ${(c.outMBs / c.kernelMBs).toFixed(2)}${c.outMBs / c.kernelMBs < 0.7 ? ' *' : ''} |`);
  if (!onlyF16) console.log(`\nnaive / streaming: time ${(results.naive.seconds / results.raw.seconds).toFixed(1)}×, peak RSS ${ratio(results.naive.peak.rss, results.raw.peak.rss)}, peak ArrayBuffers ${ratio(results.naive.peak.ab, results.raw.peak.ab)}`);
  console.log(`module: weightstream.wasm ${(size.wasm / 1024).toFixed(1)} KiB (${(size.wasmGz / 1024).toFixed(1)} KiB gzip); ${files.length - 1} ES modules ${(size.js / 1024).toFixed(1)} KiB (${(size.jsGz / 1024).toFixed(1)} KiB gzip one by one, ${(size.jsBundleGz / 1024).toFixed(1)} KiB as one gzip); total ${((size.wasmGz + size.jsGz) / 1024).toFixed(1)} KiB gzip (target ≤ 150)`);
}
