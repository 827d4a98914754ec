// The package as a host of ws::ModelLoader: one pull loop that answers the loader's reads with
// bytes from the model's sources and hands its events on. Which files a model has, the order they
// are read in, companions, conventions, checks and decoding are the loader's; this file moves bytes.
//
//   for await (const ev of loadModel(wasm, model, options, { mode, dtype, onReady })) ...
//     { kind: 'ready', loader, files, model }          headers validated, model built
//     { kind: 'begin' | 'end', weight }                 a selected weight
//     { kind: 'data', weight, role, ptr, size, offset } output bytes at wasm address ptr: valid
//                                                       until the generator is resumed
//     { kind: 'done' }
// and throws a WeightstreamError (naming the file, offset and tensor) on any rejection, I/O
// failure or abort.
//
// `model` (model-files.mjs): { entry, name, listing, seekable, input(file) → user input or null }.
// Every file is read through a FileFeed: forward reads continue the open request or stream;
// a jump (seekable sources) opens a new range. Until the data phase starts, what was fed is kept so a
// load that ran out of arena can be replayed with the size the loader measured, even from a stream.
import { Loader, Ev, Mode } from './loader.mjs';
import { GgufKvCollector, HEAD as KV_HEAD } from './gguf-kv.mjs';
import { toSource, readAll } from './sources.mjs';
import { abortError, makeError } from './errors.mjs';
import { loaderError } from './loader-errors.mjs';

export const DEFAULT_ARENA = 1 << 20;
export const DEFAULT_READ = 1 << 20;
export const DEFAULT_OUT = 1 << 20;
// Bytes copied into the input buffer per answer, at most: the loader asks for up to chunkSize, and
// an answer may be shorter. As many as decode into one output piece (outSize), learned from the
// last answer that produced output (its bytes × outSize / its output bytes, rounded down to 4 KiB:
// a Q4_K answer of 294,984 bytes decoded to 1 MiB and 512 bytes, an extra event for one block),
// within [MIN_PIECE, chunkSize]; FEED_PIECE until an answer has produced output (headers, companions).
// One answer, one output piece: the copy, the decode's input and its output stay in a core's L2
// cache (1 MiB here) — Q4_K and MLX int4 → f16 (3.5-4× the bytes) take ≈ 256 KiB, a fixed 1 MiB
// made them read their input back from memory — and an element type that decodes to as many bytes
// (BF16 → f16, raw) is not cut into four answers, each an event through three async generators
// (bench/js/bench.mjs, bench/README.md: BF16 → f16 +7-9 % at 1 MiB, Q4_K and MLX 1-4 % slower at
// 1 MiB or 128 KiB than at 256 KiB).
const FEED_PIECE = 256 << 10;
const MIN_PIECE = 64 << 10;
const MAX_ATTEMPTS = 8;  // ArenaExhausted retries: one per part whose size the input decides
const roundUp64 = (n) => Math.ceil(n / 64) * 64;

// A user input that does not exist: a path (ENOENT) or an HTTP 404 / 410.
export function isMissing(e) {
  let c = e;
  for (let depth = 0; c && depth < 4; depth++, c = c.cause) if (c.code === 'ENOENT') return true;
  // HTTP 404 and 410, as the CLI's URL reader says Missing (tools/cli/http_source.cpp).
  return e?.code === 'IoError' && /\bHTTP 4(04|10)\b/.test(e.message);
}

// One file's bytes as the loader asks for them.
class FileFeed {
  constructor(src, name) {
    this.src = src;
    this.name = name;
    this.iter = null;      // the open forward read
    this.pos = 0;          // the next byte it yields
    this.left = null;      // bytes of its last chunk not yet fed
    this.fed = 0;          // bytes fed in all (a stream's size, for messages)
    this.prefix = new Uint8Array(0);
    this.record = [];      // chunks taken until the data phase starts (replay after ArenaExhausted)
    this.replay = [];
  }

  // Up to `length` bytes at `offset`; an empty array at the end of the file.
  async read(offset, length, signal, gap) {
    if (this.iter === null || offset < this.pos || offset - this.pos > gap) this.seek(offset, signal);
    while (this.pos < offset) {  // a small gap: read through it
      const c = await this.chunk(signal);
      if (!c) return c;
      const skip = Math.min(c.length, offset - this.pos);
      this.pos += skip;
      this.left = skip < c.length ? c.subarray(skip) : null;
    }
    const c = await this.chunk(signal);
    if (!c) return new Uint8Array(0);
    const n = Math.min(length, c.length);
    this.left = n < c.length ? c.subarray(n) : null;
    this.pos += n;
    this.fed += n;
    const piece = c.subarray(0, n);
    if (offset < 8 && this.prefix.length < 8) {
      const p = new Uint8Array(Math.min(8, offset + n));
      p.set(this.prefix.subarray(0, Math.min(this.prefix.length, offset)));
      p.set(piece.subarray(0, p.length - offset), offset);
      this.prefix = p;
    }
    return piece;
  }

