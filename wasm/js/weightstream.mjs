// weightstream — streaming safetensors / GGUF reader for browsers and Node (WebAssembly).
export { init } from './module.mjs';
export { validate, inspect } from './validate.mjs';
export { WeightstreamError } from './errors.mjs';
