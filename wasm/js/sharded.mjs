// Sharded models: model.safetensors.index.json, then its shards.
//
// The index is read whole (it is small) and parsed by ws::ShardIndex in wasm; every shard is
// cross-checked against it at its HeaderReady, before its data is read (check_shard), and the
// model as a whole at the end (finish_checks: every listed tensor seen, total_size right).
// `concurrency` shards stream at once (default 2).
//
// Two ways to give the model; only where a shard's bytes come from differs (resolveShards):
//   - the index's URL or path: shard names resolve against it; names that would leave its
//     directory are refused before anything is fetched;
//   - `{ index, shards }` (local files: a File list, Blobs or buffers in Node): `index` is any
//     source; `shards` a list of Files / `{name, source}` / paths (named as `{ uqff: [...] }`
//     names its files: the File's name, the path's last segment), a directory, or
//     (file) => source. A shard the index names that is not given is ShardNotGiven (naming it)
//     before any shard is read; files the index does not name are not read.
import { toSource, toUrl, readAll } from './sources.mjs';
import { makeError } from './errors.mjs';
import { readError } from './session.mjs';
import { u64 } from './module.mjs';
import { fileEvents } from './model.mjs';
import { readHeaders, buildLogical, destroySessions } from './multi-file.mjs';
import { configBytes } from './conventions.mjs';
import { resolver } from './model-files.mjs';

const INDEX_ARENA = 1 << 20;

class Index {
  constructor(wasm, bytes) {
    this.wasm = wasm;
    this.bytes = bytes;
    let arena = INDEX_ARENA;
    for (let attempt = 0; ; attempt++) {
      this.h = wasm.x.ws_index_create(arena, Math.max(bytes.length, 4096));
      if (!this.h) throw new RangeError('weightstream: cannot allocate the shard index');
      wasm.live.indexes++;
      this.input = wasm.x.ws_index_input(this.h);
      wasm.u8.set(bytes, this.input);
      let s = wasm.x.ws_index_feed(this.h, bytes.length);
      if (s === 0) s = wasm.x.ws_index_finish(this.h);
      const info = this.info();
      if (s !== 0 && wasm.statusName(s) === 'ArenaExhausted' && attempt === 0 && info.arenaNeeded > arena) {
        arena = Math.ceil(info.arenaNeeded / 8) * 8;
        this.destroy();
        continue;
      }
      this.status = s;
      break;
    }
  }
  destroy() { if (this.h) { this.wasm.x.ws_index_destroy(this.h); this.wasm.live.indexes--; } this.h = 0; }
  info() {
    const w = this.wasm.x.ws_index_info(this.h) >> 2;
    const u = this.wasm.u32;
    return {
      error: readError(this.wasm, w),
      tensorCount: u[w + 12], shardCount: u[w + 13],
      hasTotalSize: u[w + 14] !== 0, totalSize: u64(u[w + 15], u[w + 16]),
      checkedBytes: u64(u[w + 17], u[w + 18]), arenaNeeded: u[w + 19],
    };
  }
  str(fn, i) {
    const w = (this.wasm.x.ws_index_info(this.h) >> 2);
    this.wasm.x[fn](this.h, i);
    const u = this.wasm.u32;
    return this.wasm.text(u[w + 20], u[w + 21]);
  }
  shardNames() {
    const n = this.info().shardCount;
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.str('ws_index_shard_name', i));
    return out;
  }
  // Copies a string into the index's input buffer (it holds the whole index, so it is big enough
  // for any name in it; longer names cannot be in the index anyway).
  put(s) {
    const b = new TextEncoder().encode(s);
    const n = Math.min(b.length, Math.max(this.bytes.length, 4096));
    this.wasm.u8.set(b.subarray(0, n), this.input);
    return n;
  }
  shardOf(tensor) {
    if (tensor === null) return null;
    const e = this.wasm.x.ws_index_find_tensor(this.h, this.put(tensor));
    if (e === 0xFFFFFFFF) return null;
    return this.str('ws_index_shard_name', this.wasm.x.ws_index_tensor_shard(this.h, e));
  }
  error(status, shard) {
    const info = this.info();
    const e = info.error;
    return makeError({
      code: this.wasm.statusName(status), offset: e.offset, tensor: e.tensor, shard,
      found: e.found, expected: e.expected, indexShard: this.shardOf(e.tensor),
      arenaNeeded: info.arenaNeeded, arenaSize: INDEX_ARENA,
    }, this.wasm.statusDescription(status));
  }
}

// A shard name from the internet must stay inside the index's directory.
function safeShardName(name) {
  if (!name || name.startsWith('/') || name.includes('\\') || name.includes('\0') || /^[a-zA-Z][a-zA-Z\d+.-]*:/.test(name)) return false;
  return !name.split('/').includes('..');
}

export function isShardedFiles(source) {
  return source !== null && typeof source === 'object' && !(source instanceof URL) && 'index' in source && 'shards' in source;
}

