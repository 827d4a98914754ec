// Memory of inspect() on a Kimi-size sharded model: a model.safetensors.index.json of 500k entries
// (≈ 60 MB, as the Hub's largest indexes) and its 100 shards (tiny tensors: the shards are their
// headers, ≈ 8 MB, and 3 MB of data), given as bytes in memory (inspect() reads the headers). What the lazy tensor
// table holds, what the JS heap and array buffers keep after the call (with the result alive, after
// a full GC), the peak of wasm memory during it, and the same with `plainArrays: true` (an object
// per tensor, as before 0.4), in the same run.
//
//   node --expose-gc bench/js/sharded-memory.mjs [--tensors N] [--shards S]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ws = await import(join(here, '..', '..', 'wasm', 'dist', 'weightstream.mjs'));
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : def);
const N = opt('--tensors', 500000), S = opt('--shards', 100);
if (typeof gc !== 'function') throw new Error('run with node --expose-gc');

// Names as an MoE checkpoint's: layer, expert, projection, weight or its scale (≈ 60 B each).
const per = Math.ceil(N / S);
const shardName = (s) => `model-${String(s + 1).padStart(5, '0')}-of-${String(S).padStart(5, '0')}.safetensors`;
const nameOf = (i) => `model.layers.${Math.floor(i / 6144)}.mlp.experts.${Math.floor(i / 6) % 1024}.${['gate_proj', 'up_proj', 'down_proj'][Math.floor(i / 2) % 3]}.${i % 2 ? 'weight_scale_inv' : 'weight'}`;
const enc = new TextEncoder();

function indexBytes() {
  const parts = ['{"metadata":{"total_size":', String(N / 2 * 12), '},"weight_map":{'];
  for (let i = 0; i < N; i++) parts.push(`${i ? ',' : ''}"${nameOf(i)}":"${shardName(Math.floor(i / per))}"`);
  parts.push('}}');
  return enc.encode(parts.join(''));
}

function shardHeader(s) {
  const h = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (let i = s * per; i < Math.min(N, (s + 1) * per); i++) {
    h[nameOf(i)] = { dtype: i % 2 ? 'F32' : 'F8_E4M3', shape: i % 2 ? [1, 1] : [1, 8], data_offsets: [off, off + (i % 2 ? 4 : 8)] };
    off += i % 2 ? 4 : 8;
  }
  let json = JSON.stringify(h);
  while (json.length % 8) json += ' ';
  const j = enc.encode(json);
  const out = new Uint8Array(8 + j.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(j.length), true);
  out.set(j, 8);
  return out;
}

const index = indexBytes();
const shards = Array.from({ length: S }, (_, s) => shardHeader(s));
const shardBytes = shards.reduce((a, b) => a + b.length, 0);
const source = () => ({ index, shards: shards.map((b, s) => ({ name: shardName(s), source: b })) });

const wasm = await ws.init();
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
// After full GCs, with turns of the event loop between them (array buffers' backing stores are
// released by tasks that run after the GC).
async function usage() {
  for (let k = 0; k < 4; k++) { gc(); await new Promise((r) => setTimeout(r, 20)); }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
}

async function measure(options) {
  const before = await usage();
  let peakWasm = wasm.memory.buffer.byteLength;
  const timer = setInterval(() => { peakWasm = Math.max(peakWasm, wasm.memory.buffer.byteLength); }, 1);
  const t0 = performance.now();
  const info = await ws.inspect(source(), options);
  const ms = performance.now() - t0;
  clearInterval(timer);
  peakWasm = Math.max(peakWasm, wasm.memory.buffer.byteLength);
  if (info.tensors.length !== N) throw new Error(`${info.tensors.length} tensors, built ${N}`);
  const after = await usage();
  return { info, ms, heap: after.heap - before.heap, buffers: after.buffers - before.buffers, peakWasm };
}

// The loader holds the index's table and every shard's until the model is ready; its arena grows
// by retries (at most 8: fewer than 100 shards' worth), so it is given its size: a first guess from
// the bytes, then what the loader said it needs.
let arenaSize = 2 * (index.length + shardBytes);
for (;;) {
  try { await ws.inspect(source(), { arenaSize }); break; } catch (e) {
    const m = /arenaSize: (\d+)/.exec(e.hint ?? '');
    if (e.code !== 'ArenaExhausted' || !m) throw e;
    arenaSize = Math.ceil(Number(m[1]) * 1.05);
  }
}
const lazy = await measure({ arenaSize });
const probe = nameOf(N - 1);
if (lazy.info.tensors.get(probe)?.shard !== shardName(S - 1)) throw new Error(`get(${probe}) wrong`);
const held = lazy.info.tensors.heldBytes;
lazy.info = null;
const plain = await measure({ arenaSize, plainArrays: true });
if (plain.info.tensors.at(-1).name !== probe) throw new Error('plainArrays: wrong last tensor');
plain.info = null;

console.log(`node ${process.version}; ${N.toLocaleString('en')} tensors in ${S} shards; index.json ${mb(index.length)}, shards ${mb(shardBytes)} (bytes in memory); arenaSize ${mb(arenaSize)}\n`);
console.log('| inspect() | time | JS heap kept | array buffers kept | wasm memory peak | the table view holds |');
console.log('|---|---|---|---|---|---|');
for (const [name, r] of [['lazy table (default)', lazy], ['plainArrays: true (before 0.4)', plain]]) {
  console.log(`| ${name} | ${(r.ms / 1000).toFixed(2)} s | ${mb(r.heap)} | ${mb(r.buffers)} | ${mb(r.peakWasm)} | ${r === lazy ? `${mb(held)} (${(held / N).toFixed(0)} B/tensor)` : '-'} |`);
}
