// convert(): a model's logical weights out as plain safetensors (bf16, f16 or f32), written
// through the caller's sinks — the bytes of the CLI's `weightstream convert`.
//
//   await convert(source, { to: 'bf16', output: dirHandle, signal, onProgress })
//
// Every decision is the library's (wasm/src/abi_convert.cpp over ws::ConvertPlan): which weights
// are decoded, copied as stored (`keep`) or skipped, the output dtypes and sizes, the files and
// their names (Hugging Face's max_shard_size rule), __metadata__ (the input's, marked), each
// file's header (ws::SafetensorsWriter), model.safetensors.index.json and config.json without its
// quantization sections. The model loader decodes (Decode mode to the target type, kept weights
// passed stored). This file opens the sinks and moves the bytes: each file's header first, then
// its weights' bytes as the loader hands them out (one output piece at a time, awaited: memory is
// the loader's arena and one piece whatever the model's size).
import { init, u64 } from './module.mjs';
import { describeModel } from './model-files.mjs';
import { loadModel, Mode, isMissing } from './host.mjs';
import { toSelect, withEvents, Progress } from './options.mjs';
import { makeError, abortError, ioError, WeightstreamError } from './errors.mjs';
import { readError } from './words.mjs';
import { toSource, readAll, raceAbort } from './sources.mjs';

const TARGETS = { f32: 0, f16: 1, bf16: 2 };  // ws::OutType
const ACTIONS = ['decode', 'copy', 'skip'];    // ws::ConvertAction
const HEADER_PIECE = 64 << 10;                 // header bytes generated per write
const INDEX_NAME = 'model.safetensors.index.json';  // convert_plan.h kConvertIndexName

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';
}

// The output files: open(name) gives a WritableStream. `output` is (name) => WritableStream, a
// FileSystemDirectoryHandle (File System Access / OPFS), or in Node a directory path (or file:
// URL). A directory can also be read back — read(name): {size, stream()} or null; remove(name) —
// so a conversion run again continues there (the CLI's rule: a file is kept when it has its
// planned size and header and still has the digest recorded beside it, `.<name>.sha256`).
async function outputOf(output) {
  if (typeof output === 'function') return { open: output, read: null, remove: null };
  if (output && typeof output === 'object' && typeof output.getFileHandle === 'function') {
    const absent = (e) => e?.name === 'NotFoundError' || e?.name === 'TypeMismatchError';
    const open = async (name) => (await output.getFileHandle(name, { create: true })).createWritable();
    // A directory-like object that cannot remove (only getFileHandle): written whole, no resume.
    if (typeof output.removeEntry !== 'function') return { open, read: null, remove: null };
    return {
      open,
      read: async (name) => {
        try {
          const h = await output.getFileHandle(name);
          return typeof h.getFile === 'function' ? await h.getFile() : null;
        } catch (e) {
          if (absent(e)) return null;
          throw e;
        }
      },
      remove: async (name) => {
        try {
          await output.removeEntry(name);
        } catch (e) {
          if (!absent(e)) throw e;
        }
      },
    };
  }
  if ((typeof output === 'string' || output instanceof URL) && isNode()) return nodeDirectory(output);
  throw new TypeError('weightstream: convert() needs output: (name) => WritableStream, a directory handle, or (in Node) a directory path');
}

// Node: files in a directory, each written as <name>.partial and renamed when complete (as the
// CLI does), so an interrupted file is never taken for a whole one.
async function nodeDirectory(dir) {
  const fs = await import('node:fs/promises');
  const { openAsBlob } = await import('node:fs');
  const { join } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const root = dir instanceof URL ? fileURLToPath(dir) : dir;
  await fs.mkdir(root, { recursive: true });
  const open = async (name) => {
    const path = join(root, name), partial = `${path}.partial`;
    const fh = await fs.open(partial, 'w');
    let closed = false;
    return new WritableStream({
      async write(chunk) {
        for (let at = 0; at < chunk.length;) {
          const { bytesWritten } = await fh.write(chunk, at, chunk.length - at);
          at += bytesWritten;
        }
      },
      async close() { closed = true; await fh.close(); await fs.rename(partial, path); },
      async abort() { if (!closed) { closed = true; await fh.close(); } },
    });
  };
  const read = async (name) => {
    const path = join(root, name);
    try {
      if (!(await fs.stat(path)).isFile()) return null;
    } catch (e) {
      if (e?.code === 'ENOENT') return null;
      throw e;
    }
    return openAsBlob(path);
  };
  const remove = (name) => fs.rm(join(root, name), { force: true });
  return { open, read, remove };
}

