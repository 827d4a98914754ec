// The golden comparison of issue #16: what the JS package says about every fixture, as JSON lines,
// so that two builds of the package (before and after a change of how it loads models) can be
// compared line by line.
//
//   node tests/js/make-goldens.mjs <dist/weightstream.mjs> <out.jsonl> [--full] [--only REGEX]
//
// One line per (case, call): {case, call, out}, keys sorted, the repository's path as <root>.
// Calls: validate, inspect, createReader with dtype raw / f32 / f16 (header events, each output's
// descriptor and the SHA-256 of its bytes, the event order, the end event, the last progress) and
// loadToWebGPU with tests/js/fake-gpu.mjs's FakeDevice (each buffer's SHA-256). A call that throws
// records the error (code, offset, tensor, shard, found, expected, message) and what it had emitted
// before. Without --full, long arrays in lines over LINE_LIMIT are replaced by their count and
// SHA-256 (compact()), which keeps golden/before.jsonl small; --full writes everything (for
// finding where two builds differ inside such an array).
//
// Cases (see cases()): tests/data/conventions/** (each convention model as a whole, each of its
// data files alone, paths and streams, with and without the quantization option where it matters),
// tests/data/{real,synthetic}/**, ../shared/testdata files not already among those, and every valid
// case of tests/corpus/{safetensors,gguf} (the invalid ones: validate and inspect only).
// tests/data/split-gguf is not read: the JS package does not load split GGUF models.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FakeDevice, FakeBuffer } from './fake-gpu.mjs';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const shared = resolve(repo, '..', 'shared');
const conventions = join(repo, 'tests', 'data', 'conventions');
// Lines longer than this get their long arrays hashed (compact()); the golden file stays < 2 MB.
const LINE_LIMIT = 2048;
const ARRAY_LIMIT = 16;

const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const read = (p) => new Uint8Array(readFileSync(p));

// A ReadableStream over `bytes` in pieces of `piece` bytes: the sequential path of the loader.
function streamOf(bytes, piece) {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) { c.close(); return; }
      const n = Math.min(piece, bytes.length - at);
      c.enqueue(bytes.slice(at, at + n));
      at += n;
    },
  });
}

const filesIn = (dir) => readdirSync(dir).sort().map((f) => join(dir, f)).filter((p) => statSync(p).isFile());
const STREAM_PIECE = 4093;  // a prime: pieces end anywhere in headers and tensors

