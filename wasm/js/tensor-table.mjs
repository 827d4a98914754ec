// The tensor table as inspect() returns it: a view over the library's own table, copied out of
// wasm memory in bulk, where a tensor's object is made only when it is asked for.
//
// Why a copy: the table lives in the loader's arena, and the loader is destroyed when inspect()
// returns (wasm memory stays a few MiB whatever the model: keeping every inspected table in it
// would grow that memory for good, as wasm memory never shrinks). So the records and names that
// ws_loader_file_tensors hands out in batches (abi.h put_tensors: 12 words per tensor + 2 per
// dimension, then the names' bytes) are appended as they are to one Uint32Array and one
// Uint8Array that belong to the view, and nothing else is made: no string, no object, no array.
// The view stays valid for as long as the caller keeps it, whatever the module does afterwards.
// Per tensor it holds its record (64 B for rank 2), its name's bytes, and 4 B of record index.
//
//   tensors.length, tensors.at(i), tensors.get(name), tensors.indexOf(name), tensors.has(name)
//   for (const t of tensors), tensors.filter/map/find/findIndex/some/every/forEach/reduce/slice
//   tensors.column('name' | 'dtype' | 'byteLength' | 'offset' | 'elements' | 'rank' | 'shard' ...)
//   tensors.toJSON(), Array.from(tensors)     every object, as inspect() listed them before 0.4
//
// Each object is made anew at each request ({name, dtype, shape, dataOffsets, byteLength, offset}
// and the fields of its file: `shard`, `split` or `file`), so two requests give equal objects that
// are not the same object, and changing one changes nothing in the table.
import { u64, TABLE_RECORDS } from './module.mjs';

const decoder = new TextDecoder('utf-8');  // as module.mjs's: invalid bytes become U+FFFD
const encoder = new TextEncoder();
const RECORD_WORDS = 12;  // wasm/src/abi.h kTableRecordWords: name, type, rank, begin, end, entry, elements
const NO_SLOT = 0xFFFFFFFF;
// Lookups answered by a scan before the name hash is built: one get() should not pay for hashing
// every name, a loop of get()s should not scan 92k records each.
const SCANS_BEFORE_HASH = 8;
// Names decoded one by one before the whole name buffer is decoded once and sliced.
const DECODES_BEFORE_TEXT = 256;

// The array methods a view has: each makes the objects it visits (and no others: find() stops).
export class LazyList {
  at(i) {
    i = Math.trunc(i) || 0;
    if (i < 0) i += this.length;
    return i >= 0 && i < this.length ? this.make(i) : undefined;
  }
  *[Symbol.iterator]() { for (let i = 0, n = this.length; i < n; i++) yield this.make(i); }
  *keys() { for (let i = 0, n = this.length; i < n; i++) yield i; }
  *entries() { for (let i = 0, n = this.length; i < n; i++) yield [i, this.make(i)]; }
  *values() { yield* this; }
  forEach(f, self) { for (let i = 0, n = this.length; i < n; i++) f.call(self, this.make(i), i, this); }
  map(f, self) { const out = new Array(this.length); for (let i = 0; i < out.length; i++) out[i] = f.call(self, this.make(i), i, this); return out; }
  filter(f, self) { const out = []; for (let i = 0, n = this.length; i < n; i++) { const t = this.make(i); if (f.call(self, t, i, this)) out.push(t); } return out; }
  findIndex(f, self) { for (let i = 0, n = this.length; i < n; i++) if (f.call(self, this.make(i), i, this)) return i; return -1; }
  find(f, self) { const i = this.findIndex(f, self); return i < 0 ? undefined : this.make(i); }
  some(f, self) { return this.findIndex(f, self) >= 0; }
  every(f, self) { return this.findIndex((t, i, a) => !f.call(self, t, i, a)) < 0; }
  reduce(f, ...init) {
    let i = 0, acc;
    if (init.length) acc = init[0];
    else if (this.length === 0) throw new TypeError('Reduce of empty list with no initial value');
    else acc = this.make(i++);
    for (const n = this.length; i < n; i++) acc = f(acc, this.make(i), i, this);
    return acc;
  }
  // Plain arrays of plain objects: a slice, or all of them (JSON.stringify calls toJSON).
  slice(start = 0, end = this.length) {
    const n = this.length;
    const clamp = (v) => { v = Math.trunc(v) || 0; return v < 0 ? Math.max(0, n + v) : Math.min(v, n); };
    const a = clamp(start), b = clamp(end);
    const out = [];
    for (let i = a; i < b; i++) out.push(this.make(i));
    return out;
  }
  toArray() { return this.slice(); }
  toJSON() { return this.slice(); }
}