  async chunk(signal) {
    if (this.left) { const c = this.left; this.left = null; return c; }
    if (this.replay.length) return this.replay.shift();
    const r = await this.iter.next();
    if (signal?.aborted) throw abortError(signal, this.pos);
    if (r.done) return null;
    if (this.record) this.record.push(r.value);
    return r.value;
  }

  seek(offset, signal) {
    this.iter?.return?.().catch?.(() => {});
    this.left = null;
    this.replay = [];
    if (offset === 0 || !this.src.seekable || !this.src.range) {
      if (this.iter !== null && !this.src.seekable) {
        throw makeError({ code: 'UsageError', offset, shard: this.name, detail: 'the source cannot be read twice or out of order' });
      }
      this.iter = this.src.chunks(signal);
      this.pos = 0;
    } else {
      this.iter = this.src.range(offset, this.src.size, signal);
      this.pos = offset;
    }
    if (this.src.seekable) this.record = null;  // it can be read again instead
  }

  // For a retry: the same bytes again from the start (a stream: what was recorded, then on).
  rewind() {
    if (this.src.seekable) {
      this.iter?.return?.().catch?.(() => {});
      this.iter = null;
      this.left = null;
    } else {
      this.replay = [...(this.record ?? [])];
      this.left = null;
      this.pos = 0;
    }
    this.fed = 0;
  }
  stopRecording() { this.record = null; }
  close() { this.iter?.return?.().catch?.(() => {}); this.src.close(); }
}

// The model's events; `o`: {mode (Mode), dtype, passStored, asStored, storedFormats, progress,
// onReady(loader, ready) → select weights}.
// arrayLimit as the loader's gguf_array_full word: arrays of more elements are previewed. Past
// u32 (Infinity: keep everything), or not a number >= 0, nothing is previewed (0xFFFFFFFF); a word
// of 0 would preview every string array while the collector expects all of an array it keeps.
const previewFrom = (limit) => (limit >= 0 && limit < 0xFFFFFFFF ? Math.floor(limit) : 0xFFFFFFFF);

