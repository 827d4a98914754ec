// weightstream — streaming safetensors / GGUF reader for browsers and Node (WebAssembly).
//
//   validate(source)                  → {valid, format, tensors, error}
//   inspect(source)                   → {format, tensors, metadata, gguf?}
//   createReader(options).read(source) → async iterator of header / tensor / progress events
//   loadToWebGPU(device, source, options) → {tensors: name → {buffer, dtype, shape, …}, metadata}
//   plan(source, { device | limits, dtype, filter, split, budget }) → sizes, limits and budget
//                                      checked from the headers alone (a preflight)
//   convert(source, { to, output, keep, maxShardSize, filter }) → the model as plain safetensors
//                                      (bf16 / f16 / f32) written to output's files: the CLI's bytes
//   cacheInfo() / evict(url?)         the OPFS cache's entries (options.cache: 'opfs')
//   GPU_FORMATS, WGSL_COMMON, WGSL_FORMATS, WGSL_COMPANION_FORMATS, wgslDecoder(format)   the WGSL
//                                      decoders loadToWebGPU's
//                                      decode: 'gpu' runs, for engines' own kernels
//   persist()                         asks the browser to keep the origin's storage; says the outcome
//
// A source is a URL (string or URL; a model.safetensors.index.json loads the sharded model), a
// path in Node, a Response, a Blob or File, a ReadableStream, an ArrayBuffer or typed array; a
// model of several files is { uqff: [sources] } (a UQFF directory) or { ollama: manifest, blobs }.
export { init } from './module.mjs';
export { validate, inspect } from './validate.mjs';
export { createReader } from './reader.mjs';
export { loadToWebGPU } from './webgpu.mjs';
export { plan } from './plan.mjs';
export { convert } from './convert.mjs';
export { WeightstreamError } from './errors.mjs';
export { supportedFormats, fileKind } from './api-extras.mjs';
export { cacheInfo, evict } from './opfs-cache.mjs';
export { GPU_FORMATS, WGSL_COMMON, WGSL_FORMATS, WGSL_COMPANION_FORMATS, wgslDecoder } from './gpu-decode/index.mjs';
export { persist } from './storage-checks.mjs';