const digestName = (name) => `.${name}.sha256`;

// Whether an earlier run left shard `info` complete in `out`: the file there with the planned
// size and header bytes, and the digest recorded beside it when it was finished. Reads the file
// through once (its digest), as the CLI does.
async function keptFromEarlierRun(out, plan, info, buf, signal) {
  const recorded = await out.read(digestName(info.name));
  if (!recorded || recorded.size < 64 || recorded.size > 4096) return false;
  const file = await out.read(info.name);
  if (!file || file.size !== info.size) return false;
  const wasm = plan.wasm;
  const header = new Uint8Array(info.headerSize);
  plan.open(info.index, info.name);
  for (let at = 0; ;) {
    const { n, done } = plan.header(buf, HEADER_PIECE, info.name);
    header.set(wasm.u8.subarray(buf, buf + n), at);
    at += n;
    if (done) break;
  }
  plan.hashReset();
  const reader = file.stream().getReader();
  let pos = 0;
  try {
    for (;;) {
      if (signal?.aborted) throw abortError(signal, 0);
      const { value, done } = await reader.read();
      if (done) break;
      for (let i = 0; pos + i < header.length && i < value.length; i++) if (value[i] !== header[pos + i]) return false;
      for (let at = 0; at < value.length; at += HEADER_PIECE) {
        const piece = value.subarray(at, at + HEADER_PIECE);
        wasm.u8.set(piece, buf);
        plan.hash(buf, piece.length);
      }
      pos += value.length;
    }
  } finally {
    reader.releaseLock();
  }
  const want = new TextDecoder().decode(new Uint8Array(await recorded.arrayBuffer())).slice(0, 64);
  return pos === info.size && plan.hashHex() === want;
}

// keep: dtype names (['F32'], 'f32', ...) → the library's bit per DType.
function keepBits(wasm, keep) {
  if (keep === undefined || keep === null) return 0;
  const list = typeof keep === 'string' ? [keep] : keep;
  if (!Array.isArray(list) && !(list instanceof Set)) throw new TypeError('weightstream: keep must be a dtype name or a list of them (F32, BF16, F16, ...)');
  let bits = 0;
  for (const k of list) {
    const d = wasm.dtypeNames.indexOf(String(k).toUpperCase());
    if (d < 0) throw new TypeError(`weightstream: keep wants safetensors dtypes (F32, BF16, F16, ...), not ${JSON.stringify(k)}`);
    bits = (bits | (1 << d)) >>> 0;
  }
  return bits;
}

// maxShardSize: a byte count, or a string as Hugging Face's max_shard_size spells it ("5GB",
// "2GiB", "500MB"; the library's ws::parse_byte_size reads it, as the CLI's --max-shard-size).
function shardSize(wasm, v) {
  if (v === undefined || v === null) return 0n;
  let b = typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : -1n;
  if (typeof v === 'string') {
    const text = new TextEncoder().encode(v);
    const p = wasm.alloc(text.length + 8);
    try {
      wasm.u8.set(text, p + 8);
      b = wasm.x.ws_parse_byte_size(p + 8, text.length, p) ? (BigInt(wasm.u32[(p >> 2) + 1]) << 32n) | BigInt(wasm.u32[p >> 2]) : -1n;
    } finally {
      wasm.free(p);
    }
  }
  if (b < 0n || b >= 1n << 64n) {
    throw new TypeError(`weightstream: maxShardSize must be a byte count (a non-negative integer, or a size such as '5GB', '2GiB', '500MB'), not ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)}`);
  }
  return b;
}

// The plan of a loader at ModelReady (ws_convert_build, with the arena retry) and what JS keeps of
// it: the entries by loader weight, the files, the weights skipped.
class Plan {
  constructor(wasm) {
    this.wasm = wasm;
    this.c = wasm.x.ws_convert_create();
    if (!this.c) throw new RangeError('weightstream: cannot allocate a conversion');
    wasm.live.converts++;
    this.item = wasm.x.ws_convert_item(this.c) >> 2;
    this.arena = 0;
    this.arenaSize = 0;
    this.bits = 0;
  }

