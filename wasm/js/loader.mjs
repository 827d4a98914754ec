// ws::ModelLoader behind its handle (wasm/src/abi_loader.cpp; the word layouts here mirror the
// comments there). The loader decides everything about a model — its files and their order,
// companions, conventions, checks, decoding; this class only moves words and bytes across.
import { u64, TABLE_RECORDS, TABLE_NAMES } from './module.mjs';
import { readError, FormatNames, NONE, writeLimits, readInfo, readTensor, readMetadata, readWeight } from './words.mjs';
import { buildHeader } from './header.mjs';
import { formatTable } from './formats.mjs';
import { copyTable } from './tensor-table.mjs';

export const Entry = Object.freeze({ auto: 0, file: 1, shardIndex: 2, uqffFiles: 3, ollamaManifest: 4, ggufSplits: 5 });
export const Mode = Object.freeze({ headers: 0, validate: 1, decode: 2, raw: 3 });
export const Ev = Object.freeze({ NeedRead: 0, Kv: 1, ModelReady: 2, WeightBegin: 3, WeightData: 4, WeightEnd: 5, Done: 6, Error: 7, Warning: 8 });
export const FILE_KINDS = ['file', 'index', 'manifest', 'shard', 'uqffPart', 'blob', 'config', 'split'];
export const DIGEST_STATES = ['none', 'pending', 'verified', 'mismatch'];
const hexOf = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('');
const KERNELS = { auto: 0, reference: 1, simd128: 2 };
const OUT = { f32: 0, f16: 1, bf16: 2 };  // ws::OutType
const utf8 = new TextEncoder();

export class Loader {
  // o: {arenaSize, seekable, mode (Mode), dtype ('f32' | 'f16' | 'bf16'), kernel, validateBlocks, readSize,
  // outSize, limits, passStored, asStored, storedFormats, arrayFull, arrayHead}. Allocates everything the load
  // needs, once. arrayFull/arrayHead: the loader's preview of long GGUF string arrays (ModelLoader
  // Options::gguf_array_full/head): past arrayFull elements, only the first arrayHead and the last come out.
  constructor(wasm, o) {
    this.wasm = wasm;
    this.arenaSize = o.arenaSize;
    this.readSize = o.readSize;
    const words = wasm.alloc(4 * 21);
    const w = words >> 2;
    const u = wasm.u32;
    u[w] = o.seekable ? 1 : 0;
    u[w + 1] = o.mode;
    u[w + 2] = OUT[o.dtype] ?? 0;
    u[w + 3] = KERNELS[o.kernel ?? 'auto'] ?? 0;
    u[w + 4] = o.validateBlocks === false ? 0 : 1;
    u[w + 5] = o.readSize;
    u[w + 6] = o.outSize;
    u[w + 7] = 0;
    // estimate_arena: the host retries after ArenaExhausted (host.mjs), so a large safetensors
    // header is sized from its length instead of being counted through first.
    u[w + 8] = (o.passStored ? 1 : 0) | (o.asStored ? 2 : 0) | 4;
    u[w + 9] = o.arrayFull ?? 0xFFFFFFFF;
    u[w + 10] = o.arrayHead ?? 0xFFFFFFFF;
    // storedFormats: a bigint mask of format ids the host decodes itself (ModelLoaderOptions::
    // stored_formats: the WebGPU decode pass's formats).
    const sf = BigInt(o.storedFormats ?? 0n);
    u[w + 11] = Number(sf & 0xFFFFFFFFn);
    u[w + 12] = Number((sf >> 32n) & 0xFFFFFFFFn);
    if (o.limits) writeLimits(wasm, w + 13, o.limits);
    this.h = wasm.x.ws_loader_create(o.arenaSize, words, o.limits ? words + 52 : 0);
    wasm.free(words);
    if (!this.h) throw new RangeError(`weightstream: cannot allocate a model loader with a ${o.arenaSize}-byte arena`);
    wasm.live.loaders++;
    this.input = wasm.x.ws_loader_input(this.h);
    this.ev = wasm.x.ws_loader_event(this.h) >> 2;
    this.kv = wasm.x.ws_loader_kv(this.h) >> 2;
    this.item = wasm.x.ws_loader_item(this.h) >> 2;
  }

