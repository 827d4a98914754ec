// Small queries about this build.
import { init } from './module.mjs';
import { supportedFormats as formats } from './formats.mjs';

// Names of the quant formats this build decodes (the rest give UnsupportedFormat).
export async function supportedFormats(options = {}) {
  return formats(await init(options));
}

// What kind of model file `head` (the file's first bytes: 4 KiB is plenty, 8 decide most) is, by
// the library's one rule (file_kind.h, through the C ABI): 'safetensors', 'gguf',
// 'ollama-manifest', 'shard-index', 'json' or 'unknown'. `size`: the whole file's size in bytes,
// when known (a safetensors length prefix must fit in it). The loader's own choice for a source
// given without a kind follows the same rule.
export async function fileKind(head, size = null, options = {}) {
  const w = await init(options);
  const bytes = head instanceof Uint8Array ? head : new Uint8Array(head);
  const n = Math.min(bytes.length, 1 << 16);
  const p = w.alloc(Math.max(n, 1));
  try {
    w.u8.set(bytes.subarray(0, n), p);
    const known = size !== null && size !== undefined;
    const lo = known ? Number(BigInt(size) & 0xFFFFFFFFn) : 0xFFFFFFFF;
    const hi = known ? Number(BigInt(size) >> 32n) : 0xFFFFFFFF;
    return w.cstr(w.x.ws_file_kind_name(w.x.ws_file_kind(p, n, lo, hi)));
  } finally {
    w.free(p);
  }
}
