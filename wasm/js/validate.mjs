// validate() and inspect(): one file (or a sharded model) start to end, or up to its header.
import { init } from './module.mjs';
import { toSource } from './sources.mjs';
import { isShardedSource as isSharded } from './model.mjs';
import { scanFile } from './scan.mjs';
import { scanSharded } from './sharded.mjs';
import { WeightstreamError } from './errors.mjs';
import { isUqffSource, openUqff } from './uqff.mjs';
import { isManifestSource, openManifest } from './ollama-manifest.mjs';
import { fileWeights } from './plan.mjs';
import { publicWeight } from './conventions.mjs';

// Streams every byte through the reader. Never throws for a bad file: the verdict says what is
// wrong. Throws only for misuse (a TypeError) and, like every call here, when options.signal aborts.
export async function validate(source, options = {}) {
  const wasm = await init(options);
  if (isUqffSource(source)) return validateModel(wasm, await openerOf(source), source, options, 'uqff');
  if (isManifestSource(source)) return validateModel(wasm, await openerOf(source), source, options, 'ollama');
  if (await isSharded(source)) return scanSharded(wasm, source, { ...options, mode: 'validate' });
  const state = { format: null, tensorCount: 0 };
  try {
    const src = await toSource(source, options);
    for await (const ev of scanFile(wasm, src, { ...options, select: () => false, ranges: false, state })) {
      if (ev.kind === 'done') return { valid: true, format: state.format, tensors: state.tensorCount, error: null };
    }
    throw new Error('weightstream: the reader stopped without a verdict');
  } catch (e) {
    if (!(e instanceof WeightstreamError) || e.code === 'Aborted') throw e;
    return { valid: false, format: state.format, tensors: state.tensorCount, error: e.toJSON() };
  }
}

// Reads up to the end of the header (the rest of a stream is cancelled, a URL's body not
// downloaded): format, tensors, metadata. Throws a WeightstreamError when the header is invalid.
export async function inspect(source, options = {}) {
  const wasm = await init(options);
  if (isUqffSource(source) || isManifestSource(source)) return inspectModel(wasm, source, options);
  if (await isSharded(source)) return scanSharded(wasm, source, { ...options, mode: 'inspect' });
  const src = await toSource(source, options);
  const keep = {};
  let header = null;
  try {
    for await (const ev of scanFile(wasm, src, { ...options, headerOnly: true, keep })) {
      if (ev.kind === 'header') header = ev.header;
    }
    if (!header) throw new Error('weightstream: the reader stopped without a header');
    const out = publicHeader(header);
    // A safetensors file's logical weights (MLX, Ollama), as the library groups them; a
    // convention error is reported there, the header itself being valid.
    if (header.format === 'safetensors' && keep.session) {
      const name = null;  // a single file: errors name no shard
      try {
        const l = fileWeights(wasm, header, keep.session, { quantization: options.quantization, shard: name, chunk: options.chunkSize });
        if (l.convention === 'ollama' || l.weights.some((w) => w.convention !== 'plain')) {
          const files = [{ header, name }];
          out.logical = { convention: l.convention, weights: l.weights.map((w) => publicWeight(files, w)), plan: l.plan, error: null };
        }
      } catch (e) {
        if (!(e instanceof WeightstreamError)) throw e;
        out.logical = { convention: null, weights: [], plan: null, error: e.toJSON() };
      }
    }
    return out;
  } finally {
    keep.session?.destroy();
  }
}

const openerOf = (source) => (isUqffSource(source) ? openUqff : openManifest);

// A UQFF directory (`{ uqff: [sources] }`) or an Ollama manifest (`{ ollama, blobs }`): per-file
// headers, the library's logical weights and the load plan's peaks. Throws a WeightstreamError
// when a header, the manifest or the model is invalid.
async function inspectModel(wasm, source, options) {
  const convention = isUqffSource(source) ? 'uqff' : 'ollama';
  const m = await openerOf(source)(wasm, source, options);
  const files = m.files.map((f) => ({ header: f.header, name: f.name }));
  const perFile = m.files.map((f) => ({ file: f.name, ...publicHeader(f.header) }));
  return {
    format: 'safetensors',
    convention,
    version: m.version,
    metadata: null,
    files: perFile,
    tensors: perFile.flatMap((f) => f.tensors.map((t) => ({ ...t, file: f.file }))),
    logical: { convention, weights: m.weights.map((w) => publicWeight(files, w)), plan: m.plan, error: null },
  };
}

// validate() of such a model: every file's header, the model (UQFF: versions, companion sets,
// tags, scalars; Ollama: the manifest, blob sizes, params), then every file's bytes to the end.
async function validateModel(wasm, open, source, options, convention) {
  let tensors = 0;
  try {
    const m = await open(wasm, source, options);
    tensors = m.files.reduce((n, f) => n + f.header.tensors.length, 0);
    for (const f of m.files) {
      const src = await toSource(f.input, options);
      for await (const ev of scanFile(wasm, src, { ...options, select: () => false, ranges: false, shard: f.name })) void ev;
    }
    return { valid: true, format: 'safetensors', convention, version: m.version, tensors, error: null };
  } catch (e) {
    if (!(e instanceof WeightstreamError) || e.code === 'Aborted') throw e;
    return { valid: false, format: 'safetensors', convention, version: null, tensors, error: e.toJSON() };
  }
}

// What inspect() returns: the header without internal fields.
export function publicHeader(h) {
  const out = {
    format: h.format,
    name: h.name,
    size: h.size,
    headerSize: h.headerSize,
    dataStart: h.dataStart,
    dataSize: h.dataSize,
    tensors: h.tensors.map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, dataOffsets: t.dataOffsets, byteLength: t.byteLength, offset: t.offset })),
    metadata: h.metadata,
  };
  if (h.gguf) out.gguf = h.gguf;
  return out;
}