  destroy() {
    if (this.h) { this.wasm.x.ws_loader_destroy(this.h); this.wasm.live.loaders--; }
    this.h = 0;
  }

  put(s) {
    const b = utf8.encode(s).subarray(0, this.readSize);
    this.wasm.u8.set(b, this.input);
    return b.length;
  }
  addFile(name) { return this.wasm.x.ws_loader_add_file(this.h, this.put(name)); }
  open(entry, name) { return this.wasm.x.ws_loader_open(this.h, entry, this.put(name)); }
  // Before open(): file `name`'s expected SHA-256 (64 hex digits); Ollama blobs by their names.
  expectSha256(name, hex) {
    const n = utf8.encode(name), x = utf8.encode(hex);
    if (n.length + x.length > this.readSize) return this.wasm.statusCode('UsageError');
    this.wasm.u8.set(n, this.input);
    this.wasm.u8.set(x, this.input + n.length);
    return this.wasm.x.ws_loader_expect_sha256_hex(this.h, n.length, x.length);
  }
  verifyBlobs() { return this.wasm.x.ws_loader_verify_blobs(this.h); }
  // On a file's first read: its expected digest (64 hex digits).
  setFileSha256(hex) {
    this.wasm.u8.set(utf8.encode(hex).subarray(0, 64), this.input);
    return this.wasm.x.ws_loader_set_file_sha256_hex(this.h);
  }
  // File f's digest: {state, expected, actual} (hex strings or null).
  fileDigest(f) {
    const w = this.wasm.x.ws_loader_file_digest(this.h, f);
    const u = this.wasm.u32, b = this.wasm.u8;
    return {
      state: DIGEST_STATES[u[w >> 2]],
      expected: u[(w >> 2) + 1] ? hexOf(b.subarray(w + 16, w + 48)) : null,
      actual: u[(w >> 2) + 2] ? hexOf(b.subarray(w + 48, w + 80)) : null,
    };
  }
  next() { return this.wasm.x.ws_loader_next(this.h); }

  // The last event's fields.
  get evFile() { return this.wasm.u32[this.ev + 1]; }
  get evOffset() { const u = this.wasm.u32; return u64(u[this.ev + 2], u[this.ev + 3]); }
  get evLength() { return this.wasm.u32[this.ev + 4]; }
  get evWeight() { return this.wasm.u32[this.ev + 5]; }
  get evRole() { return this.wasm.u32[this.ev + 6]; }
  get evData() { return this.wasm.u32[this.ev + 7]; }
  get evSize() { return this.wasm.u32[this.ev + 8]; }

  // Answers to a read.
  setFileSize(n) { this.wasm.x.ws_loader_set_file_size(this.h, n % 4294967296, Math.floor(n / 4294967296)); }
  feed(bytes) {
    this.wasm.u8.set(bytes, this.input);
    this.wasm.x.ws_loader_feed(this.h, bytes.length);
  }
  endOfFile() { this.wasm.x.ws_loader_end_of_file(this.h); }
  fileMissing() { this.wasm.x.ws_loader_file_missing(this.h); }
  select(i) { return this.wasm.x.ws_loader_select(this.h, i); }
  selectAll() { this.wasm.x.ws_loader_select_all(this.h); }
  // Weight i goes out as stored (Decode with passStored: a type nothing decodes).
  passesStored(i) { return this.wasm.x.ws_loader_passes_stored(this.h, i) !== 0; }
  // Weight i goes out as stored for the host to decode (storedFormats; it has a decoding).
  storedForHost(i) { return this.wasm.x.ws_loader_stored_for_host(this.h, i) !== 0; }
  // The bytes weight i hands out in this mode (Decode: its f32/f16 values, or its stored bytes
  // when it passes stored; Raw: its pieces): the library's size of an output, known at ModelReady.
  outputBytes(i) {
    const w = this.wasm.x.ws_loader_output_bytes(this.h, i) >> 2;
    return u64(this.wasm.u32[w], this.wasm.u32[w + 1]);
  }
  // {read: bytes fed so far, toRead: what the rest of the load reads (after the selection)}.
  bytes() {
    const w = this.wasm.x.ws_loader_bytes(this.h) >> 2;
    const u = this.wasm.u32;
    return { read: u64(u[w], u[w + 1]), toRead: u64(u[w + 2], u[w + 3]) };
  }

