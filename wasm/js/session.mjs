// A reader session in wasm memory (wasm/src/abi_session.cpp): the word layouts here mirror the
// comments there.
import { u64, u64big } from './module.mjs';

export const EventType = Object.freeze({
  NeedInput: 0, KvBegin: 1, KvScalar: 2, KvBytes: 3, KvEnd: 4, HeaderReady: 5,
  TensorBegin: 6, TensorBytes: 7, TensorEnd: 8, End: 9, Error: 10,
});
export const FormatNames = ['unknown', 'safetensors', 'gguf'];
export const NO_TENSOR = 0xFFFFFFFF;

// A rejection from the 12 error words at word index `w` (abi.h).
export function readError(wasm, w) {
  const u32 = wasm.u32;
  const tensorPtr = u32[w + 4];
  const tensorLen = u32[w + 5];
  return {
    code: wasm.statusName(u32[w]),
    status: u32[w],
    offset: u64(u32[w + 1], u32[w + 2]),
    tensorIndex: u32[w + 3] === NO_TENSOR ? null : u32[w + 3],
    tensor: tensorPtr ? wasm.text(tensorPtr, tensorLen) : null,
    found: u32[w + 6] ? u64big(u32[w + 8], u32[w + 9]) : null,
    expected: u32[w + 7] ? u64big(u32[w + 10], u32[w + 11]) : null,
  };
}

// Limits as the ABI reads them (8 words), from JS-style options.
function writeLimits(wasm, ptr, limits) {
  const w = ptr >> 2;
  const u32 = wasm.u32;
  const big = (v, at) => { const b = BigInt(v); u32[w + at] = Number(b & 0xFFFFFFFFn); u32[w + at + 1] = Number(b >> 32n); };
  big(limits.maxHeaderBytes ?? 100000000, 0);
  u32[w + 2] = limits.maxTensors ?? 0xFFFFFFFF;
  big(limits.maxNameBytes ?? 100000000, 3);
  u32[w + 5] = limits.maxRank ?? 0xFFFFFFFF;
  u32[w + 6] = limits.maxNesting ?? 127;
  u32[w + 7] = limits.keepMetadata === false ? 0 : 1;
}

export class Session {
  // Allocates the reader, its arena and an input buffer of `inputSize` bytes.
  constructor(wasm, { arenaSize, inputSize, limits }) {
    this.wasm = wasm;
    this.arenaSize = arenaSize;
    this.inputSize = inputSize;
    let limitsPtr = 0;
    if (limits) {
      limitsPtr = wasm.alloc(32);
      writeLimits(wasm, limitsPtr, limits);
    }
    const x = wasm.x;
    this.h = x.ws_session_create(arenaSize, inputSize, limitsPtr);
    wasm.free(limitsPtr);
    if (!this.h) throw new RangeError(`weightstream: cannot allocate a reader with a ${arenaSize}-byte arena`);
    wasm.live.sessions++;
    this.input = x.ws_session_input(this.h);
    this.ev = x.ws_session_event(this.h) >> 2;
    this.item = x.ws_session_item(this.h) >> 2;
  }

  destroy() {
    if (this.h) { this.wasm.x.ws_session_destroy(this.h); this.wasm.live.sessions--; }
    this.h = 0;
  }

  // Copies `bytes` (at most inputSize) into the input buffer and feeds them.
  feed(bytes) {
    this.wasm.u8.set(bytes, this.input);
    this.wasm.x.ws_session_feed(this.h, bytes.length);
  }
  finish() { this.wasm.x.ws_session_finish(this.h); }
  setInputSize(n) { this.wasm.x.ws_session_set_input_size(this.h, n % 4294967296, Math.floor(n / 4294967296)); }
  next() { return this.wasm.x.ws_session_next(this.h); }

  // Fields of the last event.
  get evTensor() { return this.wasm.u32[this.ev + 1]; }
  get evData() { return this.wasm.u32[this.ev + 2]; }
  get evSize() { return this.wasm.u32[this.ev + 3]; }
  get evOffset() { const u = this.wasm.u32; return u64(u[this.ev + 4], u[this.ev + 5]); }
  // The whole GGUF key-value event.
  kvEvent() {
    const wasm = this.wasm;
    const u = wasm.u32;
    const w = this.ev;
    return {
      type: u[w],
      kv: u[w + 6],
      keyPtr: u[w + 7],
      keyLen: u[w + 8],
      valueType: u[w + 9],
      elemType: u[w + 10],
      count: u64(u[w + 11], u[w + 12]),
      index: u64(u[w + 13], u[w + 14]),
      first: u[w + 15] !== 0,
      last: u[w + 16] !== 0,
      uLo: u[w + 17], uHi: u[w + 18],
      iLo: u[w + 19], iHi: u[w + 20],
      f: wasm.f64[(w + 22) >> 1],
      data: u[w + 2], size: u[w + 3],
      offset: u64(u[w + 4], u[w + 5]),
    };
  }

  info() {
    const wasm = this.wasm;
    const w = wasm.x.ws_session_info(this.h) >> 2;
    const u = wasm.u32;
    return {
      format: FormatNames[u[w]] ?? 'unknown',
      position: u64(u[w + 1], u[w + 2]),
      headerSize: u64(u[w + 3], u[w + 4]),
      headerSizeBig: u64big(u[w + 3], u[w + 4]),
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

  // Tensor i of the validated table: name, type id, data offsets, shape.
  tensor(i, dimsPtr, dimsMax) {
    const wasm = this.wasm;
    wasm.x.ws_session_tensor(this.h, i);
    const u = wasm.u32;
    const w = this.item;
    const t = {
      name: wasm.text(u[w], u[w + 1]),
      type: u[w + 2],
      rank: u[w + 3],
      begin: u64(u[w + 4], u[w + 5]),
      end: u64(u[w + 6], u[w + 7]),
      entryOffset: u64(u[w + 8], u[w + 9]),
      elements: u64(u[w + 10], u[w + 11]),
      shape: null,
    };
    const rank = Math.min(t.rank, dimsMax);
    wasm.x.ws_session_tensor_dims(this.h, i, dimsPtr, rank);
    const d = wasm.u32;
    const shape = new Array(rank);
    for (let k = 0; k < rank; k++) shape[k] = u64(d[(dimsPtr >> 2) + 2 * k], d[(dimsPtr >> 2) + 2 * k + 1]);
    t.shape = shape;
    return t;
  }

  // Every tensor of the table (dims through one scratch buffer sized for the largest rank).
  tensors(count) {
    const wasm = this.wasm;
    let maxRank = 0;
    for (let i = 0; i < count; i++) {
      wasm.x.ws_session_tensor(this.h, i);
      maxRank = Math.max(maxRank, wasm.u32[this.item + 3]);
    }
    // Real tensors have a handful of dimensions: the module's fixed scratch holds 64. Only a
    // crafted header with a higher rank costs an allocation (at header time, never mid-stream).
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

  // Safetensors __metadata__ as an object (null when the header has none).
  metadata(has) {
    if (!has) return null;
    const wasm = this.wasm;
    const out = Object.create(null);
    wasm.x.ws_session_metadata_reset(this.h);
    while (wasm.x.ws_session_metadata_next(this.h)) {
      const u = wasm.u32;
      const w = this.item;
      out[wasm.text(u[w], u[w + 1])] = wasm.text(u[w + 2], u[w + 3]);
    }
    return out;
  }
}
