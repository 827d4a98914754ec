// Decode on the GPU: which formats, and the decoder loadToWebGPU drives (pass.mjs; the WGSL in
// wgsl.mjs, shipped as strings here and as dist/wgsl/*.wgsl).
import { GPU_FORMATS } from './wgsl.mjs';
import { GpuDecoder as Decoder, GpuDecodeWriter as BlockWriter } from './pass.mjs';
import { GpuCompanionWriter } from './companion.mjs';
import { makeError } from '../errors.mjs';

export { GPU_FORMATS, WGSL_COMMON, WGSL_FORMATS, WGSL_COMPANION_FORMATS, wgslDecoder } from './wgsl.mjs';

// The writer of one tensor the GPU decodes: blocks streamed through staging, or a packed weight
// with companions decoded at its end.
export function GpuDecodeWriter(decoder, d, buffers, pieceBytes) {
  return d.gpu.pieces ? new GpuCompanionWriter(decoder, d, buffers, pieceBytes) : new BlockWriter(decoder, d, buffers, pieceBytes);
}

const MODES = ['cpu', 'gpu', 'auto'];

// Whether a device can run the decode pass (a GPUDevice: createComputePipeline).
export const canDecodeOn = (device) => typeof device?.createComputePipeline === 'function';

// The formats loadToWebGPU / plan() decode on the GPU for these options, or null (all on the CPU):
// decode 'gpu' or 'auto' with dtype 'f32' or 'f16' and a device that runs compute passes ('gpu'
// without one is an error; 'auto' falls back).
export function gpuDecodeFormats(device, options) {
  const decode = options.decode ?? 'cpu';
  if (!MODES.includes(decode)) throw new TypeError(`weightstream: decode must be 'cpu', 'gpu' or 'auto', not ${JSON.stringify(decode)}`);
  const dtype = options.dtype ?? 'raw';
  if (decode === 'cpu' || (dtype !== 'f32' && dtype !== 'f16')) return null;
  if (!canDecodeOn(device) || (device !== FORMATS_ONLY && typeof globalThis.GPUBufferUsage !== 'object')) {
    if (decode === 'gpu') throw new TypeError('weightstream: decode: \'gpu\' needs a GPUDevice');
    return null;
  }
  return new Set(GPU_FORMATS);
}

// plan()'s view: decode 'gpu' decodes those formats on the GPU (a device is assumed); 'auto' when
// options.device runs compute passes.
export function planDecodeFormats(options) {
  if ((options.decode ?? 'cpu') === 'gpu' && !canDecodeOn(options.device)) return gpuDecodeFormats(FORMATS_ONLY, options);
  return gpuDecodeFormats(options.device, options);
}
// Stands for a device in plan() without one (limits given instead).
const FORMATS_ONLY = { createComputePipeline() {} };

export class GpuDecoder extends Decoder {
  constructor(device, o) {
    super(device, o);
    this.tensors = 0;
  }

  async write(writer, mem, at, len, shard, role, offset) {
    try { await writer.write(mem, at, len, role, offset); } catch (e) { throw this.error(e, shard); }
  }

  async finish(writer, shard) {
    try { await writer.finish(); } catch (e) { throw this.error(e, shard); }
    this.tensors++;
  }

  // The last status check, when the load is over: a bad block anywhere fails the load as the CPU
  // decode would have (InvalidBlockData at the scale's byte offset).
  async close() {
    const bad = await this.check();
    this.status?.destroy();  // (created: an error destroys it too)
    if (bad) throw this.error({ badBlock: bad }, null);
  }

  error(e, shard) {
    if (!e?.badBlock) return e;
    return makeError({ code: 'InvalidBlockData', offset: e.badBlock.offset, tensor: e.badBlock.tensor, shard });
  }

  summary() {
    return { tensors: this.tensors, uploadBytes: this.uploaded, dispatches: this.dispatches };
  }
}
