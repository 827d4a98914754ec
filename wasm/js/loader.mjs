// ws::ModelLoader behind its handle (wasm/src/abi_loader.cpp; the word layouts here mirror the
// comments there). The loader decides everything about a model — its files and their order,
// companions, conventions, checks, decoding; this class only moves words and bytes across.
import { u64 } from './module.mjs';
import { readError, FormatNames } from './session.mjs';
import { buildHeader } from './header.mjs';
import { formatTable } from './formats.mjs';

export const Entry = Object.freeze({ auto: 0, file: 1, shardIndex: 2, uqffFiles: 3, ollamaManifest: 4 });
export const Mode = Object.freeze({ headers: 0, validate: 1, decode: 2, raw: 3 });
export const Ev = Object.freeze({ NeedRead: 0, Kv: 1, ModelReady: 2, WeightBegin: 3, WeightData: 4, WeightEnd: 5, Done: 6, Error: 7 });
export const FILE_KINDS = ['file', 'index', 'manifest', 'shard', 'uqffPart', 'blob', 'config'];
export const CONVENTIONS = ['plain', 'mlx', 'ollama', 'uqff'];
export const MODES = ['none', 'affine', 'mxfp4', 'mxfp8', 'nvfp4'];
// PieceRole order (conventions.h).
export const ROLES = ['packed', 'scales', 'biases', 'globalScale', 'format', 'ggmlType', 'shape', 'bits', 'groupSize', 'numBlocks'];
export const UQFF_TYPES = ['gguf', 'unquant', 'hqq', 'fp8', 'afq', 'f8q8', 'mxfp4'];
export const NONE = 0xFFFFFFFF;
const KERNELS = { auto: 0, reference: 1, simd128: 2 };
const OUT = { f32: 0, f16: 1 };
const utf8 = new TextEncoder();

// Limits as the ABI reads them (8 words), from JS-style options.
function writeLimits(u32, w, limits) {
  const big = (v, at) => { const b = BigInt(v); u32[w + at] = Number(b & 0xFFFFFFFFn); u32[w + at + 1] = Number(b >> 32n); };
  big(limits.maxHeaderBytes ?? 100000000, 0);
  u32[w + 2] = limits.maxTensors ?? 0xFFFFFFFF;
  big(limits.maxNameBytes ?? 100000000, 3);
  u32[w + 5] = limits.maxRank ?? 0xFFFFFFFF;
  u32[w + 6] = limits.maxNesting ?? 127;
  u32[w + 7] = limits.keepMetadata === false ? 0 : 1;
}