export async function* loadModel(wasm, model, options, o) {
  const signal = options.signal;
  const readSize = Math.max(1, Math.min(options.chunkSize ?? DEFAULT_READ, 1 << 30));
  const gap = options.rangeGap ?? (model.remote ? 1 << 20 : 64 << 10);
  const feeds = new Map();  // file index -> FileFeed | null (missing)
  const progress = o.progress ?? null;
  const outSize = options.outSize ?? DEFAULT_OUT;
  // The answer size (FEED_PIECE's rule): the last answer's bytes and the output bytes since.
  let piece = FEED_PIECE, fedLast = 0, outLast = 0;
  // The caller's arenaSize is for the headers: the loader's own objects and, when decoding, the
  // output piece come on top.
  let arenaSize = roundUp64((options.arenaSize ?? DEFAULT_ARENA) + wasm.x.ws_loader_base_need(readSize, model.name.length * 3) +
    (o.mode === Mode.decode ? outSize + 64 : 0));
  let readyYielded = false;  // a retry after the model was ready does not announce it again
  let loader = null;
  let kvs = new Map();  // file -> GgufKvCollector, of the current attempt
  let sized = new Set();  // files whose size this attempt's loader was told
  try {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortError(signal, 0);
      await wasm.whenIdle();  // allocation may grow memory: not while a caller holds a view
      loader?.destroy();
      loader = new Loader(wasm, {
        arenaSize, seekable: model.seekable, mode: o.mode, dtype: o.dtype, kernel: options.kernel,
        validateBlocks: options.validateBlocks, readSize, outSize, limits: options.limits,
        passStored: o.passStored, asStored: o.asStored, storedFormats: o.storedFormats,
        // GGUF string arrays past arrayLimit elements: the loader hands out only the elements the
        // collector keeps (gguf-kv.mjs summarizes them: the head, the last, their bytes).
        arrayFull: previewFrom(options.arrayLimit ?? 16), arrayHead: KV_HEAD,
      });
      for (const f of feeds.values()) f?.rewind();
      kvs = new Map();
      sized = new Set();
      const retry = yield* run(loader);
      if (!retry) return;
      if (attempt + 1 >= MAX_ATTEMPTS) throw failure(loader);
      // What the loader measured; while files after the one that ran out are still to be read,
      // half as much again (up to twice the arena of this attempt): each later file whose header
      // was not counted yet runs out again, and the 163 shards of a DeepSeek-V3-shaped index took
      // more than 8 attempts of exact sizes (bench/js/sharded-memory.mjs). At most 1.5 × what the
      // load needs; a single file's retry stays exact.
      const e = loader.error();
      const more = e.file !== null && e.file + 1 < loader.fileCount();
      arenaSize = roundUp64(more ? Math.max(e.arenaNeeded, Math.min(2 * arenaSize, Math.floor(e.arenaNeeded * 1.5))) : e.arenaNeeded);
    }
  } finally {
    loader?.destroy();
    for (const f of feeds.values()) f?.close();
  }

  function failure(L) { return loaderError(wasm, L, model, feeds, kvs); }

  // One attempt; true when it ran out of arena before any weight was handed on (retry it). The
  // data phase takes its scratch right after ModelReady, before reading on: a stream's recording
  // (kept until then) still covers every byte read.
  async function* run(L) {
    if (model.listing) for (const n of model.listing) L.addFile(n);
    // Expected digests (options.sha256, list entries' sha256) and, for a manifest, its blobs
    // against their names (verifyBlobs: false turns that off): checked as the files stream.
    for (const [name, hex] of model.digests ?? []) {
      const s = L.expectSha256(name, hex);
      // The library checks the digits: a caller's mistake, as every misuse is a TypeError.
      if (s === wasm.statusCode('UsageError')) throw new TypeError(`weightstream: the sha256 given for ${name} must be 64 hex digits, not ${JSON.stringify(hex)}`);
      if (s !== 0) throw makeError({ code: wasm.statusName(s), offset: null, shard: name, detail: `no room in the arena for the sha256 given for ${name}` });
    }
    if (model.kind === 'ollama' && options.verifyBlobs !== false) L.verifyBlobs();
    L.open(model.entry, model.name);
    let begun = false, ready = false, settled = false;
    // The data phase has its scratch once the loader reads on after ModelReady: from then on no
    // retry can come, and nothing more is recorded.
    const settle = () => {
      if (settled || !ready) return;
      settled = true;
      for (const f of feeds.values()) f?.stopRecording();
    };
    for (;;) {
      const t = L.next();
      switch (t) {
        case Ev.NeedRead:
          settle();
          await answer(L, L.evFile, L.evOffset, L.evLength);
          break;
        case Ev.Kv: {
          const f = L.evFile;
          let c = kvs.get(f);
          if (!c) kvs.set(f, (c = new GgufKvCollector(wasm, { arrayLimit: options.arrayLimit ?? 16 })));
          c.onEvent(L.kv);
          break;
        }
        case Ev.ModelReady: {
          // The files' headers are built only when asked for (inspect, createReader): validate()
          // needs their counts alone (tableFacts).
          let files = null;
          ready = true;
          const ev = { kind: 'ready', loader: L, get files() { return (files ??= filesOf(L)); }, model: L.model(readSize) };
          if (o.onReady) await o.onReady(L, ev);
          if (!readyYielded) yield ev;
          readyYielded = true;
          break;
        }
        case Ev.WeightBegin:
          settle();
          begun = true;
          yield { kind: 'begin', weight: L.evWeight };
          break;
        case Ev.WeightData:
          outLast += L.evSize;
          yield { kind: 'data', weight: L.evWeight, role: L.evRole, ptr: L.evData, size: L.evSize, offset: L.evOffset };
          if (signal?.aborted) throw abortError(signal, 0);
          break;
        case Ev.WeightEnd: yield { kind: 'end', weight: L.evWeight }; break;
        // Something the library decodes as one runtime does and another reads otherwise (GPTQ v1's
        // zero spill): never a failure; the results carry it (`warnings`).
        case Ev.Warning: yield { kind: 'warning', warning: publicWarning(L, model) }; break;
        case Ev.Done: yield { kind: 'done' }; return false;
        case Ev.Error: {
          const e = L.error();
          if (e.code === 'ArenaExhausted' && !begun && e.arenaNeeded > L.arenaSize) return true;
          const err = failure(L);
          err.verdict = verdictOf(L, e);
          // A convention's rejection comes after every header was validated: inspect() still
          // reports the files.
          if (e.convention) Object.defineProperty(err, 'model', { value: { files: filesOf(L), model: L.model(readSize) }, enumerable: false });
          throw err;
        }
        default: break;
      }
    }
  }

  // What validate() says of a model it rejects: the failing file's format, and its tensor count
  // once its header was valid (a length error after it, a convention's rejection: every table's).
  function verdictOf(L, e) {
    if (e.file === null || !L.file(e.file).hasReader) return e.convention ? tableFacts(L) : { format: null, tensors: 0 };
    const info = L.reader(e.file).info();
    const past = info.dataStart > 0 && info.position >= info.dataStart;
    return { format: info.format === 'unknown' ? null : info.format, tensors: past || e.code === 'TruncatedData' || e.code === 'TrailingBytes' ? info.tensorCount : 0 };
  }

  // Every file of the model, with its validated header (null for documents and absent files).
  function filesOf(L) {
    const files = [];
    for (let f = 0, n = L.fileCount(); f < n; f++) {
      const file = L.file(f);
      file.feed = feeds.get(f) ?? null;
      file.size = file.feed?.src.size ?? null;
      file.shard = model.shardName(file);
      if (file.kind === 'index') {
        Object.assign(file, L.indexFacts());
        file.metadata = file.totalSize === null ? null : { total_size: file.totalSize };
      }
      file.header = file.hasReader ? L.reader(f).header(kvs.get(f) ?? new GgufKvCollector(wasm, {})) : null;
      if (file.header) { file.header.size = file.size; file.header.name = file.feed?.src.name ?? null; }
      files.push(file);
    }
    return files;
  }

  async function answer(L, f, offset, length) {
    if (signal?.aborted) throw abortError(signal, offset);
    if (!feeds.has(f)) feeds.set(f, await openFile(L, f));
    const feed = feeds.get(f);
    if (feed === null) { L.fileMissing(); return; }
    // The size (and with verify: 'etag', the digest its server states) go with a file's first
    // request of each attempt (each a new loader).
    if (!sized.has(f)) {
      if (feed.src.size !== null && feed.src.size !== undefined) L.setFileSize(feed.src.size);
      if (options.verify === 'etag' && feed.src.sha256) L.setFileSha256(feed.src.sha256);
    }
    sized.add(f);
    if (outLast > 0 && fedLast > 0) piece = Math.max(MIN_PIECE, Math.floor(outSize * fedLast / outLast / 4096) * 4096);
    outLast = 0;
    const bytes = await feed.read(offset, Math.min(length, piece), signal, gap);
    fedLast = bytes.length;
    if (bytes.length === 0) { L.endOfFile(); return; }
    progress?.addBytes(bytes.length);
    L.feed(bytes);
  }

  // File f's source, opened; null when the model's documents name a file that is not there.
  async function openFile(L, f) {
    const file = L.file(f);
    const input = await model.input(file, L);
    if (input === null || input === undefined) return null;
    if (input === model.opened) return new FileFeed(input, file.name);
    let src = await toSource(input, options);
    try {
      await src.open(signal);
      // A model read by range (the loader jumps to companions and scalars) with a file that cannot
      // seek (a server without Range): that file is read into memory once.
      if (model.seekable && !(src.seekable && src.range)) src = await toSource(await readAll(src, signal, true), options);
    } catch (e) {
      // A file the documents name that is not there is the loader's to word (a blob, config.json).
      if ((file.kind === 'config' || model.missingIsFine?.(file)) && isMissing(e)) return null;
      throw model.place(e, file);
    }
    return new FileFeed(src, file.name);
  }
}

// A loader warning as the package returns it: the file named as an error names it (its `shard`:
// a shard or blob of a model of several files; null for the one file given), the weight by name.
export function publicWarning(L, model) {
  const w = L.warning();
  return {
    code: w.code, file: w.file === null ? null : model.shardName(L.file(w.file)), offset: w.offset, tensor: w.tensor,
    weight: w.weight === null ? null : L.weight(w.weight, 1).name, count: w.count, message: w.message,
  };
}

// The format of a model's first data file and its tensor count over all data files.
export function tableFacts(L) {
  let format = null, tensors = 0;
  for (let f = 0, n = L.fileCount(); f < n; f++) {
    if (!L.file(f).hasReader) continue;
    const info = L.reader(f).info();
    format ??= info.format;
    tensors += info.tensorCount;
  }
  return { format, tensors };
}

export { Mode };
