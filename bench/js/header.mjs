// weightstream JS benchmark: header reading through the package — inspect() and validate() — on
// llama.cpp's vocab GGUF files (0.6-1.8 MB headers, 30k-50k-token vocabularies) and a DeepSeek-V3-size
// safetensors header, against @huggingface/gguf's gguf() on the same GGUF files in the same process.
//
//   npm ci --prefix bench && node bench/js/header.mjs [--shared DIR] [--min-time S] [--cases a,b]
//
// Every call is given the file's bytes already in memory (a Uint8Array) — ours and @huggingface/
// gguf's alike (its `fetch` option answers its range requests from them) — so the figures are the
// parsers', not the disk's. MB = 10^6 header bytes (for the vocab files, the whole file). Each
// configuration runs once untimed, then until >= min-time seconds and >= 5 calls; the table shows
// the fastest call. The native figures are ws-bench-gguf's "ours mem" and ws-bench-header's
// "ours whole" columns, run by this script after the JS rows when build/release/bench holds them
// (--native DIR: elsewhere), else as bench/README.md records them (marked *). --cases
// runs only the named rows (llama-spm, bert-bge, deepseek-coder, gpt-2, deepseek-v3).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ws = await import(join(here, '..', '..', 'wasm', 'dist', 'weightstream.mjs'));
const { gguf } = await import(join(here, '..', 'node_modules', '@huggingface', 'gguf', 'dist', 'index.js'));
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const shared = opt('--shared', join(here, '..', '..', '..', 'shared'));
const minTime = Number(opt('--min-time', 0.5));
const cases = opt('--cases', null)?.split(',') ?? null;
const wanted = (name) => !cases || cases.includes(name);

// Native MB/s, measured in this run when the release benchmarks are built (ws-bench-gguf "ours
// mem", ws-bench-header deepseek-v3 "ours whole": the native reader on the same inputs), after the
// JS rows so that the two never share the machine; otherwise bench/README.md's recorded figures.
const RECORDED = { 'llama-spm': 1034, 'bert-bge': 934, 'deepseek-coder': 827, 'gpt-2': 808, 'deepseek-v3': 1331 };
const benchDir = opt('--native', join(here, '..', '..', 'build', 'release', 'bench'));
function nativeFigures(names) {
  const out = {};
  const run = (exe, argv) => {
    const path = join(benchDir, exe);
    if (!existsSync(path)) return null;
    return execFileSync(path, argv, { encoding: 'utf8', maxBuffer: 1 << 24 });
  };
  const ggufNames = names.filter((n) => n !== 'deepseek-v3');
  if (ggufNames.length) {
    const text = run('ws-bench-gguf', ['--shared', shared, ...ggufNames.flatMap((n) => ['--case', n])]);
    // The "From memory" table: "name | ours-mem ggml-buf mem/buf | ...".
    const table = text?.slice(text.indexOf('From memory')) ?? '';
    for (const n of ggufNames) {
      const m = new RegExp(`^${n}\\s+\\|\\s+(\\d+)`, 'm').exec(table);
      if (m) out[n] = Number(m[1]);
    }
  }
  if (names.includes('deepseek-v3')) {
    const text = run('ws-bench-header', ['--case', 'deepseek-v3', '--no-linearity']);
    const m = /^deepseek-v3\s+[\d,]+\s+[\d,]+\s+\|\s+\d+\s+(\d+)/m.exec(text ?? '');
    if (m) out['deepseek-v3'] = Number(m[1]);
  }
  return out;
}