// The cases, in a fixed order: {id, source: () => a fresh source, options, calls}. `calls`: 'all'
// (validate, inspect, createReader ×3, loadToWebGPU ×3) or 'verdict' (validate, inspect).
export function cases() {
  const out = [];
  const add = (id, source, options = {}, calls = 'all') => out.push({ id, source, options, calls });
  const rel = (p) => relative(repo, p);
  const configOf = (dir) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const pathAndStream = (p, options = {}, suffix = '') => {
    add(`${rel(p)}${suffix}`, () => p, options);
    const bytes = read(p);
    add(`${rel(p)}${suffix} (stream)`, () => streamOf(bytes, STREAM_PIECE), options);
  };

  // MLX: the file with its config.json's quantization; the file alone (a path with
  // quantization: false: the package reads nothing beside it) and as bytes.
  const mlxDirs = ['mlx', 'mlx-bits', 'mlx-overrides'].map((d) => join(conventions, d));
  for (const dir of mlxDirs) {
    const file = join(dir, 'model.safetensors');
    pathAndStream(file, { quantization: configOf(dir) }, ' +quantization');
    add(`${rel(file)} (alone)`, () => file, { quantization: false });
  }
  // A sharded MLX model: the index with and without quantization, {index, shards} from buffers
  // and streams, and each shard alone.
  {
    const dir = join(conventions, 'sharded-mlx');
    const index = join(dir, 'model.safetensors.index.json');
    const shards = filesIn(dir).filter((p) => p.endsWith('.safetensors'));
    const quantization = configOf(dir);
    add(`${rel(index)} +quantization`, () => index, { quantization });
    add(`${rel(index)} (no quantization)`, () => index, { quantization: false });
    const indexBytes = read(index);
    const shardBytes = shards.map((p) => ({ name: p.split('/').pop(), bytes: read(p) }));
    add(`${rel(index)} {index, shards} buffers +quantization`, () => ({ index: indexBytes, shards: shardBytes.map((s) => ({ name: s.name, source: s.bytes })) }), { quantization });
    add(`${rel(index)} {index, shards} streams +quantization`, () => ({ index: streamOf(indexBytes, STREAM_PIECE), shards: shardBytes.map((s) => ({ name: s.name, source: streamOf(s.bytes, STREAM_PIECE) })) }), { quantization });
    for (const s of shards) add(`${rel(s)} (alone)`, () => s, { quantization: false });
  }
  // Ollama: the manifest (blobs found beside it), from streams, and each blob alone.
  for (const d of ['ollama', 'ollama-inferred']) {
    const dir = join(conventions, d);
    const manifest = join(dir, 'manifest.json');
    add(rel(manifest), () => ({ ollama: manifest }));
    const mBytes = read(manifest);
    const blobs = join(dir, 'blobs');
    add(`${rel(manifest)} (streams)`, () => ({ ollama: streamOf(mBytes, STREAM_PIECE), blobs: (f) => streamOf(read(join(blobs, f)), STREAM_PIECE) }));
    for (const b of filesIn(blobs)) pathAndStream(b);
  }
  // UQFF directories: the file list (paths, in a shuffled order; streams), each file alone.
  for (const d of ['uqff', 'uqff-f8q8']) {
    const dir = join(conventions, d);
    const names = filesIn(dir).filter((p) => !p.endsWith('config.json'));
    add(`${rel(dir)}/ {uqff}`, () => ({ uqff: [...names].reverse() }));
    add(`${rel(dir)}/ {uqff} (streams)`, () => ({ uqff: names.map((p) => ({ name: p.split('/').pop(), source: streamOf(read(p), STREAM_PIECE) })) }));
    for (const p of names) add(`${rel(p)} (alone)`, () => p, { quantization: false });
  }
  // The malformed neighbours (expected.json says how each is opened); mlx-empty-rows last: the
  // package before issue #16 trapped on it (a RuntimeError that leaves the wasm instance broken).
  const malformed = JSON.parse(readFileSync(join(conventions, 'malformed', 'expected.json'), 'utf8')).cases;
  malformed.sort((a, b) => (a.dir === 'mlx-empty-rows') - (b.dir === 'mlx-empty-rows'));
  const trailing = [];
  for (const c of malformed) {
    const dir = join(conventions, 'malformed', c.dir);
    const entry = join(dir, c.open);
    const push = c.dir === 'mlx-empty-rows' ? (...a) => trailing.push(a) : add;
    if (c.kind === 'mlx') {
      // The config as the option (it may itself be what is malformed), and the file alone.
      push(`${rel(entry)} +quantization`, () => entry, { quantization: configOf(dir) });
      push(`${rel(entry)} (alone)`, () => entry, { quantization: false });
    } else if (c.kind === 'ollama') {
      push(rel(entry), () => ({ ollama: entry }));
    } else {
      const names = filesIn(dir).filter((p) => !p.endsWith('config.json'));
      push(`${rel(dir)}/ {uqff}`, () => ({ uqff: names }));
    }
  }

  // Real and synthetic single files (tests/data), then ../shared/testdata files that differ.
  const data = join(repo, 'tests', 'data');
  const singles = [];
  for (const sub of ['real/safetensors', 'real/gguf', 'synthetic/gguf']) {
    for (const p of filesIn(join(data, sub))) if (/\.(safetensors|gguf)$/.test(p)) singles.push([p, `${sub}/${p.split('/').pop()}`]);
  }
  for (const [p] of singles) pathAndStream(p);
  for (const [p, sub] of singles) {
    const twin = join(shared, 'testdata', sub);
    if (existsSync(twin) && sha256(read(twin)) !== sha256(read(p))) add(`../shared/testdata/${sub}`, () => twin);
  }

  // The conformance corpora: valid cases in full, the rest for their verdict.
  for (const kind of ['safetensors', 'gguf']) {
    for (const p of filesIn(join(repo, 'tests', 'corpus', kind)).filter((f) => f.endsWith(`.${kind}`))) {
      add(rel(p), () => p, {}, p.split('/').pop().startsWith('ok_') ? 'all' : 'verdict');
    }
  }
  for (const a of trailing) add(...a);
  return out;
}

