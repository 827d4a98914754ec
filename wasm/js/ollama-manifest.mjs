// An Ollama model by its manifest (FORMATS §3): `{ ollama: manifestSource, blobs }`.
//
// The manifest JSON (manifests/registry.ollama.ai/library/<model>/<tag>) is read whole and parsed
// by ws::OllamaManifest (wasm/src/abi_manifest.cpp). Its tensor layers name blob files
// `sha256-<hex>`; the distinct blobs, in manifest order, are one logical model (build_ollama over
// all of them). `blobs` says where a blob is:
//   - a function (file) => source (a URL, path, Blob, Response, stream, bytes);
//   - a directory (a path, URL or "https://…/blobs/"), the file name appended;
//   - omitted when the manifest is a path (Node): the nearest ancestor directory of the manifest
//     that has a blobs/ directory, as the CLI finds it (Ollama's models root).
// A blob whose size differs from the manifest's `size` is ManifestBlobSize (named by its layer).
import { toSource, toUrl } from './sources.mjs';
import { makeError } from './errors.mjs';
import { readError } from './session.mjs';
import { u64 } from './module.mjs';
import { fileEvents } from './model.mjs';
import { readHeaders, buildLogical, destroySessions } from './multi-file.mjs';

export function isManifestSource(source) {
  return source !== null && typeof source === 'object' && !(source instanceof URL) && 'ollama' in source;
}

async function readAll(src, signal) {
  await src.open(signal);
  const parts = [];
  let n = 0;
  for await (const c of src.chunks(signal)) { parts.push(c); n += c.length; }
  src.close();
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return all;
}

// The manifest's layers: [{mediaType, file, name, size, isTensor}], or a WeightstreamError.
export function parseManifest(wasm, bytes, name = null) {
  let arena = 4096 + 4 * bytes.length;
  for (let attempt = 0; ; attempt++) {
    const h = wasm.x.ws_manifest_create(arena, Math.max(1, bytes.length));
    if (!h) throw new RangeError('weightstream: cannot allocate the manifest reader');
    wasm.live.manifests++;
    try {
      wasm.u8.set(bytes, wasm.x.ws_manifest_input(h));
      const s = wasm.x.ws_manifest_parse(h, bytes.length);
      const w = wasm.x.ws_manifest_info(h) >> 2;
      const u = wasm.u32;
      if (s !== 0) {
        if (wasm.statusName(s) === 'ArenaExhausted' && attempt === 0 && u[w + 12] > arena) {
          arena = Math.ceil(u[w + 12] / 8) * 8;
          continue;
        }
        const e = readError(wasm, w);
        throw makeError({ code: e.code, offset: e.offset, tensor: e.tensor, shard: name, found: e.found ?? undefined, expected: e.expected ?? undefined }, wasm.statusDescription(s));
      }
      const layers = [];
      for (let i = 0, n = u[w + 13]; i < n; i++) {
        const l = wasm.x.ws_manifest_layer(h, i) >> 2;
        const v = wasm.u32;
        layers.push({
          mediaType: wasm.text(v[l + 14], v[l + 15]), file: wasm.text(v[l + 16], v[l + 17]),
          name: wasm.text(v[l + 18], v[l + 19]), size: u64(v[l + 20], v[l + 21]), isTensor: v[l + 22] !== 0,
        });
      }
      return layers;
    } finally {
      wasm.x.ws_manifest_destroy(h);
      wasm.live.manifests--;
    }
  }
}

// Where blob `file` is, by the `blobs` option (see the top of this file).
async function blobResolver(source) {
  const { ollama: manifest, blobs } = source;
  if (typeof blobs === 'function') return blobs;
  if (typeof blobs === 'string' || blobs instanceof URL) {
    const dir = await toUrl(blobs);
    const base = new URL(dir.href.endsWith('/') ? dir.href : `${dir.href}/`);
    return (file) => new URL(file, base);
  }
  if (blobs === undefined && (typeof manifest === 'string' || manifest instanceof URL)) {
    const url = await toUrl(manifest);
    if (url.protocol === 'file:') {
      const { stat } = await import('node:fs/promises');
      for (let dir = new URL('.', url); ; dir = new URL('..', dir)) {
        const candidate = new URL('blobs/', dir);
        if (await stat(candidate).then((s) => s.isDirectory(), () => false)) return (file) => new URL(file, candidate);
        if (dir.pathname === '/') break;
      }
    }
  }
  throw makeError({ code: 'ManifestNoBlobs', offset: 0, detail: 'pass blobs: a directory or (file) => source' });
}

// The manifest's blobs as files of one model: [{name: "sha256-<hex>", input, layer, size}].
export async function manifestFiles(wasm, source, options) {
  const src = await toSource(source.ollama, options);
  const manifestName = src.name ?? (typeof source.ollama === 'string' ? source.ollama.split(/[\\/]/).pop() : null);
  const layers = parseManifest(wasm, await readAll(src, options.signal), manifestName);
  const resolve = await blobResolver(source);
  const files = [];
  const seen = new Set();
  for (const l of layers) {
    if (!l.isTensor || seen.has(l.file)) continue;
    seen.add(l.file);
    files.push({ name: l.file, input: await resolve(l.file), layer: l.name, size: l.size });
  }
  if (!files.length) throw makeError({ code: 'ManifestMissingLayers', offset: 0, shard: manifestName, detail: 'the manifest has no tensor layers' });
  return files;
}

// The check of a blob's header against its manifest layer: its size.
export function checkBlob(f, header) {
  if (header.size !== null && header.size !== undefined && header.size !== f.size) {
    throw makeError({
      code: 'ManifestBlobSize', offset: Math.min(header.size, f.size), tensor: f.layer, shard: f.name,
      found: BigInt(header.size), expected: BigInt(f.size),
      detail: `the blob has ${header.size} bytes, the manifest says ${f.size}`,
    });
  }
}

// Every blob's header (checked against its layer), the library's model over all blobs.
export async function openManifest(wasm, source, options) {
  const files = await manifestFiles(wasm, source, options);
  // Sizes first, as the CLI checks them, where knowing one costs no request (paths, Blobs,
  // bytes); a URL's blob is checked when its header arrives (the reader may say TruncatedData
  // first, from the Content-Length).
  for (const f of files) {
    const src = await toSource(f.input, options);
    if (src.url || !src.seekable) continue;
    await src.open(options.signal);
    src.close();
    checkBlob(f, { size: src.size });
  }
  try {
    await readHeaders(wasm, files, options, (f, h) => checkBlob(f, h), { buffer: false });
    const { weights, plan } = await buildLogical(wasm, files, options, (m) => m.build('ollama'));
    return { files, weights, plan, version: null };
  } finally {
    destroySessions(files);
  }
}

// Decode events of the whole model: the blobs one after another, each event tagged with its blob
// file; one 'done' at the end.
export async function* manifestEvents(wasm, source, options, progress) {
  const m = await openManifest(wasm, source, options);
  const sizes = m.files.map((f) => f.header.size ?? null);
  if (sizes.every((n) => n !== null)) progress?.setTotal(sizes.reduce((a, b) => a + b, 0));
  for (const f of m.files) {
    const src = await toSource(f.input, options);
    for await (const ev of fileEvents(wasm, src, options, progress, { shard: f.name, logical: f.logical })) {
      if (ev.kind === 'done') continue;
      ev.shard = f.name;
      yield ev;
    }
  }
  yield { kind: 'done', validated: 'full', index: { convention: 'ollama', version: null, metadata: null, shards: m.files.map((f) => f.name) } };
}