// DeepSeek-V3 as if saved in one file, the shape ws-bench-header builds (synth_header.cpp): 61
// layers (3 dense, 58 MoE x 256 experts x gate/up/down, F8_E4M3 weight + F32 weight_scale_inv),
// MLA attention, the MTP layer 61; tensors sorted by dtype descending then name, compact JSON.
function deepseekHeader() {
  const t = [];
  const add = (name, dtype, shape) => t.push([name, dtype, shape]);
  const q = (name, shape) => { add(`${name}.weight`, 'F8_E4M3', shape); add(`${name}.weight_scale_inv`, 'F32', shape.map((d) => Math.ceil(d / 128))); };
  add('model.embed_tokens.weight', 'BF16', [129280, 7168]);
  add('model.norm.weight', 'BF16', [7168]);
  add('lm_head.weight', 'BF16', [129280, 7168]);
  for (let l = 0; l < 62; l++) {
    const p = `model.layers.${l}`;
    add(`${p}.input_layernorm.weight`, 'BF16', [7168]);
    add(`${p}.post_attention_layernorm.weight`, 'BF16', [7168]);
    q(`${p}.self_attn.q_a_proj`, [1536, 7168]);
    add(`${p}.self_attn.q_a_layernorm.weight`, 'BF16', [1536]);
    q(`${p}.self_attn.q_b_proj`, [24576, 1536]);
    q(`${p}.self_attn.kv_a_proj_with_mqa`, [576, 7168]);
    add(`${p}.self_attn.kv_a_layernorm.weight`, 'BF16', [512]);
    q(`${p}.self_attn.kv_b_proj`, [32768, 512]);
    q(`${p}.self_attn.o_proj`, [7168, 16384]);
    if (l === 61) for (const [n, shape] of [['enorm', [7168]], ['hnorm', [7168]], ['eh_proj', [7168, 14336]], ['embed_tokens', [129280, 7168]], ['shared_head.norm', [7168]], ['shared_head.head', [129280, 7168]]]) add(`${p}.${n}.weight`, 'BF16', shape);
    if (l < 3) {
      for (const m of ['gate_proj', 'up_proj']) q(`${p}.mlp.${m}`, [18432, 7168]);
      q(`${p}.mlp.down_proj`, [7168, 18432]);
      continue;
    }
    add(`${p}.mlp.gate.weight`, 'BF16', [256, 7168]);
    add(`${p}.mlp.gate.e_score_correction_bias`, 'F32', [256]);
    for (let e = 0; e < 256; e++) {
      for (const m of ['gate_proj', 'up_proj']) q(`${p}.mlp.experts.${e}.${m}`, [2048, 7168]);
      q(`${p}.mlp.experts.${e}.down_proj`, [7168, 2048]);
    }
    for (const m of ['gate_proj', 'up_proj']) q(`${p}.mlp.shared_experts.${m}`, [2048, 7168]);
    q(`${p}.mlp.shared_experts.down_proj`, [7168, 2048]);
  }
  const bits = { F8_E4M3: 1, F32: 4, BF16: 2 };
  t.sort((a, b) => (a[1] === b[1] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? 1 : -1));
  const h = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const [name, dtype, shape] of t) {
    const n = shape.reduce((x, y) => x * y, 1) * bits[dtype];
    h[name] = { dtype, shape, data_offsets: [off, off + n] };
    off += n;
  }
  let json = JSON.stringify(h);
  while ((json.length + 8) % 8) json += ' ';
  const j = new TextEncoder().encode(json);
  // The header and no data, given as a stream of unknown size: inspect() stops at the header;
  // validate() reads it all and reports TruncatedData (the data section is declared, not there).
  const out = new Uint8Array(8 + j.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(j.length), true);
  out.set(j, 8);
  return { bytes: out, headerBytes: j.length, tensors: t.length };
}

