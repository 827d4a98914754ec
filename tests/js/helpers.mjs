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
