// The decode-at-upload pass: a tensor's stored bytes go to a small ring of staging buffers and a
// WGSL compute pass (wgsl.mjs) expands each filled staging buffer into the tensor's f32/f16 output
// buffers — the buffers, sizes and split layout the CPU decode writes (gpu-writer.mjs layout).
//
// Bounded: each tensor's staging ring is RING buffers of chunkBytes (a multiple of the block size and of 4;
// 1 MiB by default), so nothing holds more than that of a tensor in JS, wasm or staging. Bytes
// arrive in pieces of any size; a piece is copied straight from wasm memory into the staging
// buffer at the write position (queue.writeBuffer copies at call time), 1-3 bytes kept back for
// writeBuffer's 4-byte rule, and a staging buffer is decoded only when it holds whole blocks (it
// fills to chunkBytes, or the tensor ends), so a block split across pieces is completed in
// staging, never copied aside. Each decode is its own submit, so the next write to the same
// staging buffer is ordered after it by the queue; after RING submits the writer waits for the
// queue (onSubmittedWorkDone) so uploads stay bounded by the ring.
//
// Block checks (the library's validateBlocks): each dispatch has a status slot, the lowest bad
// byte offset (relative to its staging chunk) is kept with atomicMin; check() reads the slots back
// and names the first bad field in file order, as the CPU decode would (InvalidBlockData).
import { WGSL_COMMON, WGSL_FORMATS } from './wgsl.mjs';
import { WordCarry } from '../word-carry.mjs';

const WORKGROUP = 64;
const MAX_X = 65535;
export const DEFAULT_CHUNK = 1 << 20;
const RING = 2;
const SLOTS = 1024;
const NONE = 0xFFFFFFFF;
const PIPELINES = new WeakMap();  // device -> (format/dtype/params key -> GPUComputePipeline)
const gcd = (a, b) => (b ? gcd(b, a % b) : a);

function shaderOf(format, dtype) {
  const f = WGSL_FORMATS[format];
  const per = dtype === 'f16' ? 2 : 1;
  // F16 asked as f16 is its stored halves, bit for bit (a signalling NaN stays one: dequant.h).
  const h16 = (b, i) => (format === 'F16' ? `ws_u16(${b} * 2u)` : `ws_f32_to_f16(ws_decode_${format}(${b}, ${i}))`);
  const body = per === 1
    ? `  let e = ws_p.first + t;
  let b = e / BE;
  let i = e % BE;
  if (ws_p.check != 0u && i == 0u) { ws_report(b); }
  ws_dst[ws_p.dst_word + t] = ws_decode_${format}(b, i);`
    : `  let e = ws_p.first + 2u * t;
  let b = e / BE;
  let i = e % BE;
  if (ws_p.check != 0u && i == 0u) { ws_report(b); }
  let lo = ${h16('b', 'i')};
  var hi = 0u;
  if (e + 1u < ws_p.elems) {
    let b1 = (e + 1u) / BE;
    let i1 = (e + 1u) % BE;
    if (ws_p.check != 0u && i1 == 0u) { ws_report(b1); }
    hi = ${h16('b1', 'i1')};
  }
  ws_dst[ws_p.dst_word + t] = lo | (hi << 16u);`;
  return `
@group(0) @binding(0) var<storage, read> ws_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> ws_dst: array<u32>;
struct WsParams { first: u32, words: u32, dst_word: u32, elems: u32, slot: u32, check: u32, p0: u32, p1: u32 }
@group(0) @binding(2) var<uniform> ws_p: WsParams;
@group(0) @binding(3) var<storage, read_write> ws_status: array<atomic<u32>>;
const BE: u32 = ${f.blockElems}u;
const BB: u32 = ${f.blockBytes}u;
${WGSL_COMMON}
${f.wgsl}
fn ws_report(b: u32) {
  let r = ws_check_${format}(b);
  if (r != 0xFFFFFFFFu) { atomicMin(&ws_status[ws_p.slot], b * BB + r); }
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let t = g.x + g.y * ${MAX_X * WORKGROUP}u;
  if (t >= ws_p.words) { return; }
${body}
}
`;
}

