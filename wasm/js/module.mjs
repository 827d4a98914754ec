// Loads weightstream.wasm — the same code path in browsers, workers and Node.
//
// The module is a standalone wasm file with no Emscripten JS glue (see wasm/CMakeLists.txt): it
// imports one function, and this file instantiates it. Browsers fetch the file next to this
// module (import.meta.url); Node reads it with fs, since Node's fetch does not read file: URLs.
// init({ wasmBinary }) or init({ wasmUrl }) overrides the location (bundlers, CDNs).

import { makeError, useStatusHints } from './errors.mjs';

let pending = null;

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    typeof process.versions.node === 'string';
}

async function readBinary(url) {
  if (isNode() && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`weightstream: cannot load ${url} (HTTP ${response.status})`);
  return response.arrayBuffer();
}

async function instantiate(options, discard) {
  const imports = {
    // Called by the module's allocator when memory grows; views are re-checked lazily anyway.
    env: { emscripten_notify_memory_growth() { wasm?.memoryChanged(); } },
  };
  let wasm = null;
  let bytes = options.wasmBinary;
  if (!bytes) {
    const url = options.wasmUrl ? new URL(options.wasmUrl, import.meta.url) : new URL('./weightstream.wasm', import.meta.url);
    bytes = await readBinary(url);
  }
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  instance.exports._initialize();  // static constructors (a reactor module has no main)
  wasm = new Wasm(contained(instance.exports, discard));
  return wasm;
}

// A trap of any kind (out-of-bounds access, division by zero, unreachable) must never reach a
// caller as a RuntimeError, nor leave a module whose memory may be inconsistent in use: every
// export is wrapped so that a trap becomes a WeightstreamError (InternalError), and the instance
// is dropped — the next init() (every public call makes one) instantiates a fresh module.
function contained(exports, discard) {
  const out = { memory: exports.memory };
  for (const [name, f] of Object.entries(exports)) {
    if (typeof f !== 'function') { out[name] = f; continue; }
    const trapped = (e) => {
      if (!(e instanceof WebAssembly.RuntimeError)) return e;
      discard();
      return makeError({ code: 'InternalError', offset: null, detail: `${e.message} in ${name}`, cause: e });
    };
    // Fixed arities: a rest parameter would allocate an array on every call, and header reading
    // makes one call per key-value event (hundreds of thousands for a vocabulary).
    switch (f.length) {
      case 0: out[name] = () => { try { return f(); } catch (e) { throw trapped(e); } }; break;
      case 1: out[name] = (a) => { try { return f(a); } catch (e) { throw trapped(e); } }; break;
      case 2: out[name] = (a, b) => { try { return f(a, b); } catch (e) { throw trapped(e); } }; break;
      case 3: out[name] = (a, b, c) => { try { return f(a, b, c); } catch (e) { throw trapped(e); } }; break;
      default: out[name] = (...args) => { try { return f(...args); } catch (e) { throw trapped(e); } }; break;
    }
  }
  return out;
}

// Loads (once) and returns the module. Options only matter on the first call.
export function init(options = {}) {
  if (!pending) {
    const p = instantiate(options, () => { if (pending === p) pending = null; });
    pending = p;
    pending.catch(() => { pending = null; });  // a failed load may be retried
  }
  return pending;
}

const utf8 = new TextDecoder('utf-8');  // invalid bytes become U+FFFD; names stay readable
// The table buffer: 32 bytes of io words, 64 KiB of records (≈ 4,000 tensors of rank 2), 64 KiB of
// names (≈ 1,200 of DeepSeek's): ≈ 80 calls for 92k tensors.
export const TABLE_RECORDS = 64 << 10, TABLE_NAMES = 64 << 10;
const TABLE_BYTES = 32 + TABLE_RECORDS + TABLE_NAMES;

