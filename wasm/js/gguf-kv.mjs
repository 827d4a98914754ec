// GGUF key-values, gathered from the reader's Kv* events as they stream past. Nothing of an array
// is kept beyond what is reported: whole arrays up to `arrayLimit` elements, otherwise the first 5
// and the last (the CLI's rule), so a 150k-token vocabulary costs a few strings, not megabytes.
// The reader's event types (reader.h EventType) the key-values come as.
const EventType = Object.freeze({ KvBegin: 1, KvScalar: 2, KvBytes: 3, KvEnd: 4 });
import { u64, u64big } from './module.mjs';
import { readKvEvent } from './words.mjs';

const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 };
const SIZE = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];
export const HEAD = 5;
const MAX_STRING = 1 << 20;  // longer string values are cut (their full length is reported)
const utf8 = new TextDecoder('utf-8');

function readScalar(dv, at, type) {
  switch (type) {
    case T.U8: return dv.getUint8(at);
    case T.I8: return dv.getInt8(at);
    case T.U16: return dv.getUint16(at, true);
    case T.I16: return dv.getInt16(at, true);
    case T.U32: return dv.getUint32(at, true);
    case T.I32: return dv.getInt32(at, true);
    case T.F32: return dv.getFloat32(at, true);
    case T.BOOL: return dv.getUint8(at) !== 0;
    case T.U64: return dv.getBigUint64(at, true);
    case T.I64: return dv.getBigInt64(at, true);
    case T.F64: return dv.getFloat64(at, true);
    default: return null;
  }
}

// A string assembled from pieces; bytes beyond `cap` are counted, not kept.
class Pieces {
  constructor(cap) { this.cap = cap; this.parts = []; this.kept = 0; this.total = 0; }
  add(bytes) {
    this.total += bytes.length;
    if (this.kept < this.cap) {
      const take = Math.min(bytes.length, this.cap - this.kept);
      this.parts.push(bytes.slice(0, take));
      this.kept += take;
    }
  }
  text() {
    if (this.parts.length === 1) return utf8.decode(this.parts[0]);
    const all = new Uint8Array(this.kept);
    let at = 0;
    for (const p of this.parts) { all.set(p, at); at += p.length; }
    return utf8.decode(all);
  }
}

export class GgufKvCollector {
  constructor(wasm, { arrayLimit = 16 } = {}) {
    this.wasm = wasm;
    this.arrayLimit = arrayLimit;
    this.typeNames = [];
    for (let i = 0; i < 13; i++) this.typeNames.push(wasm.cstr(wasm.x.ws_gguf_type_name(i)));
    this.reset();
  }

  reset() {
    this.kvs = [];
    this.cur = null;
    this.piece = null;
  }

