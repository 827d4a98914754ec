// Decode on the GPU of packed weights with companions (MLX affine): the packed piece, the scales
// and the biases arrive in file order — companions may come before or after the packed bytes — so
// each is uploaded as stored into its own GPU buffer (straight from wasm memory, as gpu-writer.mjs
// writes raw tensors), and the weight is decoded when its last piece is in, in dispatches of at
// most MAX_ELEMS values into the output buffers. The packed buffer (bits/16 of the f16 output) is
// the only transient GPU copy; nothing is held in JS or wasm.
import { WGSL_COMMON, WGSL_COMPANION_FORMATS } from './wgsl.mjs';
import { GpuTensorWriter, roundUp4 } from '../gpu-writer.mjs';

const WORKGROUP = 64;
const MAX_X = 65535;
const MAX_ELEMS = 1 << 22;
// F8_E4M3: ModelOpt's nvfp4 scales, one byte each as MLX's U8 (the format's kernel reads E4M3).
const SCALE_CODES = { F32: 0, F16: 1, BF16: 2, U8: 3, F8_E4M3: 3 };
const ROLE_NAMES = ['packed', 'scales', 'biases'];
const GLOBAL_SCALE = 3;  // PieceRole::GlobalScale: an F32 scalar

function shaderOf(format, dtype, q) {
  const f = WGSL_COMPANION_FORMATS[format];
  const per = dtype === 'f16' ? 2 : 1;
  const value = (e) => `ws_decode_${format}((${e}) / WS_GROUP, (${e}) % WS_GROUP)`;
  const body = per === 1
    ? `  let e = ws_p.first + t;
  if (ws_p.check != 0u && e % WS_GROUP == 0u) { ws_report(e / WS_GROUP); }
  ws_dst[ws_p.dst_word + t] = ${value('e')};`
    : `  let e = ws_p.first + 2u * t;
  if (ws_p.check != 0u && e % WS_GROUP == 0u) { ws_report(e / WS_GROUP); }
  let lo = ws_f32_to_f16(${value('e')});
  var hi = 0u;
  if (e + 1u < ws_p.elems) {
    if (ws_p.check != 0u && (e + 1u) % WS_GROUP == 0u) { ws_report((e + 1u) / WS_GROUP); }
    hi = ws_f32_to_f16(${value('e + 1u')});
  }
  ws_dst[ws_p.dst_word + t] = lo | (hi << 16u);`;
  return `
@group(0) @binding(0) var<storage, read> ws_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> ws_dst: array<u32>;
struct WsParams { first: u32, words: u32, dst_word: u32, elems: u32, slot: u32, check: u32, p0: u32, p1: u32 }
@group(0) @binding(2) var<uniform> ws_p: WsParams;
@group(0) @binding(3) var<storage, read_write> ws_status: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> ws_scales: array<u32>;
${f.biases ? '@group(0) @binding(5) var<storage, read> ws_biases: array<u32>;' : ''}
fn ws_has_global() -> bool { return ws_p.p1 != 0u; }
fn ws_global() -> u32 { return ws_p.p0; }
fn ws_global_is_ollama() -> bool { return ws_p.p1 == 2u; }
fn ws_global_divides() -> bool { return ws_p.p1 == 3u; }
const WS_BITS: u32 = ${q.bits}u;
const WS_GROUP: u32 = ${q.group}u;
const WS_SCALE: u32 = ${q.scale}u;
${WGSL_COMMON}
${f.wgsl}
fn ws_report(g: u32) {
  let r = ws_check_${format}(g);
  if (r != 0xFFFFFFFFu) { atomicMin(&ws_status[ws_p.slot], r); }
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let t = g.x + g.y * ${MAX_X * WORKGROUP}u;
  if (t >= ws_p.words) { return; }
${body}
}
`;
}

export class GpuCompanionWriter {
  // d.gpu: { format, bits, group, scaleDtype, pieces: { packed, scales, biases: {byteLength, offset} } }
  constructor(decoder, d, buffers, pieceBytes) {
    this.dec = decoder;
    this.d = d;
    this.buffers = buffers;
    this.pieceWords = pieceBytes / 4;
    this.per = d.dtype === 'f16' ? 2 : 1;
    const g = d.gpu;
    this.q = { bits: g.bits, group: g.group, scale: SCALE_CODES[g.scaleDtype] };
    const key = `${g.format}/${d.dtype}/${g.bits}/${g.group}/${g.scaleDtype}`;
    this.pipeline = decoder.pipelines.get(key);
    if (!this.pipeline) {
      const module = decoder.device.createShaderModule({ label: `weightstream decode ${key}`, code: shaderOf(g.format, d.dtype, this.q) });
      this.pipeline = decoder.device.createComputePipeline({ label: `weightstream decode ${key}`, layout: 'auto', compute: { module, entryPoint: 'main' } });
      decoder.pipelines.set(key, this.pipeline);
    }
    decoder.statusBuffer();
    this.temp = [];
    this.biases = WGSL_COMPANION_FORMATS[g.format].biases;
    this.writers = ROLE_NAMES.slice(0, this.biases ? 3 : 2).map((role) => {
      const n = g.pieces[role].byteLength;
      return new GpuTensorWriter(decoder.device, `${d.name} ${role}`, n, { pieceBytes: roundUp4(Math.max(n, 4)), count: 1 }, this.temp);
    });
    this.global = null;  // MLX nvfp4's global scale: its 4 bytes, read here (g is computed on the host)
    this.globalBytes = new Uint8Array(4);
    for (const b of this.temp) decoder.created.push(b);
  }

