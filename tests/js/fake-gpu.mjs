// A small stand-in for a GPUDevice: enough of createBuffer / queue.writeBuffer / error scopes to
// check what loadToWebGPU does — buffer sizes and usage, 4-byte alignment of every write, where
// the written bytes come from, splitting, and that everything is destroyed on error or abort. It
// applies WebGPU's own rules and throws where a real device would raise a validation error.
export class FakeBuffer {
  constructor(device, { size, usage, label }) {
    this.device = device;
    this.size = size;
    this.usage = usage;
    this.label = label;
    this.destroyed = false;
    this.data = device.keepData ? new Uint8Array(size) : null;
  }
  destroy() { this.destroyed = true; this.data = null; }
}

export class FakeDevice {
  constructor({ maxBufferSize = 256 * 1024 * 1024, keepData = true, wasmMemory = null } = {}) {
    this.limits = { maxBufferSize };
    this.keepData = keepData;
    this.wasmMemory = wasmMemory;
    this.buffers = [];
    this.writes = 0;
    this.bytesWritten = 0;
    this.writesFromWasm = 0;  // writes whose source is a view of the wasm module's memory
    this.violations = [];
    this.scopes = 0;
    this.queue = { writeBuffer: (...a) => this.writeBuffer(...a) };
  }

  createBuffer(desc) {
    if (desc.size > this.limits.maxBufferSize) this.violations.push(`buffer of ${desc.size} > maxBufferSize`);
    const b = new FakeBuffer(this, desc);
    this.buffers.push(b);
    return b;
  }

  // GPUQueue.writeBuffer(buffer, bufferOffset, data, dataOffset, size): offsets and size in
  // elements of `data` for typed arrays (bytes here: Uint8Array), multiples of 4 bytes.
  writeBuffer(buffer, offset, data, dataOffset = 0, size) {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (size === undefined) size = bytes.length - dataOffset;
    if (buffer.destroyed) this.violations.push(`write to destroyed ${buffer.label}`);
    if (offset % 4 || size % 4) this.violations.push(`unaligned write to ${buffer.label}: offset ${offset}, size ${size}`);
    if (offset + size > buffer.size) this.violations.push(`write past the end of ${buffer.label}: ${offset}+${size} > ${buffer.size}`);
    if (dataOffset + size > bytes.length) this.violations.push('write reads past its source');
    this.writes++;
    this.bytesWritten += size;
    if (this.wasmMemory && data.buffer === this.wasmMemory.buffer) this.writesFromWasm++;
    if (buffer.data && !buffer.destroyed) buffer.data.set(bytes.subarray(dataOffset, dataOffset + size), offset);
  }

  pushErrorScope() { this.scopes++; }
  async popErrorScope() { this.scopes--; return null; }

  live() { return this.buffers.filter((b) => !b.destroyed); }
}