// One file's table: its records and names as ws_loader_file_tensors wrote them, with each
// record's name offset made relative to this table's name bytes.
class FileTable {
  constructor(words, names, recordAt, dtypes, dataStart) {
    this.words = words;        // Uint32Array: the records, back to back
    this.names = names;        // Uint8Array: every name's UTF-8 bytes
    this.recordAt = recordAt;  // Uint32Array: tensor i's record starts at words[recordAt[i]]
    this.count = recordAt.length;
    this.dtypes = dtypes;      // dtype names by type id (GGML names for GGUF)
    this.dataStart = dataStart;
    this.text = null;          // every name decoded at once, once names are read in numbers
    this.sliced = false;       // the text has a character per byte: names are its substrings
    this.decodes = 0;
    this.hash = null;          // name hash: slot -> tensor index + 1, built after a few scans
    this.scans = 0;
  }

  name(i) {
    const w = this.recordAt[i], off = this.words[w], len = this.words[w + 1];
    if (this.text === null && ++this.decodes > DECODES_BEFORE_TEXT) {
      this.text = decoder.decode(this.names);
      // As many characters as bytes: every byte decoded by itself (ASCII, or a byte that is no
      // part of a sequence: U+FFFD), so a name's byte offsets are its offsets in the text and its
      // slice is what decoding it alone gives. Otherwise (a multi-byte character) each name alone.
      this.sliced = this.text.length === this.names.length;
    }
    if (this.sliced) return this.text.substring(off, off + len);
    return len ? decoder.decode(this.names.subarray(off, off + len)) : '';
  }

  make(i, extra) {
    const u = this.words, w = this.recordAt[i], rank = u[w + 3];
    const shape = new Array(rank);
    for (let d = 0; d < rank; d++) shape[d] = u64(u[w + RECORD_WORDS + 2 * d], u[w + RECORD_WORDS + 1 + 2 * d]);
    const begin = u64(u[w + 4], u[w + 5]), end = u64(u[w + 6], u[w + 7]);
    const t = { name: this.name(i), dtype: this.dtypes[u[w + 2]], shape, dataOffsets: [begin, end], byteLength: end - begin, offset: this.dataStart + begin };
    if (extra) for (const k in extra) t[k] = extra[k];
    return t;
  }

  typeId(i) { return this.words[this.recordAt[i] + 2]; }
  elements(i) { const w = this.recordAt[i]; return u64(this.words[w + 10], this.words[w + 11]); }

  // The index of the tensor named by these bytes, or -1: the library's rule (TensorTable::find,
  // LogicalModel::find: the same bytes), first by scanning, then through a hash of the names.
  find(bytes) {
    if (this.hash === null && ++this.scans > SCANS_BEFORE_HASH) this.buildHash();
    if (this.hash === null) {
      for (let i = 0; i < this.count; i++) if (this.equals(i, bytes)) return i;
      return -1;
    }
    const h = this.hash, mask = h.length - 1;
    for (let s = hashBytes(bytes, 0, bytes.length) & mask; ; s = (s + 1) & mask) {
      const v = h[s];
      if (v === 0) return -1;
      if (this.equals(v - 1, bytes)) return v - 1;
    }
  }