  // The Kv* event in the EventOut words at word index `w` (words.mjs readKvEvent's layout), read
  // now: its data is only valid until the loader's next(). One call per string of a vocabulary's
  // arrays, so the words are read where needed, without building an event object; an element past
  // what is kept costs its size and index.
  onEvent(w) {
    const wasm = this.wasm;
    const u = wasm.u32;
    const type = u[w];
    if (type === EventType.KvBytes) {
      const kv = this.cur;
      if (!kv) return;
      const size = u[w + 3];
      if (kv.elemType === T.STRING && kv.valueType === T.ARRAY) {
        // The loader counts the array's bytes (word 21, Event::string_bytes): a summarized array's
        // elements between the head and the last do not come here (Limits::gguf_array_*).
        kv.stringBytes = u[w + 21];
        const index = u64(u[w + 13], u[w + 14]);
        if (!(kv.keep || index < HEAD || index === kv.count - 1)) return;
        if (u[w + 15]) this.piece = new Pieces(kv.keep ? MAX_STRING : 65536);
        this.piece.add(wasm.bytes(u[w + 2], size));
        if (u[w + 16]) {
          const s = this.piece.text();
          if (kv.keep || index < HEAD) kv.items.push(s);
          if (index === kv.count - 1) kv.last = s;
          this.piece = null;
        }
      } else if (kv.valueType === T.STRING) {
        if (u[w + 15]) this.piece = new Pieces(MAX_STRING);
        this.piece.add(wasm.bytes(u[w + 2], size));
        if (u[w + 16]) {
          kv.value = this.piece.text();
          if (this.piece.total > this.piece.kept) kv.valueBytes = this.piece.total;
          this.piece = null;
        }
      } else {
        const esize = SIZE[kv.elemType];
        const n = Math.floor(size / esize);
        const index = u64(u[w + 13], u[w + 14]);
        const limit = kv.keep ? kv.count : HEAD;
        const lastHere = n > 0 && index + n === kv.count;
        if (index >= limit && !lastHere) return;
        const dv = new DataView(u.buffer, u[w + 2], size);
        for (let k = 0; k < n && index + k < limit; k++) kv.items.push(readScalar(dv, k * esize, kv.elemType));
        if (lastHere) kv.last = readScalar(dv, (n - 1) * esize, kv.elemType);
      }
      return;
    }
    if (type === EventType.KvBegin) {
      const e = readKvEvent(wasm, w);
      const kv = { key: wasm.text(e.keyPtr, e.keyLen), offset: e.offset, type: this.typeNames[e.valueType] ?? '?', valueType: e.valueType };
      if (e.valueType === T.ARRAY) {
        kv.elementType = this.typeNames[e.elemType] ?? '?';
        kv.elemType = e.elemType;
        kv.count = e.count;
        kv.keep = e.count <= this.arrayLimit;
        kv.items = [];
        kv.last = undefined;
        if (e.elemType === T.STRING) kv.stringBytes = 0;
      }
      this.kvs.push(kv);
      this.cur = kv;
      return;
    }
    const kv = this.cur;
    if (!kv) return;
    if (type === EventType.KvScalar) kv.value = this.scalar(readKvEvent(wasm, w), kv.valueType);
    else if (type === EventType.KvEnd) {
      if (kv.stringBytes !== undefined) kv.stringBytes = u[w + 21];
      this.cur = null;
    }
  }

  scalar(e, type) {
    switch (type) {
      case T.F32: case T.F64: return e.f;
      case T.BOOL: return e.uLo !== 0;
      case T.U64: return u64big(e.uLo, e.uHi);
      case T.I64: return BigInt.asIntN(64, u64big(e.iLo, e.iHi));
      case T.I8: case T.I16: case T.I32: return e.iLo | 0;
      default: return e.uLo;
    }
  }

  // The kv list (CLI's gguf.kv shape) and the key → value map.
  result() {
    const list = [];
    const metadata = Object.create(null);
    for (const kv of this.kvs) {
      const out = { key: kv.key, offset: kv.offset, type: kv.type };
      if (kv.valueType === T.ARRAY) {
        out.elementType = kv.elementType;
        out.count = kv.count;
        if (kv.stringBytes !== undefined) out.stringBytes = kv.stringBytes;
        if (kv.keep) {
          out.values = kv.items;
          metadata[kv.key] = kv.items;
        } else {
          out.head = kv.items;
          out.last = kv.last;
          metadata[kv.key] = { type: 'ARRAY', elementType: kv.elementType, count: kv.count, head: kv.items, last: kv.last, ...(kv.stringBytes !== undefined ? { stringBytes: kv.stringBytes } : {}) };
        }
      } else {
        out.value = kv.value;
        if (kv.valueBytes !== undefined) out.valueBytes = kv.valueBytes;
        metadata[kv.key] = kv.value;
      }
      list.push(out);
    }
    return { kv: list, metadata };
  }

  // Where a key appears, and where else (for GgufDuplicateKey messages).
  keyAt(offset) {
    const kv = this.kvs.find((k) => k.offset === offset);
    if (!kv) return null;
    const other = this.kvs.find((k) => k.key === kv.key && k.offset !== offset);
    return { key: kv.key, other: other ? other.offset : null };
  }
}
