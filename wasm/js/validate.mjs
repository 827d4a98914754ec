// validate() and inspect(): one file (or a sharded model) start to end, or up to its header.
import { init } from './module.mjs';
import { toSource } from './sources.mjs';
import { isShardedSource as isSharded } from './model.mjs';
import { scanFile } from './scan.mjs';
import { scanSharded } from './sharded.mjs';
import { WeightstreamError } from './errors.mjs';

// Streams every byte through the reader. Never throws for a bad file: the verdict says what is
// wrong. Throws only for misuse (a TypeError) and, like every call here, when options.signal aborts.
export async function validate(source, options = {}) {
  const wasm = await init(options);
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
  if (await isSharded(source)) return scanSharded(wasm, source, { ...options, mode: 'inspect' });
  const src = await toSource(source, options);
  for await (const ev of scanFile(wasm, src, { ...options, headerOnly: true })) {
    if (ev.kind === 'header') return publicHeader(ev.header);
  }
  throw new Error('weightstream: the reader stopped without a header');
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