export class Loader {
  // o: {arenaSize, seekable, mode (Mode), dtype ('f32' | 'f16'), kernel, validateBlocks, readSize,
  // outSize, limits}. Allocates everything the load needs, once.
  constructor(wasm, o) {
    this.wasm = wasm;
    this.arenaSize = o.arenaSize;
    this.readSize = o.readSize;
    const words = wasm.alloc(4 * 16);
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
    if (o.limits) writeLimits(u, w + 8, o.limits);
    this.h = wasm.x.ws_loader_create(o.arenaSize, words, o.limits ? words + 32 : 0);
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

  fileCount() { return this.wasm.x.ws_loader_file_count(this.h); }
  file(f) {
    const w = this.wasm.x.ws_loader_file(this.h, f) >> 2;
    const u = this.wasm.u32;
    return {
      index: f, name: this.wasm.text(u[w], u[w + 1]), kind: FILE_KINDS[u[w + 2]], present: u[w + 3] !== 0,
      table: u[w + 4] === NONE ? null : u[w + 4], layer: u[w + 5] === NONE ? null : u[w + 5], hasReader: u[w + 6] !== 0,
    };
  }

  // File f's reader, with the Session interface header.mjs and gguf-kv.mjs read (info(), tensors(),
  // tensor(), metadata(), kvEvent()).
  reader(f) { return new FileReaderView(this, f); }

  model(chunk) {
    const w = this.wasm.x.ws_loader_model(this.h, chunk) >> 2;
    const u = this.wasm.u32;
    return {
      convention: CONVENTIONS[u[w]], format: FormatNames[u[w + 1]] ?? 'unknown', configUsed: u[w + 2] !== 0,
      tableCount: u[w + 3], weightCount: u[w + 4], entryFile: u[w + 5] === NONE ? null : u[w + 5], logical: u[w + 6] !== 0,
      version: [u[w + 7], u[w + 8], u[w + 9]],
      plan: { chunk, sequentialPeak: u64(u[w + 10], u[w + 11]), seekablePeak: u64(u[w + 12], u[w + 13]) },
    };
  }
  tableFile(t) { return this.wasm.x.ws_loader_table_file(this.h, t); }

  // Weight i with its load plan for reads of `chunk` bytes (conventions.mjs's shape).
  weight(i, chunk, formats = formatTable(this.wasm)) {
    const wasm = this.wasm;
    const w = wasm.x.ws_loader_weight(this.h, i, chunk) >> 2;
    const u = wasm.u32;
    const rank = u[w + 9];
    const shape = [];
    for (let d = 0; d < rank; d++) shape.push(u64(u[w + 10 + 2 * d], u[w + 11 + 2 * d]));
    const pieces = {};
    for (let r = 0; r < ROLES.length; r++) {
      if (u[w + 22 + 2 * r] !== NONE) pieces[ROLES[r]] = { table: u[w + 22 + 2 * r], index: u[w + 23 + 2 * r] };
    }
    const convention = CONVENTIONS[u[w + 2]];
    return {
      index: i,
      name: wasm.text(u[w], u[w + 1]),
      convention,
      mode: MODES[u[w + 3]],
      bits: u[w + 4],
      group: u[w + 5],
      format: formats.list[u[w + 6]],
      decodable: u[w + 7] !== 0,
      scaleDtype: u[w + 8],
      shape,
      elements: u64(u[w + 18], u[w + 19]),
      globalScaleIsOllama: u[w + 20] !== 0,
      uqffType: convention === 'uqff' ? UQFF_TYPES[u[w + 21]] : null,
      pieces,
      plan: {
        packedBeforeCompanion: u[w + 42] !== 0,
        companionBytes: u64(u[w + 43], u[w + 44]),
        sequentialScratch: u64(u[w + 45], u[w + 46]),
        seekableScratch: u64(u[w + 47], u[w + 48]),
      },
      file: u[w + 49] === NONE ? null : u[w + 49],
    };
  }

  // {code, status, offset, tensorIndex, tensor, found, expected, file, detail, convention, arenaNeeded}
  error() {
    const wasm = this.wasm;
    const w = wasm.x.ws_loader_error(this.h) >> 2;
    const e = readError(wasm, w);
    const u = wasm.u32;
    e.file = u[w + 12] === NONE ? null : u[w + 12];
    e.detail = u[w + 14] ? wasm.text(u[w + 13], u[w + 14]) : null;
    e.convention = u[w + 15] !== 0;
    e.arenaNeeded = u[w + 16];
    return e;
  }
}

// One file's reader inside the loader, read as a session (header.mjs, gguf-kv.mjs).
class FileReaderView {
  constructor(loader, f) { this.loader = loader; this.f = f; this.wasm = loader.wasm; }