  fileCount() { return this.wasm.x.ws_loader_file_count(this.h); }
  file(f) {
    const w = this.wasm.x.ws_loader_file(this.h, f) >> 2;
    const u = this.wasm.u32;
    return {
      index: f, name: this.wasm.text(u[w], u[w + 1]), kind: FILE_KINDS[u[w + 2]], present: u[w + 3] !== 0,
      table: u[w + 4] === NONE ? null : u[w + 4], layer: u[w + 5] === NONE ? null : u[w + 5], hasReader: u[w + 6] !== 0,
      split: u[w + 7] === NONE ? null : u[w + 7], foreignKvs: u[w + 8], foreignKvOffset: u64(u[w + 9], u[w + 10]),
    };
  }

  // File f's reader, with the Session interface header.mjs and gguf-kv.mjs read (info(), tensors(),
  // tensor(), metadata()); a Kv event's words are at loader.kv (gguf-kv.mjs reads them).
  reader(f) { return new FileReaderView(this, f); }

  model(chunk) {
    const w = this.wasm.x.ws_loader_model(this.h, chunk) >> 2;
    const u = this.wasm.u32;
    return {
      convention: this.wasm.conventionNames[u[w]], format: FormatNames[u[w + 1]] ?? 'unknown', configUsed: u[w + 2] !== 0,
      tableCount: u[w + 3], weightCount: u[w + 4], entryFile: u[w + 5] === NONE ? null : u[w + 5], logical: u[w + 6] !== 0,
      version: [u[w + 7], u[w + 8], u[w + 9]],
      plan: { chunk, sequentialPeak: u64(u[w + 10], u[w + 11]), seekablePeak: u64(u[w + 12], u[w + 13]) },
      splitCount: u[w + 14],
    };
  }
  tableFile(t) { return this.wasm.x.ws_loader_table_file(this.h, t); }
  // The entry index's figures ({tensors, totalSize}), or null when the model has no index.
  indexFacts() {
    if (!this.wasm.x.ws_loader_index_facts(this.h)) return null;
    const u = this.wasm.u32;
    return { tensors: u[this.item], totalSize: u[this.item + 1] ? u64(u[this.item + 2], u[this.item + 3]) : null };
  }

  // Weight i with its load plan for reads of `chunk` bytes (words.mjs readWeight), and the file of
  // its packed piece.
  weight(i, chunk, formats = formatTable(this.wasm)) {
    const w = this.wasm.x.ws_loader_weight(this.h, i, chunk) >> 2;
    const out = readWeight(this.wasm, w, i, formats);
    const f = this.wasm.u32[w + 49];
    out.file = f === NONE ? null : f;
    out.parameters = this.parameters(i);
    return out;
  }

  // Weight i's quantization parameters as the library presents them (ws_loader_weight_parameters):
  // {method: 'fp8', scaling: 'block', block_rows: 128, ...}; null when it has none (a plain tensor).
  parameters(i) {
    const wasm = this.wasm;
    const w = wasm.x.ws_loader_weight_parameters(this.h, i) >> 2;
    const u = wasm.u32;
    if (u[w] === 0) return null;
    const out = {};
    for (let k = 0; k < u[w]; k++) {
      const o = w + 1 + 6 * k;
      out[wasm.text(u[o], u[o + 1])] = u[o + 2] ? wasm.text(u[o + 2], u[o + 3]) : u64(u[o + 4], u[o + 5]);
    }
    return out;
  }