// --- turning results into comparable JSON ---------------------------------------------------

const rootRe = new RegExp(repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g');
const sharedRe = new RegExp(shared.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g');
const scrub = (s) => s.replace(sharedRe, '<root>/../shared').replace(rootRe, '<root>');

// A plain JSON value: bigints as strings, bytes as {bytes, sha256}, FakeBuffers as their size,
// usage, label and data's SHA-256, functions dropped, paths as <root>, keys sorted.
export function plain(v) {
  if (v === null || v === undefined) return v ?? null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return scrub(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'boolean') return v;
  if (typeof v === 'function') return undefined;
  if (v instanceof FakeBuffer) return { label: scrub(String(v.label)), size: v.size, usage: v.usage, sha256: v.data ? sha256(v.data) : null };
  if (v instanceof ArrayBuffer) return { bytes: v.byteLength, sha256: sha256(new Uint8Array(v)) };
  if (ArrayBuffer.isView(v)) return { bytes: v.byteLength, sha256: sha256(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
  if (v instanceof Error) return errorOf(v);
  if (v instanceof URL) return scrub(v.href);
  if (Array.isArray(v)) return v.map((x) => plain(x) ?? null);
  if (v instanceof Map) return plain(Object.fromEntries(v));
  // inspect()'s lazy tables (tensors, logical weights): their plain objects, as listed before 0.4.
  if (typeof v.toJSON === 'function') return plain(v.toJSON());
  const out = {};
  for (const k of Object.keys(v).sort()) {
    const x = plain(v[k]);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

function errorOf(e) {
  const o = { name: e.name, code: e.code ?? null, message: scrub(String(e.message)) };
  for (const k of ['offset', 'tensor', 'shard', 'found', 'expected']) if (k in e) o[k] = plain(e[k]);
  return { error: o };
}

// A line over LINE_LIMIT with its arrays of more than ARRAY_LIMIT elements as {count, sha256} of
// their JSON, and objects of more than ARRAY_LIMIT keys as {keys, sha256}. Applied to both sides
// of a comparison alike.
export function compact(value) {
  if (JSON.stringify(value).length <= LINE_LIMIT) return value;
  const walk = (v) => {
    if (Array.isArray(v)) {
      const items = v.map(walk);
      return items.length > ARRAY_LIMIT ? { count: items.length, sha256: sha256(JSON.stringify(items)) } : items;
    }
    if (v && typeof v === 'object') {
      const entries = Object.entries(v).map(([k, x]) => [k, walk(x)]);
      return entries.length > ARRAY_LIMIT ? { keys: entries.length, sha256: sha256(JSON.stringify(entries)) } : Object.fromEntries(entries);
    }
    return v;
  };
  return walk(value);
}

// --- the calls ------------------------------------------------------------------------------

async function settle(f) {
  try { return await f(); } catch (e) { return errorOf(e); }
}

// createReader(dtype): header events (in full), the order of header / begin / end events (apart), each
// output (descriptor at its end, SHA-256 of its bytes, whether its pieces tiled it), the end event
// and the last progress report (without its rate; intermediate reports depend on timing).
async function readerRun(ws, c, dtype) {
  const headers = [], order = [], outputs = [];
  // Outputs being written, by shard and name: the package before issue #16 streamed the shards of
  // a model concurrently, so tensors of different shards interleaved.
  const open = new Map();
  const key = (ev) => `${ev.shard ?? ''}\0${ev.tensor.name}`;
  let end = null, last = null, error = null;
  try {
    const options = { ...c.options, dtype, onProgress: (p) => { last = p; } };
    for await (const ev of ws.createReader(options).read(c.source())) {
      switch (ev.type) {
        case 'header': headers.push(ev); order.push(`H ${ev.shard ?? ''}`); break;
        case 'tensorBegin':
          order.push(`B ${ev.tensor.name}`);
          open.set(key(ev), { begin: plain(ev.tensor), hash: createHash('sha256'), at: 0, tiled: true });
          break;
        case 'tensorData': {
          const cur = open.get(key(ev));
          if (!cur) { order.push(`D ${ev.tensor.name} without a begin`); break; }
          if (ev.offset !== cur.at) cur.tiled = false;
          cur.hash.update(ev.data);
          cur.at += ev.data.length;
          break;
        }
        case 'tensorEnd': {
          order.push(`E ${ev.tensor.name}`);
          const cur = open.get(key(ev));
          open.delete(key(ev));
          const d = plain(ev.tensor);
          if (!cur) { outputs.push({ shard: ev.shard, tensor: d, begin: null }); break; }
          const o = { shard: ev.shard, tensor: d, sha256: cur.hash.digest('hex'), bytes: cur.at, tiled: cur.tiled && cur.at === ev.tensor.byteLength };
          if (JSON.stringify(cur.begin) !== JSON.stringify(d)) o.beginDescriptor = cur.begin;
          outputs.push(o);
          break;
        }
        case 'end': end = ev; order.push('END'); break;
        default: break;
      }
    }
  } catch (e) {
    error = errorOf(e).error;
  }
  const progress = last ? { bytes: last.bytes, totalBytes: last.totalBytes, tensors: last.tensors } : null;
  // Headers and outputs by file and name (stable for equal keys): the order is in `order`, so that
  // a change of order and a change of content show apart.
  const byFile = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  headers.sort((a, b) => byFile(a.shard ?? '', b.shard ?? ''));
  outputs.sort((a, b) => byFile(a.shard ?? '', b.shard ?? '') || byFile(a.tensor.name, b.tensor.name));
  // `order`: the outputs' begin / end events; `headersAt`: for each header event, its file and how
  // many output events came before it.
  const headersAt = [];
  const events = [];
  for (const e of order) if (e.startsWith('H ')) headersAt.push(`${e.slice(2)} @${events.length}`); else events.push(e);
  return { headers, headersAt, order: events, outputs, end, progress, error };
}

async function gpuRun(ws, c, dtype) {
  const device = new FakeDevice();
  let last = null;
  const r = await settle(async () => {
    const m = await ws.loadToWebGPU(device, c.source(), { ...c.options, dtype, onProgress: (p) => { last = p; } });
    const out = plain(m);
    m.destroy();
    return out;
  });
  const progress = last ? { bytes: last.bytes, totalBytes: last.totalBytes, tensors: last.tensors } : null;
  return { result: r, progress, buffers: device.buffers.length, live: device.live().length, violations: device.violations };
}

export const CALLS = ['validate', 'inspect', 'read raw', 'read f32', 'read f16', 'gpu raw', 'gpu f32', 'gpu f16'];

async function call(ws, c, name) {
  switch (name) {
    case 'validate': return settle(() => ws.validate(c.source(), c.options));
    case 'inspect': return settle(() => ws.inspect(c.source(), c.options));
    default: {
      const [what, dtype] = name.split(' ');
      return what === 'read' ? readerRun(ws, c, dtype) : gpuRun(ws, c, dtype);
    }
  }
}

// Every (case, call) line of one build of the package, as plain values. Unless `full`, what a
// line repeats of an earlier line of its case is written as a reference (dedupe()), and long
// arrays are hashed (compact()).
export async function* goldenLines(ws, { only = null, full = false } = {}) {
  for (const c of cases()) {
    if (only && !only.test(c.id)) continue;
    const seen = { inspect: null, read: {} };
    for (const name of c.calls === 'all' ? CALLS : CALLS.slice(0, 2)) {
      const out = plain(await call(ws, c, name));
      const l = { case: c.id, call: name, out: full ? out : dedupe(out, name, seen) };
      yield full ? l : compact(l);
    }
  }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const fileKey = (o) => `${o.shard ?? o.file ?? ''}\0${o.tensor?.name ?? o.name ?? ''}`;
const INSPECT = '= inspect';
const READ = '= read';

// A file's header as inspect() reported it: the whole result (one file) or its entry in files /
// shards (a model of several), without the file's name and logical weights.
function inspectedFile(inspected, file) {
  if (!inspected || inspected.error) return null;
  const list = inspected.files ?? inspected.shards;
  // (Its `warnings` are inspect()'s, not the header's.)
  if (!list) { const { logical, warnings, ...h } = inspected; void logical; void warnings; return h; }
  const e = list.find((f) => f.file === file);
  if (!e) return null;
  const { file: _f, ...h } = e;
  void _f;
  return h;
}

// The parts of a createReader / loadToWebGPU line that repeat what inspect() or createReader of
// the same dtype reported, as '= inspect' / '= read' (a difference in them shows up there).
function dedupe(out, name, seen) {
  if (name === 'inspect') { seen.inspect = out; return out; }
  const [what, dtype] = name.split(' ');
  if (what === 'read') {
    seen.read[dtype] = out;
    const byKey = new Map(out.outputs.map((o) => [fileKey(o), o.tensor]));
    const headers = out.headers.map((h) => {
      const { outputs, shard, type, ...rest } = h;
      const file = inspectedFile(seen.inspect, shard);
      const o = outputs.every((d) => same(d, byKey.get(`${shard ?? ''}\0${d.name}`))) ? outputs.map((d) => d.name) : outputs;
      return { outputs: o, shard, type, ...(file && same(sortKeys(rest), sortKeys(file)) ? { header: INSPECT } : rest) };
    });
    return { ...out, headers };
  }
  if (what === 'gpu' && out.result && !out.result.error) {
    const r = { ...out.result };
    const file = inspectedFile(seen.inspect, undefined);
    if (r.header && seen.inspect && !seen.inspect.error && same(sortKeys(r.header), sortKeys(file))) r.header = INSPECT;
    if (Array.isArray(r.shards)) {
      r.shards = r.shards.map((sh) => {
        const { file: f, ...h } = sh;
        const i = inspectedFile(seen.inspect, f);
        return i && same(sortKeys(h), sortKeys(i)) ? { file: f, header: INSPECT } : sh;
      });
    }
    const read = seen.read[dtype];
    if (read && !read.error && r.tensors) {
      const byName = new Map(read.outputs.map((o) => [o.tensor.name, o]));
      const tensors = {};
      for (const [n, t] of Object.entries(r.tensors)) {
        const o = byName.get(n);
        const { buffer, buffers, pieceBytes, shard, ...d } = t;
        const mine = { byteLength: d.byteLength, dtype: d.dtype, quant: d.quant, shape: d.shape, source: d.source };
        const theirs = o && { byteLength: o.tensor.byteLength, dtype: o.tensor.dtype, quant: o.tensor.quant, shape: o.tensor.shape, source: o.tensor.source };
        tensors[n] = o && same(mine, theirs) && same(Object.keys(d).sort(), Object.keys(mine).sort())
          ? plain({ buffer, buffers, pieceBytes, shard, descriptor: READ }) : t;
      }
      r.tensors = tensors;
    }
    return { ...out, result: r };
  }
  return out;
}

const sortKeys = (v) => plain(v);

// JSON with keys sorted at every level (plain() already sorts objects it builds).
export const line = (o) => JSON.stringify(plain(o));

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const full = args.includes('--full');
  const oi = args.indexOf('--only');
  const only = oi >= 0 ? new RegExp(args[oi + 1]) : null;
  const [dist, outPath] = args.filter((a, i) => !a.startsWith('--') && (oi < 0 || i !== oi + 1));
  if (!dist || !outPath) {
    console.error('usage: node tests/js/make-goldens.mjs <dist/weightstream.mjs> <out.jsonl> [--full] [--only REGEX]');
    process.exit(2);
  }
  const ws = await import(pathToFileURL(resolve(dist)).href);
  const lines = [];
  for await (const l of goldenLines(ws, { only, full })) lines.push(line(l));
  writeFileSync(outPath, lines.join('\n') + '\n');
  console.log(`${outPath}: ${lines.length} lines, ${lines.reduce((n, l) => n + l.length + 1, 0)} bytes`);
}