  info() {
    const wasm = this.wasm;
    const p = wasm.x.ws_loader_file_info(this.loader.h, this.f);
    if (!p) return null;
    const w = p >> 2;
    const u = wasm.u32;
    return {
      format: FormatNames[u[w]] ?? 'unknown',
      position: u64(u[w + 1], u[w + 2]),
      headerSize: u64(u[w + 3], u[w + 4]),
      headerSizeBig: (BigInt(u[w + 4]) << 32n) | BigInt(u[w + 3]),
      dataStart: u64(u[w + 5], u[w + 6]),
      dataSize: u64(u[w + 7], u[w + 8]),
      tensorCount: u[w + 9],
      arenaUsed: u[w + 10],
      arenaPeak: u[w + 11],
      arenaNeeded: u[w + 12],
      ggufVersion: u[w + 13],
      ggufAlignment: u[w + 14],
      ggufKvCount: u64(u[w + 15], u[w + 16]),
      dialect: u[w + 17] === 1 ? 'bitnet' : 'upstream',
      dialectId: u[w + 17],
      architecture: u[w + 18] ? wasm.text(u[w + 18], u[w + 19]) : null,
      tensorInfosOffset: u64(u[w + 20], u[w + 21]),
      metadataCount: u[w + 22],
      hasMetadata: u[w + 23] !== 0,
      arenaSize: u[w + 24],
      error: readError(wasm, w + 32),
    };
  }

  tensor(i, dimsPtr, dimsMax) {
    const wasm = this.wasm;
    const w = wasm.x.ws_loader_file_tensor(this.loader.h, this.f, i) >> 2;
    const u = wasm.u32;
    const t = {
      name: wasm.text(u[w], u[w + 1]), type: u[w + 2], rank: u[w + 3],
      begin: u64(u[w + 4], u[w + 5]), end: u64(u[w + 6], u[w + 7]),
      entryOffset: u64(u[w + 8], u[w + 9]), elements: u64(u[w + 10], u[w + 11]), shape: null,
    };
    const rank = Math.min(t.rank, dimsMax);
    wasm.x.ws_loader_file_dims(this.loader.h, this.f, i, dimsPtr, rank);
    const d = wasm.u32;
    const shape = new Array(rank);
    for (let k = 0; k < rank; k++) shape[k] = u64(d[(dimsPtr >> 2) + 2 * k], d[(dimsPtr >> 2) + 2 * k + 1]);
    t.shape = shape;
    return t;
  }

  tensors(count) {
    const wasm = this.wasm;
    let maxRank = 0;
    for (let i = 0; i < count; i++) {
      const w = wasm.x.ws_loader_file_tensor(this.loader.h, this.f, i) >> 2;
      maxRank = Math.max(maxRank, wasm.u32[w + 3]);
    }
    const big = maxRank > wasm.scratchDims;
    const dims = big ? wasm.alloc(8 * maxRank) : wasm.scratch;
    try {
      const out = new Array(count);
      for (let i = 0; i < count; i++) out[i] = this.tensor(i, dims, maxRank);
      return out;
    } finally {
      if (big) wasm.free(dims);
    }
  }

  metadata(has) {
    if (!has) return null;
    const wasm = this.wasm;
    const out = Object.create(null);
    wasm.x.ws_loader_file_metadata_reset(this.loader.h, this.f);
    while (wasm.x.ws_loader_file_metadata_next(this.loader.h, this.f)) {
      const u = wasm.u32;
      const w = this.loader.item;
      out[wasm.text(u[w], u[w + 1])] = wasm.text(u[w + 2], u[w + 3]);
    }
    return out;
  }

  // The Kv event the loader handed on last (abi.h EventOut, as a session's kvEvent()).
  kvEvent() {
    const wasm = this.wasm;
    const u = wasm.u32;
    const w = this.loader.kv;
    return {
      type: u[w], kv: u[w + 6], keyPtr: u[w + 7], keyLen: u[w + 8], valueType: u[w + 9], elemType: u[w + 10],
      count: u64(u[w + 11], u[w + 12]), index: u64(u[w + 13], u[w + 14]), first: u[w + 15] !== 0, last: u[w + 16] !== 0,
      uLo: u[w + 17], uHi: u[w + 18], iLo: u[w + 19], iHi: u[w + 20], f: wasm.f64[(w + 22) >> 1],
      data: u[w + 2], size: u[w + 3], offset: u64(u[w + 4], u[w + 5]),
    };
  }

  // The file's header as inspect() reports it (header.mjs), once its reader validated it.
  header(kvs) {
    const info = this.info();
    return buildHeader(this.wasm, this, info, kvs);
  }
}