  // role: the piece's number (PieceRole: 0 packed, 1 scales, 2 biases).
  async write(mem, at, len, role, offset) {
    if (role === GLOBAL_SCALE) {
      this.globalBytes.set(mem.subarray(at, at + len), offset);
      this.global = true;
      return;
    }
    this.writers[role].write(mem, at, len);
    this.dec.uploaded += len;
  }

  async finish() {
    const dec = this.dec;
    for (const w of this.writers) w.finish();
    const elems = this.d.elements;
    const g = this.d.gpu;
    // g = global_scale / 2688 in f32 (mlx_quants.cpp): the double quotient of two f32 values,
    // rounded to f32, is their f32 quotient (53 >= 2·24 + 2 bits).
    const f32 = new Float32Array(1);
    // Ollama's: the global scale itself, multiplied into E2M1·e4m3(s) (global mode 2). ModelOpt's:
    // the global scale itself, in MLX's order (e4m3(s)·g first; DequantSpec::global_scale_is_modelopt).
    // compressed-tensors': the global scale itself, the divisor of e4m3(s) (global mode 3).
    if (this.global) f32[0] = new DataView(this.globalBytes.buffer).getFloat32(0, true) / (g.ollamaGlobal || g.modeloptGlobal || g.dividingGlobal ? 1 : 2688);
    const gBits = new Uint32Array(f32.buffer)[0];
    // ModelOpt's weight_scale_2 or compressed-tensors' weight_global_scale of zero, inf or NaN:
    // refused at its bytes, as the CPU's Dequantizer::init does.
    if (this.global && (g.modeloptGlobal || g.dividingGlobal) && dec.validate) {
      const raw = new DataView(this.globalBytes.buffer).getUint32(0, true);
      if ((raw & 0x7F800000) === 0x7F800000 || (raw & 0x7FFFFFFF) === 0) throw Object.assign(new Error('global scale'), { badBlock: { tensor: this.d.name, offset: g.globalOffset } });
    }
    const params = [];
    const enc = dec.device.createCommandEncoder({ label: 'weightstream decode' });
    const pass = enc.beginComputePass();
    pass.setPipeline(this.pipeline);
    // Ranges of whole multiples of 256 groups, so that the packed bytes, scales and biases of a
    // range start at a multiple of 256 bytes (minStorageBufferOffsetAlignment's largest value) and
    // each is bound from there: a packed piece over maxStorageBufferBindingSize still decodes.
    const group = this.q.group;
    const groupBytes = (group * this.q.bits) / 8;
    const scaleBytes = { 0: 4, 1: 2, 2: 2, 3: 1 }[this.q.scale];
    // (At most decodeChunk packed bytes a range, 1 MiB by default.)
    const most = Math.min(MAX_ELEMS, Math.floor((dec.chunkTarget * 8) / this.q.bits));
    const span = Math.max(1, Math.floor(most / (256 * group))) * 256 * group;
    const range = (w, at, n) => {
      const size = w.buffers[0].size;
      return { buffer: w.buffers[0], offset: at, size: Math.min(roundUp4(Math.max(n, 4)), size - at) };
    };
    for (let base = 0; base < elems; base += span) {
      const n = Math.min(span, elems - base);
      const g0 = base / group, groups = Math.ceil(n / group);
      const slotIndex = dec.slots.length - dec.slotBase;
      dec.slots.push({ tensor: this.d.name, offset: g.pieces.scales.offset, chunkStart: g0 * scaleBytes });
      const src = range(this.writers[0], g0 * groupBytes, groups * groupBytes);
      const scales = range(this.writers[1], g0 * scaleBytes, groups * scaleBytes);
      const biases = this.biases ? range(this.writers[2], g0 * scaleBytes, groups * scaleBytes) : null;
      let first = 0;  // relative to base
      while (first < n) {
        const word = (base + first) / this.per;
        const buf = Math.floor(word / this.pieceWords);
        const inBuf = word - buf * this.pieceWords;
        const words = Math.min(Math.ceil((n - first) / this.per), this.pieceWords - inBuf);
        const bindAt = Math.floor((inBuf * 4) / dec.align) * dec.align;
        const p = dec.device.createBuffer({ label: 'weightstream params', size: 32, usage: dec.U.UNIFORM | dec.U.COPY_DST });
        params.push(p);
        dec.queue.writeBuffer(p, 0, new Uint32Array([first, words, inBuf - bindAt / 4, n, slotIndex, dec.validate ? 1 : 0, gBits, this.global ? (g.ollamaGlobal ? 2 : g.dividingGlobal ? 3 : 1) : 0]));
        pass.setBindGroup(0, dec.device.createBindGroup({
          layout: this.pipeline.getBindGroupLayout(0),
          entries: [
            { binding: 0, resource: src },
            { binding: 1, resource: { buffer: this.buffers[buf], offset: bindAt, size: inBuf * 4 - bindAt + words * 4 } },
            { binding: 2, resource: { buffer: p } },
            { binding: 3, resource: { buffer: dec.status } },
            { binding: 4, resource: scales },
            ...(biases ? [{ binding: 5, resource: biases }] : []),
          ],
        }));
        const wg = Math.ceil(words / WORKGROUP);
        pass.dispatchWorkgroups(Math.min(wg, MAX_X), Math.ceil(wg / MAX_X));
        dec.dispatches++;
        first += words * this.per;
      }
    }
    pass.end();
    dec.queue.submit([enc.finish()]);
    // Destroying after submit is allowed: the submitted passes still read them.
    for (const b of [...this.temp, ...params]) b.destroy();
    await dec.queue.onSubmittedWorkDone();
    await dec.checkIfFull();
  }
}