  equals(i, bytes) {
    const u = this.words, w = this.recordAt[i], len = u[w + 1];
    if (len !== bytes.length) return false;
    const names = this.names, off = u[w];
    for (let k = 0; k < len; k++) if (names[off + k] !== bytes[k]) return false;
    return true;
  }

  buildHash() {
    let size = 16;
    while (size < this.count * 2) size *= 2;
    const h = new Uint32Array(size), mask = size - 1, u = this.words;
    for (let i = 0; i < this.count; i++) {
      const w = this.recordAt[i];
      let s = hashBytes(this.names, u[w], u[w] + u[w + 1]) & mask;
      while (h[s] !== 0) s = (s + 1) & mask;
      h[s] = i + 1;  // a duplicate name (the library rejects them) stays behind the first
    }
    this.hash = h;
  }

  // The bytes that make this table, for a structured clone (a worker's postMessage).
  parts() { return { words: this.words, names: this.names, recordAt: this.recordAt, dtypes: this.dtypes, dataStart: this.dataStart }; }
  static fromParts(p) { return new FileTable(p.words, p.names, p.recordAt, p.dtypes, p.dataStart); }
}

const NUMERIC_COLUMNS = new Set(['byteLength', 'offset', 'elements', 'rank']);

// FNV-1a over bytes [a, b).
function hashBytes(bytes, a, b) {
  let h = 0x811c9dc5;
  for (let k = a; k < b; k++) h = Math.imul(h ^ bytes[k], 0x01000193);
  return h >>> 0;
}

// The tensors of one file or of several (a sharded model, a split GGUF, a UQFF directory, in the
// model's order), each file's objects with that file's extra fields.
export class TensorList extends LazyList {
  constructor(parts = []) {
    super();
    this.parts = parts;  // [{ table: FileTable, extra: object | null, first: index of its first tensor }]
    let n = 0;
    for (const p of parts) { p.first = n; n += p.table.count; }
    this.count = n;
  }
  get length() { return this.count; }
  get [Symbol.toStringTag]() { return 'TensorList'; }