  // ModelLoaderOptions::stored_formats for the kept dtypes: a bigint mask.
  storedFormats(keep) {
    this.wasm.x.ws_convert_stored_formats(this.c, keep);
    const u = this.wasm.u32;
    return (BigInt(u[this.item + 1]) << 32n) | BigInt(u[this.item]);
  }

  // take: one byte per loader weight (the filter's choice), or null for all.
  build(L, { to, keep, maxShardSize, take }) {
    const wasm = this.wasm, x = wasm.x;
    wasm.free(this.bits);
    this.bits = 0;
    if (take) {
      this.bits = wasm.alloc(Math.max(1, take.length));
      wasm.u8.set(take, this.bits);
    }
    const words = wasm.alloc(4 * 5);
    try {
      let size = Math.max(this.arenaSize, 4096);
      for (let attempt = 0; ; attempt++) {
        if (this.arenaSize < size) {
          wasm.free(this.arena);
          this.arena = 0;
          this.arena = wasm.alloc(size);
          this.arenaSize = size;
        }
        const u = wasm.u32, w = words >> 2;
        u[w] = TARGETS[to];
        u[w + 1] = keep;
        u[w + 2] = Number(maxShardSize & 0xFFFFFFFFn);
        u[w + 3] = Number(maxShardSize >> 32n);
        u[w + 4] = this.bits;
        const s = x.ws_convert_build(this.c, L.h, words, this.arena, this.arenaSize);
        if (s === 0) break;
        const code = wasm.statusName(s);
        // arena_needed is a size that suffices: one retry.
        if (code === 'ArenaExhausted' && attempt === 0) { size = Math.ceil(x.ws_convert_arena_needed(this.c) / 64) * 64; continue; }
        const e = readError(wasm, x.ws_convert_error(this.c, 0) >> 2);
        x.ws_convert_facts(this.c);
        const failed = wasm.u32[this.item + 7];
        const shard = code === 'ArenaExhausted' ? null : this.shardInfo(failed).name;
        throw makeError({ code, offset: e.offset, tensor: e.tensor, shard, found: e.found, expected: e.expected }, wasm.statusDescription(s));
      }
    } finally {
      wasm.free(words);
    }
    x.ws_convert_facts(this.c);
    const u = wasm.u32, fw = this.item;
    this.entryCount = u[fw];
    this.shardCount = u[fw + 1];
    const skippedCount = u[fw + 2];
    this.from = wasm.text(u[fw + 3], u[fw + 4]);
    this.totalSize = u64(u[fw + 5], u[fw + 6]);
    this.writesConfig = u[fw + 9] !== 0;  // the plan's rule: a config.json beside safetensors only
    this.entries = new Map();  // loader weight -> {entry, weight, shard, row, action, dtype, bytes}
    for (let k = 0; k < this.entryCount; k++) {
      x.ws_convert_entry(this.c, k);
      const v = wasm.u32, w = this.item;
      this.entries.set(v[w], { entry: k, weight: v[w], shard: v[w + 1], row: v[w + 2], action: ACTIONS[v[w + 3]], dtype: wasm.dtypeNames[v[w + 4]], bytes: u64(v[w + 5], v[w + 6]) });
    }
    this.shards = [];
    for (let s = 0; s < this.shardCount; s++) this.shards.push(this.shardInfo(s));
    this.skipped = [];
    for (let i = 0; i < skippedCount; i++) this.skipped.push(x.ws_convert_skipped(this.c, i));
  }

  weightName(L, i) {
    this.wasm.x.ws_convert_weight_name(this.c, L.h, i);
    return this.wasm.text(this.wasm.u32[this.item], this.wasm.u32[this.item + 1]);
  }

  shardInfo(s) {
    const wasm = this.wasm;
    wasm.x.ws_convert_shard(this.c, s);
    const u = wasm.u32, w = this.item;
    return {
      index: s, name: wasm.text(u[w], u[w + 1]), first: u[w + 2], count: u[w + 3],
      headerSize: u64(u[w + 4], u[w + 5]), dataSize: u64(u[w + 6], u[w + 7]), size: u64(u[w + 8], u[w + 9]),
    };
  }