// A fresh table's first get() (a scan of the records; the name hash comes after 8 lookups): the
// fastest of 10, each on a table just made.
async function firstGet(stream, name) {
  let best = Infinity;
  for (let r = 0; r < 10; r++) {
    const h = await ws.inspect(stream());
    const t0 = performance.now();
    if (!h.tensors.get(name)) throw new Error(`no ${name}`);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

async function fastest(fn) {
  await fn();
  let best = Infinity, total = 0, calls = 0;
  while (total < minTime || calls < 5) {
    const t0 = performance.now();
    await fn();
    const s = (performance.now() - t0) / 1000;
    best = Math.min(best, s); total += s; calls++;
  }
  return best;
}

// @huggingface/gguf reads through fetch with Range requests: answered from the bytes in memory.
const memFetch = (bytes) => async (_url, init) => {
  const m = /bytes=(\d+)-(\d+)/.exec(init?.headers?.Range ?? init?.headers?.range ?? '');
  const body = m ? bytes.subarray(Number(m[1]), Math.min(bytes.length, Number(m[2]) + 1)) : bytes;
  return new Response(body, { status: m ? 206 : 200, headers: { 'Content-Length': String(body.length) } });
};

const rows = [];
let lazyCosts = null;
for (const name of ['llama-spm', 'bert-bge', 'deepseek-coder', 'gpt-2'].filter(wanted)) {
  const bytes = new Uint8Array(readFileSync(join(shared, 'testdata', 'real', 'gguf', `ggml-vocab-${name}.gguf`)));
  const mb = bytes.length / 1e6;
  const r = { name, bytes: bytes.length };
  const seen = await ws.inspect(bytes);
  const hfSeen = await gguf('http://local/x.gguf', { fetch: memFetch(bytes) });
  if (Object.keys(hfSeen.metadata).length - 3 !== seen.gguf.kv.length) throw new Error(`${name}: @huggingface/gguf read ${Object.keys(hfSeen.metadata).length} metadata entries, we ${seen.gguf.kv.length} key-values`);
  r.inspect = mb / await fastest(() => ws.inspect(bytes));
  r.validate = mb / await fastest(() => ws.validate(bytes));
  r.hf = mb / await fastest(() => gguf('http://local/x.gguf', { fetch: memFetch(bytes) }));
  rows.push(r);
}
if (wanted('deepseek-v3')) {
  const d = deepseekHeader();
  const mb = d.headerBytes / 1e6;
  const stream = () => new ReadableStream({ start(c) { for (let o = 0; o < d.bytes.length; o += 1 << 20) c.enqueue(d.bytes.subarray(o, o + (1 << 20))); c.close(); } });
  const seen = await ws.inspect(stream());
  if (seen.tensors.length !== d.tensors) throw new Error(`deepseek-v3: ${seen.tensors.length} tensors, built ${d.tensors}`);
  const v = await ws.validate(stream());
  if (v.error?.code !== 'TruncatedData' || v.tensors !== d.tensors) throw new Error(`deepseek-v3: validate said ${JSON.stringify(v.error)}`);
  rows.push({ name: 'deepseek-v3', bytes: d.headerBytes, tensors: d.tensors, inspect: mb / await fastest(() => ws.inspect(stream())), validate: mb / await fastest(() => ws.validate(stream())), hf: null });
  // The plain arrays of before 0.4 (the plainArrays option: an object per tensor), and what the
  // lazy table costs when it is used: one get(), a loop of get()s, every object.
  const old = await ws.inspect(stream(), { plainArrays: true });
  if (!Array.isArray(old.tensors) || JSON.stringify(old.tensors) !== JSON.stringify(seen.tensors)) throw new Error('deepseek-v3: plainArrays lists other tensors');
  rows.push({ name: 'deepseek-v3, plainArrays', bytes: d.headerBytes, tensors: d.tensors, inspect: mb / await fastest(() => ws.inspect(stream(), { plainArrays: true })), validate: null, hf: null, native: 'deepseek-v3' });
  const names = ['lm_head.weight', 'model.layers.60.mlp.experts.255.down_proj.weight_scale_inv', 'model.embed_tokens.weight'];
  const ms = async (fn) => 1000 * await fastest(fn);
  lazyCosts = {
    held: seen.tensors.heldBytes,
    firstGet: await firstGet(stream, names[1]),
    getAfterHash: await ms(() => { for (const n of names) seen.tensors.get(n); }) / names.length,
    all: await ms(() => { globalThis.kept = Array.from(seen.tensors); }),
  };
  // plan() of the same header (issue #31): its outputs as a view over columns (0.6) against every
  // output's object made (plainArrays: as plan() listed them before 0.6), f16 and raw.
  const p = await ws.plan(stream(), { dtype: 'f16' });
  const pOld = await ws.plan(stream(), { dtype: 'f16', plainArrays: true });
  if (JSON.stringify(p.tensors) !== JSON.stringify(pOld.tensors) || p.outputBytes !== pOld.outputBytes) throw new Error('deepseek-v3: plainArrays plans other outputs');
  lazyCosts.plan = {
    outputs: p.tensors.length,
    f16: await ms(() => ws.plan(stream(), { dtype: 'f16' })),
    f16Plain: await ms(() => ws.plan(stream(), { dtype: 'f16', plainArrays: true })),
    raw: await ms(() => ws.plan(stream(), { dtype: 'raw' })),
    rawPlain: await ms(() => ws.plan(stream(), { dtype: 'raw', plainArrays: true })),
    inspect: 1000 * mb / rows.find((r) => r.name === 'deepseek-v3').inspect,
  };
}

const measured = nativeFigures([...new Set(rows.map((r) => r.native ?? r.name))]);
const f = (x) => (x === null ? '-' : x.toFixed(0));
console.log(`node ${process.version}; fastest call of >= ${minTime} s; MB/s of header bytes; native = ${Object.keys(measured).length ? `measured now (${benchDir}), * = bench/README.md's recorded figure` : "bench/README.md's recorded figure (build the release benchmarks to measure it)"}\n`);
console.log('| file | header B | inspect() MB/s | validate() MB/s | native MB/s | inspect / native (target ≥ 0.5) | validate / native | @huggingface/gguf MB/s | inspect / @huggingface/gguf (target ≥ 20) |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const key = r.native ?? r.name;
  const n = measured[key] ?? RECORDED[key];
  const nText = measured[key] ? `${n}` : `${n} *`;
  const mark = (x, t) => `${x.toFixed(2)}${x < t ? ' *' : ''}`;
  console.log(`| ${r.name}${r.tensors ? ` (${r.tensors.toLocaleString('en')} tensors)` : ''} | ${r.bytes.toLocaleString('en')} | ${f(r.inspect)} | ${f(r.validate)} | ${nText} | ${mark(r.inspect / n, 0.5)} | ${r.validate === null ? '-' : mark(r.validate / n, 0.5)} | ${f(r.hf)} | ${r.hf ? `${(r.inspect / r.hf).toFixed(1)}${r.inspect / r.hf < 20 ? ' *' : ''}` : '-'} |`);
}
if (lazyCosts) {
  console.log(`\ndeepseek-v3's lazy table: ${(lazyCosts.held / 1e6).toFixed(1)} MB held (records + names); the first get() ` +
    `${lazyCosts.firstGet.toFixed(2)} ms (a scan), a get() once hashed ${(lazyCosts.getAfterHash * 1000).toFixed(1)} µs; ` +
    `every object (Array.from) ${lazyCosts.all.toFixed(1)} ms`);
  const p = lazyCosts.plan;
  console.log(`deepseek-v3's plan() (${p.outputs.toLocaleString('en')} outputs): f16 ${p.f16.toFixed(1)} ms as a view, ` +
    `${p.f16Plain.toFixed(1)} ms with plainArrays (${(p.f16Plain / p.f16).toFixed(2)}x); raw ${p.raw.toFixed(1)} ms, ` +
    `${p.rawPlain.toFixed(1)} ms (${(p.rawPlain / p.raw).toFixed(2)}x); inspect() ${p.inspect.toFixed(1)} ms`);
}
