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
// Each blob is checked against its layer by the library's rules (ws::check_manifest_blob_size /
// check_manifest_blob_tensors through wasm/src/abi_manifest.cpp), the CLI's: ManifestBlobSize,
// ManifestTensorInOtherLayer, ManifestLayerNotInBlob, with the CLI's offset, tensor and shard. A
// blob that is not there (HTTP 404, ENOENT) is ManifestBlobMissing, as in the CLI.
import { toSource, readAll } from './sources.mjs';
import { makeError } from './errors.mjs';
import { readError } from './session.mjs';
import { blobResolver } from './model-files.mjs';
import { isMissing } from './host.mjs';
import { u64 } from './module.mjs';
import { fileEvents } from './model.mjs';
import { readHeaders, buildLogical, destroySessions } from './multi-file.mjs';

export function isManifestSource(source) {
  return source !== null && typeof source === 'object' && !(source instanceof URL) && 'ollama' in source;
}

// The manifest parsed by the library, kept while its blobs are checked (the check's error names
// point into its arena): {h, layers: [{mediaType, file, name, size, isTensor}], destroy()}; or a
// WeightstreamError.
export function openManifestReader(wasm, bytes, name = null) {
  let arena = 4096 + 4 * bytes.length;
  for (let attempt = 0; ; attempt++) {
    const h = wasm.x.ws_manifest_create(arena, Math.max(1, bytes.length));
    if (!h) throw new RangeError('weightstream: cannot allocate the manifest reader');
    wasm.live.manifests++;
    let kept = false;
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
      kept = true;
      let live = true;
      const destroy = () => {
        if (!live) return;
        live = false;
        wasm.x.ws_manifest_destroy(h);
        wasm.live.manifests--;
      };
      return { h, layers, destroy };
    } finally {
      if (!kept) {
        wasm.x.ws_manifest_destroy(h);
        wasm.live.manifests--;
      }
    }
  }
}

// The manifest's blobs as files of one model, in manifest order: [{name: "sha256-<hex>", input,
// layer (the first tensor layer's name), layers (the indices of the tensor layers that name this
// blob), size}], and the manifest reader (destroy() it).
export async function manifestFiles(wasm, source, options) {
  const src = await toSource(source.ollama, options);
  const manifestName = src.name ?? (typeof source.ollama === 'string' ? source.ollama.split(/[\\/]/).pop() : null);
  const reader = openManifestReader(wasm, await readAll(src, options.signal), manifestName);
  try {
    const resolve = await blobResolver(source);
    const files = [];
    const byFile = new Map();
    reader.layers.forEach((l, i) => {
      if (!l.isTensor) return;
      const known = byFile.get(l.file);
      if (known) { known.layers.push(i); return; }
      const f = { name: l.file, input: null, layer: l.name, layers: [i], size: l.size };
      byFile.set(l.file, f);
      files.push(f);
    });
    if (!files.length) throw makeError({ code: 'ManifestMissingLayers', offset: 0, shard: manifestName, detail: 'the manifest has no tensor layers' });
    for (const f of files) f.input = await resolve(f.name);
    return { files, reader };
  } catch (e) {
    reader.destroy();
    throw e;
  }
}

// The library's check's error (ws_manifest_check_*), as the CLI words it: in blob f.
function checkError(wasm, reader, s, f) {
  const e = readError(wasm, wasm.x.ws_manifest_check_error(reader.h) >> 2);
  const fields = { code: e.code, offset: e.offset, tensor: e.tensor, shard: f.name };
  if (e.code === 'ManifestBlobSize') {
    Object.assign(fields, { found: e.found, expected: e.expected, detail: `the blob has ${e.found} bytes, the manifest says ${e.expected}` });
  } else if (e.code === 'ManifestTensorInOtherLayer') {
    const other = reader.layers[Number(e.found)];
    fields.detail = `layer ${JSON.stringify(other.name)} (${other.file}) covers it, not layer ${JSON.stringify(f.layer)}`;
  } else if (e.code === 'ManifestLayerNotInBlob') {
    fields.detail = `no tensor of the blob is named ${JSON.stringify(e.tensor)} or starts with ${JSON.stringify(e.tensor + '.')}`;
  }
  return makeError(fields, wasm.statusDescription(s));
}

// Blob f is `size` bytes: every layer that names it says so, or ManifestBlobSize.
function checkSize(wasm, reader, f, size) {
  for (const i of f.layers) {
    const s = wasm.x.ws_manifest_check_size(reader.h, i, size % 4294967296, Math.floor(size / 4294967296));
    if (s !== 0) throw checkError(wasm, reader, s, f);
  }
}

// Blob f's header (in `session`) against every layer that names it.
function checkTensors(wasm, reader, f, session) {
  for (const i of f.layers) {
    const s = wasm.x.ws_manifest_check_tensors(reader.h, i, session.h);
    if (s !== 0) throw checkError(wasm, reader, s, f);
  }
}

// Opens blob f's source to learn its size (a path's stat, a Blob's size, a URL's Content-Range
// total or Content-Length from its first response) and checks it against the manifest, as the
// CLI does before any header is read. A size that stays unknown (a stream, a URL whose server
// gives none) is left to the reader.
async function checkBlobSource(wasm, reader, f, options) {
  const src = await toSource(f.input, options);
  // A stream or a Response: opening it would spend its body (the reader checks its size later).
  if (!src.url && !src.seekable) return;
  try {
    await src.open(options.signal);
  } catch (e) {
    if (!isMissing(e)) throw e;
    throw makeError({
      code: 'ManifestBlobMissing', offset: 0, tensor: f.layer, shard: f.name, cause: e,
      detail: `the blob of layer ${JSON.stringify(f.layer)} is not there (${e.message})`,
    }, 'a tensor layer\'s blob is not there');
  } finally {
    src.close();
  }
  if (src.size !== null && src.size !== undefined) checkSize(wasm, reader, f, src.size);
}

// Every blob's size and header checked against its layers, the library's model over all blobs.
export async function openManifest(wasm, source, options) {
  const { files, reader } = await manifestFiles(wasm, source, options);
  try {
    // Sizes first, as the CLI checks them (and a missing blob), before any header is read: a URL
    // blob costs one request more here (its first response, body cancelled) — the reader would
    // otherwise say TruncatedData for a short one, not ManifestBlobSize.
    for (const f of files) await checkBlobSource(wasm, reader, f, options);
    await readHeaders(wasm, files, options, (f, h, s) => {
      if (h.size !== null && h.size !== undefined) checkSize(wasm, reader, f, h.size);
      checkTensors(wasm, reader, f, s);
    }, { buffer: false });
    const { weights, plan } = await buildLogical(wasm, files, options, (m) => m.build('ollama'));
    return { files, weights, plan, version: null };
  } finally {
    destroySessions(files);
    reader.destroy();
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