  // Library calls on the writer of the file being written; a refusal as a WeightstreamError
  // placed in that file (offset: the byte of the output file).
  check(s, name) {
    if (s === 0) return;
    const wasm = this.wasm;
    const e = readError(wasm, wasm.x.ws_convert_error(this.c, 1) >> 2);
    throw makeError({ code: wasm.statusName(s), offset: e.offset, shard: name, found: e.found, expected: e.expected }, wasm.statusDescription(s));
  }
  open(s, name) { this.check(this.wasm.x.ws_convert_open(this.c, s), name); }
  // The next header bytes (at most `cap`) into wasm memory at `buf`: {n, done}.
  header(buf, cap, name) {
    this.check(this.wasm.x.ws_convert_header(this.c, buf, cap), name);
    return { n: this.wasm.u32[this.item], done: this.wasm.u32[this.item + 1] !== 0 };
  }
  data(row, n, name) { this.check(this.wasm.x.ws_convert_data(this.c, row, n), name); }
  // The digest of a file written or read back (ws_convert_sha256_*), over bytes in wasm memory.
  hashReset() { this.wasm.x.ws_convert_sha256_reset(this.c); }
  hash(ptr, n) { this.wasm.x.ws_convert_sha256_update(this.c, ptr, n); }
  hashHex() { return this.wasm.text(this.wasm.x.ws_convert_sha256_hex(this.c), 64); }
  current() { return this.wasm.x.ws_convert_current(this.c); }
  finish(name) { this.check(this.wasm.x.ws_convert_finish(this.c), name); }

  // model.safetensors.index.json's bytes (sized by a first call).
  index() {
    const wasm = this.wasm, x = wasm.x;
    const fail = (s) => makeError({ code: wasm.statusName(s), offset: null, shard: INDEX_NAME }, wasm.statusDescription(s));
    let s = x.ws_convert_index(this.c, 0, 0);
    if (s !== 0) throw fail(s);
    const n = u64(wasm.u32[this.item], wasm.u32[this.item + 1]);
    const out = wasm.alloc(Math.max(1, n));
    try {
      s = x.ws_convert_index(this.c, out, n);
      if (s !== 0) throw fail(s);
      return wasm.u8.slice(out, out + n);
    } finally {
      wasm.free(out);
    }
  }

  // config.json without its quantization sections; a document that is no object as it is (the
  // CLI's rule: ConfigNotObject copies it).
  config(bytes) {
    const wasm = this.wasm, x = wasm.x;
    const n = bytes.length;
    const inp = wasm.alloc(Math.max(1, n));
    let out = 0;
    try {
      out = wasm.alloc(Math.max(1, n));
      wasm.u8.set(bytes, inp);
      if (x.ws_convert_config(this.c, inp, n, out, n) !== 0) return bytes;
      return wasm.u8.slice(out, out + wasm.u32[this.item]);
    } finally {
      wasm.free(inp);
      wasm.free(out);
    }
  }

  destroy() {
    const wasm = this.wasm;
    wasm.free(this.arena);
    wasm.free(this.bits);
    this.arena = this.bits = 0;
    this.arenaSize = 0;
    if (this.c) { wasm.x.ws_convert_destroy(this.c); wasm.live.converts--; }
    this.c = 0;
  }
}

