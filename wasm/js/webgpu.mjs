// loadToWebGPU(device, source, options): every selected tensor into GPU buffers, as it streams.
//
// One buffer per tensor (usage STORAGE | COPY_DST | COPY_SRC), or several with split: true when a
// tensor exceeds device.limits.maxBufferSize (checked for every tensor at the header, before any
// data is read). Bytes go from wasm memory to queue.writeBuffer, decoded on the way when dtype is
// 'f32' or 'f16'. On any error or abort every buffer created so far is destroyed, and nothing is
// reported after an abort.
//
// decode: 'gpu' (or 'auto' with a device that runs compute passes) with dtype 'f32' / 'f16': the
// weights of formats the WGSL decoders cover (gpu-decode/wgsl.mjs) are uploaded as stored and
// expanded on the GPU into the same buffers (gpu-decode/pass.mjs), bit for bit the CPU decode;
// other weights decode on the CPU as before. 'cpu' (the default): everything on the CPU.
import { init } from './module.mjs';
import { modelEvents } from './model.mjs';
import { Progress } from './options.mjs';
import { GpuTensorWriter, layout, roundUp4, unitOf, DEFAULT_MAX_BUFFER } from './gpu-writer.mjs';
import { makeError, abortError, WeightstreamError } from './errors.mjs';
import { publicHeader } from './validate.mjs';
import { gpuDecodeFormats, GpuDecoder, GpuDecodeWriter } from './gpu-decode/index.mjs';

export async function loadToWebGPU(device, source, options = {}) {
  if (!device || typeof device.createBuffer !== 'function' || !device.queue) throw new TypeError('weightstream: loadToWebGPU needs a GPUDevice');
  const wasm = await init(options);
  const signal = options.signal;
  const maxBufferSize = device.limits?.maxBufferSize ?? DEFAULT_MAX_BUFFER;
  const split = options.split === true;
  const progress = new Progress(options.onProgress, { interval: options.progressInterval ?? 100, signal });
  const created = [];
  const gpuFormats = gpuDecodeFormats(device, options);
  const decoder = gpuFormats ? new GpuDecoder(device, { validate: options.validateBlocks !== false, chunkBytes: options.decodeChunk, created }) : null;
  const tensors = Object.create(null);
  const layouts = new Map();
  const headers = [];
  // One writer per tensor being written: shards stream concurrently, so tensors of different
  // shards interleave (events carry their tensor's plan, ev.d).
  const writers = new Map();
  const warnings = [];  // the library's, as they come (host.mjs publicWarning)
  let index = null;
  const scopes = typeof device.pushErrorScope === 'function';
  if (scopes) { device.pushErrorScope('out-of-memory'); device.pushErrorScope('validation'); }
  let popped = false;
  const popScopes = async () => {
    if (!scopes || popped) return [];
    popped = true;
    return [await device.popErrorScope(), await device.popErrorScope()].filter(Boolean);
  };
  try {
    for await (const ev of modelEvents(wasm, source, options, progress, { gpuFormats })) {
      if (signal?.aborted) throw abortError(signal, progress.bytes);
      switch (ev.kind) {
        case 'header':
          headers.push({ shard: ev.shard ?? null, header: ev.header });
          // Every tensor must fit before any byte is read.
          for (const d of ev.plan.outputs) {
            const lay = layout(d.byteLength, maxBufferSize, unitOf(d), split);
            if (!lay) {
              throw makeError({
                code: 'BufferTooLarge', offset: d.source.offset, tensor: d.name, shard: ev.shard ?? null,
                detail: `${roundUp4(d.byteLength)} bytes as ${d.dtype}; maxBufferSize is ${maxBufferSize}`,
              });
            }
            layouts.set(d, lay);
          }
          break;
        case 'tbegin': {
          const w = new GpuTensorWriter(device, ev.d.name, ev.d.byteLength, layouts.get(ev.d), created);
          writers.set(ev.d, ev.d.gpu ? new GpuDecodeWriter(decoder, ev.d, w.buffers, w.pieceBytes, created) : w);
          break;
        }
        case 'tdata':
          if (ev.d.gpu) await decoder.write(writers.get(ev.d), wasm.u8, ev.ptr, ev.size, ev.shard ?? null, ev.role, ev.offset);
          else writers.get(ev.d).write(wasm.u8, ev.ptr, ev.size);
          break;
        case 'tend': {
          const writer = writers.get(ev.d);
          writers.delete(ev.d);
          if (ev.d.gpu) await decoder.finish(writer, ev.shard ?? null);
          else writer.finish();
          const d = ev.d;
          const entry = { dtype: d.dtype, shape: d.shape, byteLength: d.byteLength, quant: d.quant, source: d.source };
          if (writer.buffers.length === 1) entry.buffer = writer.buffers[0];
          else { entry.buffers = writer.buffers; entry.pieceBytes = writer.pieceBytes; }
          if (ev.shard) entry.shard = ev.shard;
          if (d.gpu) entry.decodedOn = 'gpu';
          tensors[d.name] = entry;
          progress.addTensor();
          progress.maybe();
          break;
        }
        case 'done':
          index = ev.index ?? null;
          break;
        case 'warning':
          warnings.push(ev.warning);
          break;
        default:
          break;
      }
    }
    if (decoder) await decoder.close();
    const errors = await popScopes();
    if (errors.length) throw makeError({ code: 'GpuError', offset: null, detail: errors.map((e) => e.message).join('; ') });
    if (signal?.aborted) throw abortError(signal, progress.bytes);
    progress.maybe(true);
    const first = headers[0]?.header;
    const result = {
      format: first?.format ?? 'safetensors',
      tensors,
      metadata: index ? index.metadata : first?.metadata ?? null,
      header: index ? null : first ? publicHeader(first) : null,
      shards: index ? headers.map((h) => ({ file: h.shard, ...publicHeader(h.header) })) : null,
      bytes: progress.bytes,
      warnings,
      // Every buffer made (a name that two files hold, read raw, has an entry for the last only).
      destroy() { for (const b of created) b.destroy(); },
    };
    // Decode on the GPU: the tensors it decoded, the stored bytes it uploaded for them, its dispatches.
    if (decoder) result.gpuDecode = decoder.summary();
    return result;
  } catch (e) {
    for (const b of created) { try { b.destroy(); } catch { /* already gone */ } }
    await popScopes().catch(() => {});
    if (signal?.aborted && !(e instanceof WeightstreamError && e.code === 'Aborted')) throw abortError(signal, progress.bytes);
    throw e;
  }
}