// The instance, its exports and views of its memory. Views are re-created whenever the memory's
// buffer changed (it grows only when something is created, never while bytes stream).
export class Wasm {
  constructor(exports) {
    this.x = exports;
    this.memory = exports.memory;
    this.buffer = null;
    this.memoryChanged();
    this.statusNames = [];
    for (let i = 0, n = exports.ws_status_count(); i < n; i++) this.statusNames.push(this.cstr(exports.ws_status_name(i)));
    // Error messages end with the library's fix (errors.mjs asks through this).
    useStatusHints((name, convention) => {
      const code = this.statusNames.indexOf(name);
      return code < 0 ? null : this.statusHint(code, convention);
    });
    this.dtypeNames = [];
    for (let i = 0, n = exports.ws_dtype_count(); i < n; i++) this.dtypeNames.push(this.cstr(exports.ws_dtype_name(i)));
    // Conventions, quantization modes and UQFF layer types by the numbers the ABI's words carry.
    const names = (count, name) => Array.from({ length: exports[count]() }, (_, i) => this.cstr(exports[name](i)));
    this.conventionNames = names('ws_convention_count', 'ws_convention_name');
    this.modeNames = names('ws_quant_mode_count', 'ws_quant_mode_name');
    this.uqffTypeNames = names('ws_uqff_type_count', 'ws_uqff_type_name');
    // The conventions whose weights are the stored tensors (nothing to group or list).
    this.plainConventions = new Set(this.conventionNames.filter((_, i) => exports.ws_convention_plain(i)));
    // Handles alive now, by kind: what tests check to be back to baseline after an error or abort.
    this.live = { sessions: 0, dequantizers: 0, indexes: 0, models: 0, manifests: 0, loaders: 0, converts: 0, buffers: 0 };
    this.scratchDims = 64;
    this.scratch = this.alloc(8 * this.scratchDims);  // dimension lists, read at header time
    // Tensor tables in bulk (header.mjs, ws_loader_file_tensors): 8 io words, then the records'
    // words, then the names. Allocated once here: headers are read while views may be out.
    this.table = this.alloc(TABLE_BYTES);
    this.outstandingViews = 0;
    this.idleWaiters = [];
  }

  memoryChanged() {
    if (this.buffer === this.memory.buffer) return;
    this.buffer = this.memory.buffer;
    this._u8 = new Uint8Array(this.buffer);
    this._u32 = new Uint32Array(this.buffer);
    this._f64 = new Float64Array(this.buffer);
    this._dv = new DataView(this.buffer);
  }

  // Growing the memory detaches its old buffer, and every view of a detached buffer has length 0:
  // checking that is a field read, where memory.buffer is a call into the engine (it was 15 % of
  // inspect()'s time on a vocabulary GGUF).
  get u8() { if (this._u8.byteLength === 0) this.memoryChanged(); return this._u8; }
  get u32() { if (this._u32.byteLength === 0) this.memoryChanged(); return this._u32; }
  get f64() { if (this._f64.byteLength === 0) this.memoryChanged(); return this._f64; }
  get dv() { if (this._dv.byteLength === 0) this.memoryChanged(); return this._dv; }

  // A NUL-terminated string in the module's data.
  cstr(ptr) {
    const u8 = this.u8;
    let end = ptr;
    while (u8[end] !== 0) end++;
    return utf8.decode(u8.subarray(ptr, end));
  }
  text(ptr, len) { return len ? utf8.decode(this.u8.subarray(ptr, ptr + len)) : ''; }
  bytes(ptr, len) { return this.u8.subarray(ptr, ptr + len); }

  statusName(code) { return this.statusNames[code] ?? 'Unknown'; }
  statusCode(name) { return this.statusNames.indexOf(name); }
  statusDescription(code) { return this.cstr(this.x.ws_status_description(code)); }
  // The library's fix for a status (ws::status_hint), in convention `convention`'s words (an id;
  // null: none of its own).
  statusHint(code, convention = null) { return this.cstr(this.x.ws_status_hint(code, convention ?? 255)); }

  // malloc for scratch buffers; throws when the 2 GiB memory cap is reached.
  alloc(n) {
    const p = this.x.ws_alloc(n);
    if (!p) throw new RangeError(`weightstream: cannot allocate ${n} bytes of wasm memory`);
    this.live.buffers++;
    return p;
  }
  free(p) { if (p) { this.x.ws_free(p); this.live.buffers--; } }

  // Allocation may grow (and so replace) the memory buffer, which would leave views handed to a
  // caller empty. Callers that hold a view between awaits (the public reader's events) register it
  // here; allocations made while streaming several files at once wait until no view is out.
  holdView() { this.outstandingViews++; }
  releaseView() {
    if (this.outstandingViews > 0 && --this.outstandingViews === 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of w) resolve();
    }
  }
  whenIdle() {
    if (this.outstandingViews === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

// u64 from two u32 words: a Number (exact below 2^53, which every file offset is).
export function u64(lo, hi) { return hi * 4294967296 + lo; }
// u64 as a BigInt, for values that may not fit a double (GGUF u64 KVs, error values).
export function u64big(lo, hi) { return (BigInt(hi) << 32n) | BigInt(lo); }