// One per loadToWebGPU call with decode on the GPU: pipelines per (format, dtype), the staging
// ring, the status slots.
export class GpuDecoder {
  constructor(device, { chunkBytes = DEFAULT_CHUNK, validate = true, created = [] } = {}) {
    this.device = device;
    this.queue = device.queue;
    this.chunkTarget = chunkBytes;
    this.validate = validate;
    this.align = device.limits?.minStorageBufferOffsetAlignment ?? 256;
    // Pipelines are kept per device across loads: compiling a WGSL module costs far more than
    // decoding a small tensor.
    if (!PIPELINES.has(device)) PIPELINES.set(device, new Map());
    this.pipelines = PIPELINES.get(device);
    this.U = globalThis.GPUBufferUsage;
    this.created = created;
    this.slots = [];      // slot -> { tensor, source offset, chunk start }
    this.status = null;
    this.uploaded = 0;    // bytes written to staging
    this.dispatches = 0;
  }

  pipeline(format, dtype) {
    const key = `${format}/${dtype}`;
    let p = this.pipelines.get(key);
    if (!p) {
      const module = this.device.createShaderModule({ label: `weightstream decode ${key}`, code: shaderOf(format, dtype) });
      p = this.device.createComputePipeline({ label: `weightstream decode ${key}`, layout: 'auto', compute: { module, entryPoint: 'main' } });
      this.pipelines.set(key, p);
    }
    return p;
  }

  // The staging size for a format: whole blocks and whole words, at most chunkTarget (at least
  // one lcm of both), and at most what one dispatch can address.
  chunkFor(f) {
    const unit = (f.blockBytes * 4) / gcd(f.blockBytes, 4);
    let n = Math.max(1, Math.floor(this.chunkTarget / unit));
    const maxElems = MAX_X * WORKGROUP * 64;
    while (n > 1 && (n * unit / f.blockBytes) * f.blockElems > maxElems) n >>= 1;
    return n * unit;
  }

