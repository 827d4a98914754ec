// A reader session in wasm memory (wasm/src/abi_session.cpp): the word layouts here mirror the
// comments there.
import { u64 } from './module.mjs';
import { readError, FormatNames, writeLimits, readKvEvent, readInfo, readTensor, readTensors, readMetadata } from './words.mjs';

export const EventType = Object.freeze({
  NeedInput: 0, KvBegin: 1, KvScalar: 2, KvBytes: 3, KvEnd: 4, HeaderReady: 5,
  TensorBegin: 6, TensorBytes: 7, TensorEnd: 8, End: 9, Error: 10,
});
export { FormatNames, readError };
export const NO_TENSOR = 0xFFFFFFFF;

export class Session {
  // Allocates the reader, its arena and an input buffer of `inputSize` bytes.
  constructor(wasm, { arenaSize, inputSize, limits }) {
    this.wasm = wasm;
    this.arenaSize = arenaSize;
    this.inputSize = inputSize;
    let limitsPtr = 0;
    if (limits) {
      limitsPtr = wasm.alloc(32);
      writeLimits(wasm, limitsPtr >> 2, limits);
    }
    const x = wasm.x;
    this.h = x.ws_session_create(arenaSize, inputSize, limitsPtr);
    wasm.free(limitsPtr);
    if (!this.h) throw new RangeError(`weightstream: cannot allocate a reader with a ${arenaSize}-byte arena`);
    wasm.live.sessions++;
    this.input = x.ws_session_input(this.h);
    this.ev = x.ws_session_event(this.h) >> 2;
    this.item = x.ws_session_item(this.h) >> 2;
    this.itemOf = (i) => x.ws_session_tensor(this.h, i) >> 2;
    this.dimsOf = (i, ptr, max) => x.ws_session_tensor_dims(this.h, i, ptr, max);
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
  kvEvent() { return readKvEvent(this.wasm, this.ev); }

  info() { return readInfo(this.wasm, this.wasm.x.ws_session_info(this.h) >> 2); }

  // Tensor i of the validated table: name, type id, data offsets, shape.
  tensor(i, dimsPtr, dimsMax) { return readTensor(this.wasm, i, this.itemOf, this.dimsOf, dimsPtr, dimsMax); }
  // Every tensor of the table.
  tensors(count) { return readTensors(this.wasm, count, this.itemOf, this.dimsOf); }

  // Safetensors __metadata__ as an object (null when the header has none).
  metadata(has) {
    if (!has) return null;
    const x = this.wasm.x;
    return readMetadata(this.wasm, () => x.ws_session_metadata_reset(this.h), () => x.ws_session_metadata_next(this.h), this.item);
  }
}