  // The part holding tensor i (i < length) and i's index in it.
  locate(i) {
    const p = this.parts;
    if (p.length === 1) return p[0];
    let lo = 0, hi = p.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (p[mid].first <= i) lo = mid; else hi = mid - 1;
    }
    return p[lo];
  }
  make(i) { const p = this.locate(i); return p.table.make(i - p.first, p.extra); }

  // The index of the tensor named `name` (in the first file that has it), or -1.
  indexOf(name) {
    if (typeof name !== 'string') return -1;
    const bytes = encoder.encode(name);
    for (const p of this.parts) {
      const i = p.table.find(bytes);
      if (i >= 0) return p.first + i;
    }
    return -1;
  }
  get(name) { const i = this.indexOf(name); return i < 0 ? undefined : this.make(i); }
  has(name) { return this.indexOf(name) >= 0; }
  includes(t) { return typeof t === 'object' && t !== null && this.has(t.name); }

  // One field of every tensor without making their objects (a table view sorts and filters by
  // them): 'name', 'dtype' and a file field ('shard', 'split', 'file') as an array, 'byteLength',
  // 'offset', 'elements', 'rank' as a Float64Array.
  column(field) {
    const n = this.count;
    const numeric = NUMERIC_COLUMNS.has(field);
    if (!numeric && field !== 'name' && field !== 'dtype' && !this.parts.some((p) => p.extra && field in p.extra)) {
      throw new TypeError(`weightstream: no column ${JSON.stringify(field)} (name, dtype, byteLength, offset, elements, rank, or a file field)`);
    }
    const out = numeric ? new Float64Array(n) : new Array(n);
    for (const p of this.parts) {
      const t = p.table, u = t.words, at = t.recordAt, base = p.first;
      for (let i = 0; i < t.count; i++) {
        const w = at[i];
        switch (field) {
          case 'name': out[base + i] = t.name(i); break;
          case 'dtype': out[base + i] = t.dtypes[u[w + 2]]; break;
          case 'byteLength': out[base + i] = u64(u[w + 6], u[w + 7]) - u64(u[w + 4], u[w + 5]); break;
          case 'offset': out[base + i] = t.dataStart + u64(u[w + 4], u[w + 5]); break;
          case 'elements': out[base + i] = u64(u[w + 10], u[w + 11]); break;
          case 'rank': out[base + i] = u[w + 3]; break;
          default: out[base + i] = p.extra?.[field]; break;
        }
      }
    }
    return out;
  }

  // What the package reads of a tensor without making its object.
  typeId(i) { const p = this.locate(i); return p.table.typeId(i - p.first); }
  elements(i) { const p = this.locate(i); return p.table.elements(i - p.first); }

  // One list over several, each with extra fields on its objects ({shard}, {split}, {file}).
  static concat(lists) {
    const parts = [];
    for (const { list, extra } of lists) {
      for (const p of list.parts) parts.push({ table: p.table, extra: p.extra || extra ? { ...p.extra, ...extra } : null });
    }
    return new TensorList(parts);
  }

  // Structured-clonable data (typed arrays and plain values) and back: a list crosses to another
  // thread as its bytes, not as objects.
  toParts() { return this.parts.map((p) => ({ table: p.table.parts(), extra: p.extra })); }
  static fromParts(parts) { return new TensorList(parts.map((p) => ({ table: FileTable.fromParts(p.table), extra: p.extra }))); }

  // Bytes this view holds (records, names, indexes; the name hash and decoded text once made:
  // a sliced text is ASCII, a one-byte string in V8).
  get heldBytes() {
    let n = 0;
    for (const p of new Set(this.parts.map((x) => x.table))) {
      n += p.words.byteLength + p.names.byteLength + p.recordAt.byteLength + (p.hash?.byteLength ?? 0) + (p.text?.length ?? 0) * (p.sliced ? 1 : 2);
    }
    return n;
  }
}

// Reads a file's table out of wasm memory into a TensorList of one part. `batch(first)` fills the module's table buffer
// (ws_loader_file_tensors, abi.h put_tensors) from tensor `first` on and says how many it holds;
// `item(i)` / `dims(i, ptr, max)` read one tensor by itself: one larger than the buffer (a crafted
// rank or name). One copy of the records' words and one of the names' bytes per batch of ≈ 1,000
// tensors: a DeepSeek-V3 header (92k tensors) takes ≈ 90 calls and no object per tensor.
export function copyTable(wasm, count, batch, item, dims, dtypeOf, dataStart) {
  const b = new TableBuilder(count);
  const table = wasm.table, io = table >> 2;
  const recPtr = (table + 32) >> 2, namesPtr = table + 32 + TABLE_RECORDS;
  for (let i = 0; i < count;) {
    const n = batch(i);
    if (n === 0) {
      appendOne(wasm, b, i, item, dims);
      i++;
      continue;
    }
    const u = wasm.u32;
    const W = u[io + 6], B = u[io + 7];
    b.reserve(W, B, i, n);
    b.words.set(u.subarray(recPtr, recPtr + W), b.nw);
    b.names.set(wasm.u8.subarray(namesPtr, namesPtr + B), b.nb);
    const words = b.words, nb = b.nb;
    let w = b.nw;
    for (const end = i + n; i < end; i++) {
      b.recordAt[i] = w;
      words[w] += nb;  // the name's offset: from its batch's names to this table's
      w += RECORD_WORDS + 2 * words[w + 3];
    }
    b.nw += W;
    b.nb += B;
  }
  // The dtype name of each type the table has, asked of the library now (once each), while the
  // module that answers is the one that read the table.
  const dtypes = [];
  const { words, recordAt } = b;
  for (let i = 0; i < count; i++) {
    const type = words[recordAt[i] + 2];
    if (dtypes[type] === undefined) dtypes[type] = dtypeOf(type);
  }
  const file = new FileTable(b.trimmedWords(), b.trimmedNames(), recordAt, dtypes, dataStart);
  return new TensorList([{ table: file, extra: null }]);
}