// One output file open on its sink: the stream's writer, what was written.
class OutFile {
  constructor(name, size) {
    this.name = name; this.size = size; this.writer = null; this.written = 0; this.inflight = null;
    this.done = false; this.kept = false;  // kept: complete from an earlier run, not written
  }
  async open(sink) {
    let stream;
    try {
      stream = await sink(this.name);
      // A WritableStream (File System Access's FileSystemWritableFileStream is one), or an object
      // with its write/close/abort methods.
      this.writer = typeof stream?.getWriter === 'function' ? stream.getWriter() : stream;
      if (typeof this.writer?.write !== 'function' || typeof this.writer?.close !== 'function') throw new TypeError('the sink gave no WritableStream');
    } catch (e) {
      throw ioError(`cannot open ${this.name} for writing: ${e?.message ?? e}`, null, e, { shard: this.name });
    }
  }
  // Resolves when the sink took the bytes; rejects at once on an abort, even while a stalled sink
  // still holds the write.
  async write(bytes, signal) {
    const p = this.writer.write(bytes);
    this.inflight = p;
    const settled = () => { if (this.inflight === p) this.inflight = null; };
    p.then(settled, settled);
    try {
      await raceAbort(p, signal, null);
    } catch (e) {
      if (e instanceof WeightstreamError && e.code === 'Aborted') throw e;
      throw ioError(`cannot write ${this.name}: ${e?.message ?? e}`, this.written, e, { shard: this.name });
    }
    this.written += bytes.length;
  }
  async close() {
    const w = this.writer;
    this.writer = null;
    try {
      await w.close();
    } catch (e) {
      throw ioError(`cannot write ${this.name}: ${e?.message ?? e}`, this.written, e, { shard: this.name });
    }
  }
  // After a failure or an abort: the sink discards what it can (File System Access keeps the file
  // as it was; the Node directory leaves <name>.partial).
  // Not awaited while a write is still held by the sink (a WritableStream's abort waits for it).
  abort(reason) {
    const w = this.writer;
    this.writer = null;
    const done = Promise.resolve().then(() => w?.abort?.(reason)).catch(() => {});
    return this.inflight ? undefined : done;
  }
}

// A whole small file (the index, config.json).
async function writeWhole(sink, name, bytes, signal) {
  const f = new OutFile(name, bytes.length);
  await f.open(sink);
  try {
    await f.write(bytes, signal);
    await f.close();
  } catch (e) {
    await f.abort(e);
    throw e;
  }
}

// The config.json to write (edited): the `config` option's source (a File, bytes, a URL or path;
// false: none), else the one the loader would read beside the model (a URL or path's sibling, one
// of `{ index, shards }`'s files), or null: none given, or not there. The `quantization` option is
// not a file: with it and no `config`, nothing is read (and no config.json written).
async function configBeside(model, options) {
  if (options.config === false || options.config === null) return null;
  let input = options.config;
  if (input === undefined) {
    if (model.configFromOption) return null;
    input = await model.input({ kind: 'config', name: 'config.json', index: null }, null);
  }
  if (input === null || input === undefined) return null;
  if (input instanceof Uint8Array) return input;
  try {
    return await readAll(await toSource(input, options), options.signal);
  } catch (e) {
    if (isMissing(e) && options.config === undefined) return null;
    throw e;
  }
}

