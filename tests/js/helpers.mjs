// Shared by the JS tests: where things are, and small byte-stream builders.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The shared reference files sit beside the repository (as tests/CMakeLists.txt expects them).
export const shared = resolve(repo, '..', 'shared');
export const testdata = join(shared, 'testdata');
export const corpus = join(repo, 'tests', 'corpus');

const dist = join(repo, 'wasm', 'dist', 'weightstream.mjs');
if (!existsSync(dist)) throw new Error(`${dist} is missing: run npm ci && npm run build in wasm/ first`);
export const ws = await import(dist);

export function readJson(path) { return JSON.parse(readFileSync(path, 'utf8')); }

// createReader's output for `source`: a Map from tensor name to { t: the tensor, bytes: its bytes },
// in the order the tensors ended.
export async function decodeAll(source, options) {
  const out = new Map();
  let cur = null;
  for await (const ev of ws.createReader(options).read(source)) {
    if (ev.type === 'tensorBegin') cur = { t: ev.tensor, bytes: new Uint8Array(ev.tensor.byteLength) };
    else if (ev.type === 'tensorData') cur.bytes.set(ev.data, ev.offset);
    else if (ev.type === 'tensorEnd') out.set(ev.tensor.name, cur);
  }
  return out;
}

// A ReadableStream over `bytes` in pieces of `piece` bytes (the last one shorter).
export function streamOf(bytes, piece = 65536) {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) { controller.close(); return; }
      const n = Math.min(piece, bytes.length - at);
      controller.enqueue(bytes.slice(at, at + n));
      at += n;
    },
  });
}

export function le64(v) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
}

export function concat(...parts) {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

// A safetensors file from {name: {dtype, shape, data: Uint8Array}} (in the given order), with
// optional __metadata__; the header is padded with spaces to a multiple of 8, as the reference
// writer does.
export function safetensors(tensors, metadata = null) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let off = 0;
  const datas = [];
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + t.data.length] };
    off += t.data.length;
    datas.push(t.data);
  }
  let json = JSON.stringify(header);
  while ((json.length + 8) % 8) json += ' ';
  const h = new TextEncoder().encode(json);
  return concat(le64(h.length), h, ...datas);
}

// A GGUF v3 file: no key-values, the given tensors ({name, type (GGML id), ne, data}), alignment 32.
export function gguf(tensors) {
  const enc = new TextEncoder();
  const parts = [new TextEncoder().encode('GGUF'), u32(3), le64(tensors.length), le64(0)];
  let off = 0;
  const datas = [];
  for (const t of tensors) {
    const name = enc.encode(t.name);
    parts.push(le64(name.length), name, u32(t.ne.length), ...t.ne.map(le64), u32(t.type), le64(off));
    const padded = Math.ceil(t.data.length / 32) * 32;
    const d = new Uint8Array(padded);
    d.set(t.data);
    datas.push(d);
    off += padded;
  }
  let head = concat(...parts);
  head = concat(head, new Uint8Array((32 - (head.length % 32)) % 32));
  return concat(head, ...datas);
}

export function u32(v) {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v, true);
  return b;
}

// f32 -> f16 bits, round to nearest even; overflow to inf; NaN stays NaN (quiet, same sign).
export function f32ToF16(f) {
  const b = new Uint32Array(new Float32Array([f]).buffer)[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xFF;
  let man = b & 0x7FFFFF;
  if (exp === 0xFF) return sign | 0x7C00 | (man ? 0x200 | (man >>> 13) : 0);
  let e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7C00;
  if (e <= 0) {
    if (e < -10) return sign;
    man |= 0x800000;
    const shift = 14 - e;
    let h = man >>> shift;
    const rest = man & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rest > half || (rest === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (man >>> 13);
  const rest = man & 0x1FFF;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;
  return sign | h;
}
