// ws::Dequantizer through the C ABI (wasm/src/abi_dequant.cpp): one handle and one output buffer,
// allocated once per file and reused for every tensor.
import { u64 } from './module.mjs';
import { readError } from './session.mjs';

export class Dequantizer {
  constructor(wasm, outSize) {
    this.wasm = wasm;
    this.h = wasm.x.ws_dequant_create();
    if (!this.h) throw new RangeError('weightstream: cannot allocate a dequantizer');
    wasm.live.dequantizers++;
    this.outSize = outSize;
    this.out = wasm.alloc(outSize);
    this.spec = wasm.x.ws_dequant_spec(this.h) >> 2;
    this.res = wasm.x.ws_dequant_out(this.h) >> 2;
  }

  destroy() {
    if (this.h) { this.wasm.x.ws_dequant_destroy(this.h); this.wasm.free(this.out); this.wasm.live.dequantizers--; }
    this.h = 0;
  }

  // spec: {format (id), out (0 f32, 1 f16), impl, elements, bits, group, scaleDtype, scales (ptr),
  // biases (ptr), globalScale (number|null), globalScaleIsOllama, validate, inputOffset,
  // scalesOffset}. Returns the status code (0 = Ok).
  init(spec) {
    const u = this.wasm.u32;
    const w = this.spec;
    const put64 = (at, v) => { u[w + at] = v % 4294967296; u[w + at + 1] = Math.floor(v / 4294967296); };
    u[w] = spec.format;
    u[w + 1] = spec.out;
    u[w + 2] = spec.impl ?? 0;
    put64(3, spec.elements);
    u[w + 5] = spec.bits ?? 0;
    u[w + 6] = spec.group ?? 0;
    u[w + 7] = spec.scaleDtype ?? 14;  // BF16
    u[w + 8] = spec.scales ?? 0;
    u[w + 9] = spec.biases ?? 0;
    u[w + 10] = spec.globalScale !== undefined && spec.globalScale !== null ? 1 : 0;
    new Float32Array(u.buffer, (w + 11) * 4, 1)[0] = spec.globalScale ?? 1;
    u[w + 12] = spec.globalScaleIsOllama ? 1 : 0;
    u[w + 13] = spec.validate === false ? 0 : 1;
    put64(14, spec.inputOffset ?? 0);
    put64(16, spec.scalesOffset ?? 0);
    return this.wasm.x.ws_dequant_init(this.h);
  }

  // Decodes from wasm address `ptr` (n bytes) into the output buffer. Returns the status; the
  // counts are in inUsed / outWritten.
  decode(ptr, n) {
    const s = this.wasm.x.ws_dequant_decode(this.h, ptr, n, this.out, this.outSize);
    const u = this.wasm.u32;
    this.inUsed = u[this.res];
    this.outWritten = u[this.res + 1];
    return s;
  }

  get done() { return this.wasm.u32[this.res + 2] !== 0; }
  get elementsDone() { const u = this.wasm.u32; return u64(u[this.res + 3], u[this.res + 4]); }
  get inputBytes() { const u = this.wasm.u32; return u64(u[this.res + 5], u[this.res + 6]); }
  get impl() { return ['auto', 'reference', 'simd128'][this.wasm.u32[this.res + 8]]; }
  error() { return readError(this.wasm, this.res + 9); }
}