// Where each shard's bytes come from: [{file, input}], or ShardNotGiven for the first shard the
// index names that is not given (all of them in the detail).
async function resolveShards(source, url, names) {
  if (url) return names.map((file) => ({ file, input: new URL(file, url) }));
  const resolve = await resolver(source.shards, 'shards');
  const out = [];
  for (const file of names) out.push({ file, input: (await resolve(file)) ?? null });
  const missing = out.filter((s) => s.input === null).map((s) => s.file);
  if (missing.length) {
    throw makeError({
      code: 'ShardNotGiven', offset: null, shard: missing[0],
      detail: `the index names ${names.length} shard${names.length === 1 ? '' : 's'}; not given: ${missing.join(', ')}`,
      hint: `Pass every shard the index names: add ${missing.join(', ')} to shards (pick or drop them with the index).`,
    });
  }
  return out;
}

// Reads and checks the index; returns {index, shards: [{file, input}], metadata}.
export async function openIndex(wasm, source, options) {
  const files = isShardedFiles(source);
  const url = files ? null : await toUrl(source);
  const src = await toSource(files ? source.index : url, options);
  const bytes = await readAll(src, options.signal);
  await wasm.whenIdle();
  const index = new Index(wasm, bytes);
  if (index.status !== 0) {
    const err = index.error(index.status, null);
    index.destroy();
    throw err;
  }
  const names = index.shardNames().sort();
  for (const file of names) {
    // Local files are found by name, not by path: the check still refuses a crafted index.
    if (!safeShardName(file)) {
      index.destroy();
      throw makeError({ code: 'UnsafeShardPath', offset: 0, detail: JSON.stringify(file) });
    }
  }
  let metadata = null;
  try { metadata = JSON.parse(new TextDecoder().decode(bytes)).metadata ?? null; } catch { /* validated above */ }
  let shards;
  try {
    shards = await resolveShards(source, url, names);
  } catch (e) {
    index.destroy();
    throw e;
  }
  const info = index.info();
  return {
    index, url, metadata,
    tensorCount: info.tensorCount,
    totalSize: info.hasTotalSize ? info.totalSize : null,
    shards,
  };
}

// The at-header cross-check of one shard against the index.
function shardCheck(wasm, index, file) {
  return (header, session) => {
    const n = index.put(file);
    const s = wasm.x.ws_index_check_shard(index.h, session.h, n);
    if (s !== 0) throw index.error(s, file);
  };
}

// Runs up to `n` async iterators at once, yielding their values as they come. A value is handed on
// before its iterator is advanced again (views into its session stay valid until then).
async function* merge(factories, n) {
  const active = new Map();
  let next = 0;
  const pull = (id, it) => {
    const p = it.next().then((r) => ({ id, r }));
    p.catch(() => {});  // raced below; never an unhandled rejection while another value is out
    active.set(id, { it, p });
  };
  const start = () => { if (next < factories.length) { const id = next++; pull(id, factories[id]()); } };
  for (let i = 0; i < n; i++) start();
  try {
    while (active.size) {
      const { id, r } = await Promise.race([...active.values()].map((a) => a.p));
      if (r.done) { active.delete(id); start(); continue; }
      yield r.value;
      pull(id, active.get(id).it);
    }
  } finally {
    for (const a of active.values()) a.it.return?.().catch?.(() => {});
  }
}

// Decoding (f32/f16): every shard's header first (checked against the index then), and the
// library's logical model over all shards (build_mlx: a weight's scales may be in another shard,
// read by range before the shards stream). 'raw' needs no model: shards stream at once.
async function shardsLogical(wasm, model, options) {
  const files = model.shards.map((sh) => ({ name: sh.file, input: sh.input }));
  try {
    await readHeaders(wasm, files, options, (f, h, s) => shardCheck(wasm, model.index, f.name)(h, s), { buffer: false });
    await buildLogical(wasm, files, options, (m) => m.build(m.kind()), { config: configBytes(options.quantization) });
  } finally {
    destroySessions(files);
  }
  return files;
}

export async function* shardedEvents(wasm, source, options, progress) {
  const model = await openIndex(wasm, source, options);
  const { index } = model;
  try {
    const sizes = new Map();
    const pre = (options.dtype ?? 'raw') !== 'raw' ? await shardsLogical(wasm, model, options) : null;
    const factories = model.shards.map((sh, i) => () => (async function* () {
      const src = await toSource(pre ? pre[i].input : sh.input, options);
      const open = src.open.bind(src);
      src.open = async (signal) => {
        await open(signal);
        sizes.set(sh.file, src.size);
        if (sizes.size === model.shards.length && [...sizes.values()].every((v) => v !== null)) progress?.setTotal([...sizes.values()].reduce((a, b) => a + b, 0));
      };
      // With the model, each header was checked against the index in the first pass.
      const extra = pre ? { shard: sh.file, logical: pre[i].logical } : { shard: sh.file, onHeader: shardCheck(wasm, index, sh.file) };
      for await (const ev of fileEvents(wasm, src, options, progress, extra)) {
        if (ev.kind === 'done') continue;  // the model is done when every shard is
        ev.shard = sh.file;
        yield ev;
      }
    })());
    yield* merge(factories, Math.max(1, options.concurrency ?? 2));
    const s = wasm.x.ws_index_finish_checks(index.h);
    if (s !== 0) throw index.error(s, null);
    yield { kind: 'done', validated: 'full', index: { tensors: model.tensorCount, totalSize: model.totalSize, metadata: model.metadata, shards: model.shards.map((x) => x.file) } };
  } finally {
    index.destroy();
  }
}
