// Writes one tensor's bytes into GPU buffers with queue.writeBuffer, straight from wasm memory.
//
// writeBuffer needs offsets and sizes that are multiples of 4, and pieces arrive in any size: the
// 1-3 bytes left over from a piece are carried (word-carry.mjs) and completed by the next
// piece; the tensor's last partial word is padded with zeros (buffers are sized up to 4). A
// tensor larger than one buffer may be split: the buffers hold `pieceBytes` each (a multiple of 4
// and of the element or block size), the last one the rest. writeBuffer copies at call time, so
// the wasm memory it reads from can be reused as soon as it returns.

import { WordCarry } from './word-carry.mjs';

export const USAGE = {
  COPY_SRC: 0x04, COPY_DST: 0x08, STORAGE: 0x80,
};

export function gpuUsage() {
  const U = globalThis.GPUBufferUsage ?? USAGE;
  return U.STORAGE | U.COPY_DST | U.COPY_SRC;
}

const gcd = (a, b) => (b ? gcd(b, a % b) : a);
const lcm = (a, b) => (a / gcd(a, b)) * b;
export const roundUp4 = (n) => Math.ceil(n / 4) * 4;
// WebGPU's default limits (a device without requiredLimits has these).
export const DEFAULT_MAX_BUFFER = 268435456;
export const DEFAULT_MAX_BINDING = 134217728;

// The bytes of an output descriptor that must not straddle two buffers of a split tensor.
export function unitOf(d) {
  if (d.dtype === 'f32') return 4;
  if (d.dtype === 'f16') return 2;
  if (d.quant?.blockBytes) return d.quant.blockBytes;
  const bits = { F64: 64, I64: 64, U64: 64, C64: 64, F32: 32, I32: 32, U32: 32, F16: 16, BF16: 16, I16: 16, U16: 16 }[d.dtype];
  return bits ? bits / 8 : 1;
}

// How a tensor of `byteLength` bytes is laid out over buffers no larger than `maxBufferSize`.
// `unit`: bytes that must not straddle two buffers (an element, or a quant block). Returns
// {pieceBytes, count} or null when it does not fit one buffer and splitting is off.
export function layout(byteLength, maxBufferSize, unit, split) {
  if (roundUp4(Math.max(byteLength, 4)) <= maxBufferSize) return { pieceBytes: roundUp4(Math.max(byteLength, 4)), count: 1 };
  if (!split) return null;
  const align = lcm(4, unit || 1);
  const pieceBytes = Math.floor(maxBufferSize / align) * align;
  if (pieceBytes === 0) return null;
  return { pieceBytes, count: Math.ceil(byteLength / pieceBytes) };
}

// The size of buffer i of a tensor laid out as `lay` (the last holds the rest, at least 4 bytes).
export function bufferSize(byteLength, lay, i) {
  return i < lay.count - 1 ? lay.pieceBytes : roundUp4(Math.max(byteLength - i * lay.pieceBytes, 4));
}

export class GpuTensorWriter {
  constructor(device, label, byteLength, lay, created) {
    this.queue = device.queue;
    this.byteLength = byteLength;
    this.pieceBytes = lay.pieceBytes;
    this.buffers = [];
    for (let i = 0; i < lay.count; i++) {
      const size = bufferSize(byteLength, lay, i);
      const b = device.createBuffer({ label: lay.count > 1 ? `${label} [${i}]` : label, size, usage: gpuUsage() });
      created.push(b);  // registered at once: an error later destroys it
      this.buffers.push(b);
    }
    this.pos = 0;      // bytes written (excluding the carry)
    this.carry = new WordCarry();
    this.emit = (src, at, n) => this.region(src, at, n);
  }

  // Writes len bytes of `mem` (a Uint8Array over wasm memory) from `at`, in buffer order.
  region(mem, at, len) {
    while (len > 0) {
      const b = Math.floor(this.pos / this.pieceBytes);
      const off = this.pos - b * this.pieceBytes;
      const n = Math.min(len, this.pieceBytes - off);
      this.queue.writeBuffer(this.buffers[b], off, mem, at, n);
      this.pos += n;
      at += n;
      len -= n;
    }
  }

  write(mem, at, len) { this.carry.push(mem, at, len, this.emit); }

  // The last 1-3 bytes, padded with zeros to a whole word.
  finish() { this.carry.pad(this.emit); }
}