  statusBuffer() {
    if (!this.status) {
      const U = this.U;
      this.status = this.device.createBuffer({ label: 'weightstream decode status', size: SLOTS * 4, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
      this.created.push(this.status);
      this.resetStatus();
    }
    return this.status;
  }

  resetStatus() {
    this.queue.writeBuffer(this.status, 0, new Uint32Array(SLOTS).fill(NONE));
    this.slotBase = this.slots.length;
  }

  // Before the status slots run out: read them back (a bad block fails the load there).
  async checkIfFull() {
    if (this.slots.length - this.slotBase < SLOTS) return;
    const bad = await this.check();
    if (bad) throw Object.assign(new Error('bad block'), { badBlock: bad });
  }

  // Reads the status slots back; the first bad field in file order, or null. Resets them.
  async check() {
    if (!this.status || this.slots.length === this.slotBase) return null;
    const n = this.slots.length - this.slotBase;
    const read = this.device.createBuffer({ size: n * 4, usage: this.U.MAP_READ | this.U.COPY_DST });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(this.status, 0, read, 0, n * 4);
    this.queue.submit([enc.finish()]);
    await read.mapAsync(globalThis.GPUMapMode.READ);
    const v = new Uint32Array(read.getMappedRange().slice(0));
    read.unmap();
    read.destroy();
    let bad = null;
    for (let i = 0; i < n; i++) {
      if (v[i] !== NONE) { const s = this.slots[this.slotBase + i]; bad = { tensor: s.tensor, offset: s.offset + s.chunkStart + v[i] }; break; }
    }
    this.resetStatus();
    return bad;
  }
}

// One tensor being decoded: write() its stored bytes in order, finish() at its end.
export class GpuDecodeWriter {
  // d: the output descriptor (d.gpu.format, d.dtype, d.elements); buffers/pieceBytes: the output
  // buffers as gpu-writer.mjs lays them out.
  constructor(decoder, d, buffers, pieceBytes) {
    this.dec = decoder;
    this.d = d;
    this.f = WGSL_FORMATS[d.gpu.format];
    this.per = d.dtype === 'f16' ? 2 : 1;  // elements per output word
    this.buffers = buffers;
    this.pieceWords = pieceBytes / 4;
    this.chunk = decoder.chunkFor(this.f);
    // The writer's own ring (tensors of several shards may be written at once), no larger than
    // the tensor's stored bytes; destroyed at finish() (after the submits that read it).
    const stored = Math.ceil(d.gpu.uploadBytes / 4) * 4;
    if (stored < this.chunk) this.chunk = Math.max(4, stored);
    decoder.statusBuffer();
    const U = decoder.U;
    this.ring = [];
    for (let i = 0; i < RING; i++) {
      const staging = decoder.device.createBuffer({ label: `${d.name} staging ${i}`, size: this.chunk, usage: U.STORAGE | U.COPY_DST });
      decoder.created.push(staging);
      this.ring.push({ staging, params: [] });
    }
    this.ringAt = 0;
    this.pendingSubmits = 0;
    this.pipeline = decoder.pipeline(d.gpu.format, d.dtype);
    this.pos = 0;          // bytes of the current chunk in staging (a multiple of 4)
    this.chunkStart = 0;   // the chunk's first byte in the tensor's stored bytes
    this.carry = new WordCarry();
    this.emit = (src, at, n) => { this.dec.queue.writeBuffer(this.slot.staging, this.pos, src, at, n); this.pos += n; };
    this.slot = this.ring[0];
    this.elemsDone = 0;
  }

  async write(mem, at, len) {
    while (len > 0) {
      const room = this.chunk - this.pos - this.carry.length;
      const n = Math.min(len, room);
      this.stage(mem, at, n);
      at += n;
      len -= n;
      if (this.pos === this.chunk) await this.flush();
    }
  }

  stage(mem, at, len) {
    this.carry.push(mem, at, len, this.emit);
    this.dec.uploaded += len;
  }

  // Decodes the staged whole blocks into the output buffers (one dispatch per output buffer the
  // chunk's values fall in), then moves to the next ring slot.
  async flush() {
    const dec = this.dec, f = this.f;
    const bytes = this.pos + this.carry.length;
    this.carry.pad(this.emit);  // (pos is reset once the chunk is decoded)
    const blocks = Math.floor(bytes / f.blockBytes);
    // (F8Q8 pads its last block: only the tensor's own values are written.)
    const elems = Math.min(blocks * f.blockElems, this.d.elements - this.elemsDone);
    if (elems === 0) return;
    const slotIndex = dec.slots.length - dec.slotBase;
    dec.slots.push({ tensor: this.d.name, offset: this.d.source.offset, chunkStart: this.chunkStart });
    const enc = dec.device.createCommandEncoder({ label: 'weightstream decode' });
    const pass = enc.beginComputePass();
    pass.setPipeline(this.pipeline);
    let first = 0, k = 0;
    const per = this.per;
    while (first < elems) {
      const word = (this.elemsDone + first) / per;  // the output word of element `first`
      const buf = Math.floor(word / this.pieceWords);
      const inBuf = word - buf * this.pieceWords;
      const words = Math.min(Math.ceil((elems - first) / per), this.pieceWords - inBuf);
      // Bound at the lowest aligned offset (maxStorageBufferBindingSize is below maxBufferSize).
      const bindAt = Math.floor((inBuf * 4) / dec.align) * dec.align;
      const params = this.paramsBuffer(this.slot, k++);
      dec.queue.writeBuffer(params, 0, new Uint32Array([first, words, inBuf - bindAt / 4, elems, slotIndex, dec.validate ? 1 : 0, 0, 0]));
      const group = dec.device.createBindGroup({
        layout: this.pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: this.slot.staging } },
          { binding: 1, resource: { buffer: this.buffers[buf], offset: bindAt, size: inBuf * 4 - bindAt + words * 4 } },
          { binding: 2, resource: { buffer: params } },
          { binding: 3, resource: { buffer: dec.status } },
        ],
      });
      pass.setBindGroup(0, group);
      const groups = Math.ceil(words / WORKGROUP);
      pass.dispatchWorkgroups(Math.min(groups, MAX_X), Math.ceil(groups / MAX_X));
      dec.dispatches++;
      first += words * per;
    }
    pass.end();
    dec.queue.submit([enc.finish()]);
    this.elemsDone += elems;
    this.chunkStart += bytes;
    this.pos = 0;
    this.ringAt = (this.ringAt + 1) % this.ring.length;
    this.slot = this.ring[this.ringAt];
    if (++this.pendingSubmits >= this.ring.length) {
      this.pendingSubmits = 0;
      await dec.queue.onSubmittedWorkDone();
    }
    await dec.checkIfFull();
  }

  // A params uniform for dispatch k of a ring slot (each dispatch its own: several dispatches of
  // one chunk go in one submit; the next use of the slot's is ordered after it by the queue).
  paramsBuffer(slot, k) {
    while (slot.params.length <= k) {
      const b = this.dec.device.createBuffer({ label: 'weightstream params', size: 32, usage: this.dec.U.UNIFORM | this.dec.U.COPY_DST });
      this.dec.created.push(b);
      slot.params.push(b);
    }
    return slot.params[k];
  }

  async finish() {
    if (this.pos + this.carry.length) await this.flush();
    // Destroying after submit is allowed: the submitted passes still read them.
    for (const r of this.ring) { r.staging.destroy(); for (const p of r.params) p.destroy(); }
  }
}