export async function convert(source, options = {}) {
  const to = options.to ?? 'bf16';
  if (!(to in TARGETS)) throw new TypeError(`weightstream: convert's to must be 'bf16', 'f16' or 'f32', not ${JSON.stringify(to)}`);
  const signal = options.signal;
  const out = await outputOf(options.output);
  const sink = out.open;
  const resumable = out.read !== null;  // a directory: digests recorded, complete files kept
  const select = toSelect(options.filter);
  const wasm = await init(options);
  const maxShardSize = shardSize(wasm, options.maxShardSize);
  const keep = keepBits(wasm, options.keep);
  const progress = new Progress(options.onProgress, { interval: options.progressInterval ?? 100, signal });
  const opts = withEvents(options, progress);
  const model = await describeModel(source, opts);
  const plan = new Plan(wasm);
  const files = [];       // OutFile per output file, by shard
  let cur = null;         // the file being written
  let entry = null;       // the weight being written
  let buf = 0;            // header pieces
  let skipped = [];       // names of the weights nothing safetensors can hold
  try {
    const storedFormats = plan.storedFormats(keep);
    // Allocations may grow wasm memory: not while another call's caller holds a view of it.
    const onReady = async (L, ready) => {
      await wasm.whenIdle();
      let take = null;
      if (select) {
        // The filter sees each weight's (logical) name and its index among the model's weights.
        take = new Uint8Array(ready.model.weightCount);
        for (let i = 0; i < take.length; i++) {
          const name = plan.weightName(L, i);
          take[i] = select({ name, index: i }) ? 1 : 0;
        }
      }
      plan.build(L, { to, keep, maxShardSize, take });
      skipped = plan.skipped.map((w) => plan.weightName(L, w));
      files.length = 0;
      for (const s of plan.shards) files.push(new OutFile(s.name, s.size));
      if (resumable) {
        for (const s of plan.shards) {
          if (await keptFromEarlierRun(out, plan, s, buf, signal)) files[s.index].kept = files[s.index].done = true;
        }
      }
      for (const e of plan.entries.values()) {
        if (files[e.shard].kept) continue;  // its bytes are there already
        const s = L.select(e.weight);
        if (s !== 0) throw makeError({ code: wasm.statusName(s), offset: null, tensor: plan.weightName(L, e.weight) }, wasm.statusDescription(s));
      }
      progress.setTotal(plan.shards.reduce((n, s) => n + s.size, 0));
      progress.bytes = files.reduce((n, f) => n + (f.kept ? f.size : 0), 0);
    };
    await wasm.whenIdle();
    buf = wasm.alloc(HEADER_PIECE);
    const openShard = async (s) => {
      const f = files[s];
      if (resumable) await out.remove(digestName(f.name));  // an earlier run's, now stale
      await f.open(sink);
      cur = s;
      plan.open(s, f.name);
      if (resumable) plan.hashReset();
      for (;;) {
        const { n, done } = plan.header(buf, HEADER_PIECE, f.name);
        if (resumable) plan.hash(buf, n);
        if (n) await f.write(wasm.u8.slice(buf, buf + n), signal);
        progress.bytes += n;
        if (done) break;
      }
    };
    const closeShard = async (s) => {
      const f = files[s];
      plan.finish(f.name);
      const digest = resumable ? plan.hashHex() : null;
      await f.close();
      if (digest !== null) await writeWhole(sink, digestName(f.name), new TextEncoder().encode(`${digest}\n`), signal);
      f.done = true;
      cur = null;
      progress.maybe();
    };
    const events = loadModel(wasm, model, opts, { mode: Mode.decode, dtype: to, passStored: true, storedFormats, progress: null, onReady });
    for await (const ev of events) {
      switch (ev.kind) {
        case 'begin': {
          entry = plan.entries.get(ev.weight);
          if (cur !== entry.shard) {
            if (cur !== null) await closeShard(cur);
            await openShard(entry.shard);
          }
          break;
        }
        case 'data': {
          // A weight passed stored hands out its packed piece (the output); companions are not
          // outputs (a kept weight has none to decode with).
          if (ev.role !== 0) break;
          const f = files[entry.shard];
          plan.data(entry.row, ev.size, f.name);
          if (resumable) plan.hash(ev.ptr, ev.size);
          await f.write(wasm.u8.slice(ev.ptr, ev.ptr + ev.size), signal);  // a copy: the view is the loader's
          progress.bytes += ev.size;
          progress.maybe();
          break;
        }
        case 'end': {
          progress.addTensor();
          // The file's last weight: complete (zero-byte weights after it need no data).
          if (plan.current() === plan.shards[entry.shard].count) await closeShard(entry.shard);
          break;
        }
        default: break;
      }
    }
    if (signal?.aborted) throw abortError(signal, 0);
    // Files with nothing selected (only zero-byte weights, or none).
    for (let s = 0; s < files.length; s++) {
      if (files[s].done) continue;
      if (cur !== s) await openShard(s);
      await closeShard(s);
    }
    const written = files.map((f) => (f.kept ? { name: f.name, size: f.size, kept: true } : { name: f.name, size: f.size }));
    await wasm.whenIdle();
    if (plan.shardCount > 1) {
      const index = plan.index();
      await writeWhole(sink, INDEX_NAME, index, signal);
      written.push({ name: INDEX_NAME, size: index.length });
    }
    if (plan.writesConfig) {
      const config = await configBeside(model, opts);
      if (config !== null) {
        await wasm.whenIdle();
        const out = plan.config(config);
        await writeWhole(sink, 'config.json', out, signal);
        written.push({ name: 'config.json', size: out.length });
      }
    }
    progress.maybe(true);
    return {
      files: written, weights: plan.entryCount, totalSize: plan.totalSize, to, from: plan.from,
      skipped,
    };
  } catch (e) {
    if (cur !== null) await files[cur].abort(e);
    if (signal?.aborted && !(e instanceof WeightstreamError && e.code === 'Aborted')) throw abortError(signal, 0);
    throw e;
  } finally {
    wasm.free(buf);
    plan.destroy();
  }
}