// The growing copy: records, names, and where each tensor's record starts.
class TableBuilder {
  constructor(count) {
    this.count = count;
    this.recordAt = new Uint32Array(count);
    this.words = new Uint32Array(0);
    this.names = new Uint8Array(0);
    this.nw = 0;
    this.nb = 0;
  }
  // Room for w more words and b more bytes (the batch of n tensors from tensor `done` on), sized
  // for every tensor left from what the tensors so far and this batch take (2 % more): one
  // allocation for the whole table, not a doubling series.
  reserve(w, b, done, n) {
    const seen = done + n, left = this.count - seen;
    if (this.nw + w > this.words.length) {
      const grown = new Uint32Array(Math.ceil(this.nw + w + ((this.nw + w) / seen) * left * 1.02));
      grown.set(this.words.subarray(0, this.nw));
      this.words = grown;
    }
    if (this.nb + b > this.names.length) {
      const grown = new Uint8Array(Math.ceil(this.nb + b + ((this.nb + b) / seen) * left * 1.02));
      grown.set(this.names.subarray(0, this.nb));
      this.names = grown;
    }
  }
  // The table is kept as long as the caller keeps it: what an estimate over-reserved by more than
  // 1/16 goes back (a copy); less stays, as a view (a copy of 12 MB costs more than it saves).
  trimmedWords() { return trim(this.words, this.nw); }
  trimmedNames() { return trim(this.names, this.nb); }
}

function trim(a, n) {
  if (n === a.length) return a;
  return a.length - n > a.length / 16 ? a.slice(0, n) : a.subarray(0, n);
}

// Tensor i by itself (ws_loader_file_tensor's record words, ws_loader_file_dims), appended in the
// batch layout: its dimensions through the module's scratch, or scratch of its rank.
function appendOne(wasm, b, i, item, dims) {
  const w = item(i);
  let u = wasm.u32;
  const record = u.slice(w, w + RECORD_WORDS);
  const rank = record[3], nameLen = record[1];
  const name = wasm.u8.slice(record[0], record[0] + nameLen);
  const big = rank > wasm.scratchDims ? wasm.alloc(8 * rank) : 0;
  try {
    const ptr = big || wasm.scratch;
    dims(i, ptr, rank);
    u = wasm.u32;  // an allocation may have replaced the memory's buffer
    b.reserve(RECORD_WORDS + 2 * rank, nameLen, i, 1);
    record[0] = b.nb;
    b.recordAt[i] = b.nw;
    b.words.set(record, b.nw);
    b.words.set(u.subarray(ptr >> 2, (ptr >> 2) + 2 * rank), b.nw + RECORD_WORDS);
    b.names.set(name, b.nb);
    b.nw += RECORD_WORDS + 2 * rank;
    b.nb += nameLen;
  } finally {
    wasm.free(big);
  }
}