  // The last Warning event's warning (ws_loader_warning): {code, file (index), offset, tensor, weight
  // (index), count, message}; the code's name and the message are the library's.
  warning() {
    const wasm = this.wasm;
    const w = wasm.x.ws_loader_warning(this.h) >> 2;
    const u = wasm.u32;
    return {
      code: wasm.cstr(u[w + 1]), file: u[w + 2] === NONE ? null : u[w + 2], offset: u64(u[w + 3], u[w + 4]),
      tensor: wasm.text(u[w + 6], u[w + 7]), weight: u[w + 5] === NONE ? null : u[w + 5], count: u64(u[w + 8], u[w + 9]),
      message: wasm.text(u[w + 10], u[w + 11]),
    };
  }

  // {code, status, offset, tensorIndex, tensor, found, expected, file, detail, convention, arenaNeeded,
  // conventionId}
  error() {
    const wasm = this.wasm;
    const w = wasm.x.ws_loader_error(this.h) >> 2;
    const e = readError(wasm, w);
    const u = wasm.u32;
    e.file = u[w + 12] === NONE ? null : u[w + 12];
    e.detail = u[w + 14] ? wasm.text(u[w + 13], u[w + 14]) : null;
    e.convention = u[w + 15] !== 0;
    e.arenaNeeded = u[w + 16];
    e.conventionId = u[w + 17];  // whose words the fix is in (ws_status_hint; 0: plain, none of its own)
    return e;
  }
}

// One file's reader inside the loader, read as a session (header.mjs, gguf-kv.mjs).
class FileReaderView {
  constructor(loader, f) {
    this.loader = loader;
    this.f = f;
    this.wasm = loader.wasm;
    const x = this.wasm.x;
    this.itemOf = (i) => x.ws_loader_file_tensor(loader.h, f, i) >> 2;
    this.dimsOf = (i, ptr, max) => x.ws_loader_file_dims(loader.h, f, i, ptr, max);
  }

  info() {
    const p = this.wasm.x.ws_loader_file_info(this.loader.h, this.f);
    return p ? readInfo(this.wasm, p >> 2) : null;
  }
  tensor(i, dimsPtr, dimsMax) { return readTensor(this.wasm, i, this.itemOf, this.dimsOf, dimsPtr, dimsMax); }
  // The table as header.mjs keeps it: a view over its bytes, copied out (tensor-table.mjs).
  table(count, dtypeOf, dataStart) {
    return copyTable(this.wasm, count, (first) => this.tensorBatch(first), this.itemOf, this.dimsOf, dtypeOf, dataStart);
  }
  // Tensors from `first` on into the module's table buffer (tensor-table.mjs copyTable); how many.
  tensorBatch(first) {
    const wasm = this.wasm, io = wasm.table >> 2, u = wasm.u32;
    u[io] = first;
    u[io + 1] = wasm.table + 32;
    u[io + 2] = TABLE_RECORDS >> 2;
    u[io + 3] = wasm.table + 32 + TABLE_RECORDS;
    u[io + 4] = TABLE_NAMES;
    wasm.x.ws_loader_file_tensors(this.loader.h, this.f, wasm.table);
    return wasm.u32[io + 5];
  }
  metadata(has) {
    if (!has) return null;
    const x = this.wasm.x;
    return readMetadata(this.wasm, () => x.ws_loader_file_metadata_reset(this.loader.h, this.f),
      () => x.ws_loader_file_metadata_next(this.loader.h, this.f), this.loader.item);
  }

  // The file's header as inspect() reports it (header.mjs), once its reader validated it.
  header(kvs) { return buildHeader(this.wasm, this, this.info(), kvs); }
}