// A model's logical weights (MLX, Ollama, UQFF), copied out while the loader lives: each weight's
// words (abi.h kWeightWords, then its packed piece's file) and its name, made into inspect()'s
// object (`toPublic(readWeight's object)`) only when asked for.
const WEIGHT_WORDS = 50;
export class WeightList extends LazyList {
  constructor(words, names, count, toPublic, lib = null) {
    super();
    this.words = words;
    this.names = names;
    this.count = count;
    this.toPublic = toPublic;
    // What words.mjs readWeight reads through `wasm`: the copied words, names by offset, and the
    // library's names of conventions, modes and UQFF types (module.mjs; plain arrays, kept).
    this.view = {
      u32: words, text: (off, len) => (len ? decoder.decode(names.subarray(off, off + len)) : ''),
      conventionNames: lib?.conventionNames, modeNames: lib?.modeNames, uqffTypeNames: lib?.uqffTypeNames,
    };
  }
  get length() { return this.count; }
  get [Symbol.toStringTag]() { return 'WeightList'; }
  make(i) {
    const o = this.toPublic(this.view, i * WEIGHT_WORDS, i);
    // The library's quantization parameters (ws::quant_parameters), copied with the words.
    if (o && typeof o === 'object') o.parameters = this.parameters?.[i] ?? null;
    return o;
  }
  // The index of the weight named `name`, or -1 (a scan: weights are looked up by name rarely).
  indexOf(name) {
    if (typeof name !== 'string') return -1;
    const bytes = encoder.encode(name), u = this.words, names = this.names;
    outer: for (let i = 0, w = 0; i < this.count; i++, w += WEIGHT_WORDS) {
      if (u[w + 1] !== bytes.length) continue;
      for (let k = 0, off = u[w]; k < bytes.length; k++) if (names[off + k] !== bytes[k]) continue outer;
      return i;
    }
    return -1;
  }
  get(name) { const i = this.indexOf(name); return i < 0 ? undefined : this.make(i); }
  has(name) { return this.indexOf(name) >= 0; }
}

export const emptyWeights = () => new WeightList(new Uint32Array(0), new Uint8Array(0), 0, null);

// Weights [0, count) of loader L (ws_loader_weight, plans for reads of `chunk` bytes) as a
// WeightList; `toPublic(view, w, i)` makes weight i's object from its words at word index w.
// `indexes`: the loader's weights indexes[0, count) instead (plan()'s selection).
export function copyWeights(wasm, L, count, chunk, toPublic, indexes = null) {
  const words = new Uint32Array(count * WEIGHT_WORDS);
  let names = new Uint8Array(count * 48), nb = 0, quantized = false;
  const parameters = [];
  // The library's plain flag by convention id, looked up once (a 94k-weight plan() asks per weight).
  const plainId = wasm.conventionNames.map((c) => wasm.plainConventions.has(c));
  for (let i = 0; i < count; i++) {
    const w = wasm.x.ws_loader_weight(L.h, indexes ? indexes[i] : i, chunk) >> 2;
    const u = wasm.u32, len = u[w + 1], at = u[w];
    // A convention's weight has parameters (plain tensors none): read before the item words change.
    const plain = plainId[u[w + 2]];
    // Copied word by word and byte by byte: a subarray per weight cost more than the copy.
    for (let j = 0, o = i * WEIGHT_WORDS; j < WEIGHT_WORDS; j++) words[o + j] = u[w + j];
    if (nb + len > names.length) {
      const grown = new Uint8Array(Math.max(nb + len, names.length * 2));
      grown.set(names.subarray(0, nb));
      names = grown;
    }
    const u8 = wasm.u8;
    for (let j = 0; j < len; j++) names[nb + j] = u8[at + j];
    words[i * WEIGHT_WORDS] = nb;
    nb += len;
    quantized ||= !plain;  // the library's plain flag
    if (!plain) parameters[i] = L.parameters(indexes ? indexes[i] : i);
  }
  const list = new WeightList(words, nb < names.length ? names.slice(0, nb) : names, count, toPublic, wasm);
  list.quantized = quantized;
  list.parameters = parameters;
  return list;
}

// A loaded model's description (loadToWebGPU's header and shards) across postMessage: its tensor
// lists as their bytes (a structured clone keeps no class), and back.
const PARTS = 'weightstreamTensorList';
export function portableTables(value) {
  if (value instanceof TensorList) return { [PARTS]: value.toParts() };
  if (Array.isArray(value)) return value.map(portableTables);
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = portableTables(v);
  return out;
}
export function reviveTables(value) {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  if (value[PARTS]) return TensorList.fromParts(value[PARTS]);
  if (Array.isArray(value)) return value.map(reviveTables);
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = reviveTables(v);
  return out;
}
