// The GPU side of the page, shared by the main thread and the page's worker (load-worker.mjs): the
// device, a tracker that wraps it for loadToWebGPU, and the read-back of a tensor's buffers with
// the checksums the per-tensor check compares.
// ---------------- Adler-32 ----------------
export function adlerUpdate(s, u8, start, end) {
  let a = s.a;
  let b = s.b;
  let i = start;
  while (i < end) {
    const n = Math.min(end, i + 5552);
    for (; i < n; i++) { a += u8[i]; b += a; }
    a %= 65521;
    b %= 65521;
  }
  s.a = a;
  s.b = b;
}
export const adlerValue = (s) => ((s.b << 16) | s.a) >>> 0;
export function adlerOf(u8) { const s = { a: 1, b: 0 }; adlerUpdate(s, u8, 0, u8.length); return adlerValue(s); }

// ---------------- the GPU device, with a tracker ----------------
// loadToWebGPU gets a thin wrapper of the real device: it counts the buffers created and destroyed
// and keeps, per buffer, the Adler-32 of the bytes written into it (the streamed bytes), which the
// per-tensor check compares with the bytes read back from the GPU.
export class Tracker {
  constructor(device) {
    this.device = device;
    this.live = new Set();
    this.info = new Map();
    this.hash = true;
    this.created = 0;
    this.destroyed = 0;
  }
  wrap() {
    const dev = this.device;
    const t = this;
    return {
      limits: dev.limits,
      features: dev.features,
      queue: {
        writeBuffer(buffer, offset, data, dataOffset = 0, size) {
          const info = t.info.get(buffer);
          if (info && t.hash) {
            const u8 = data instanceof Uint8Array ? data : new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength);
            const n = size ?? u8.length - dataOffset;
            if (offset !== info.next) info.inOrder = false;
            adlerUpdate(info.adler, u8, dataOffset, dataOffset + n);
            info.next = offset + n;
          }
          dev.queue.writeBuffer(buffer, offset, data, dataOffset, size);
        },
        submit: (b) => dev.queue.submit(b),
        onSubmittedWorkDone: () => dev.queue.onSubmittedWorkDone(),
      },
      createBuffer(desc) {
        const b = dev.createBuffer(desc);
        t.created++;
        t.live.add(b);
        t.info.set(b, { label: desc.label, size: desc.size, adler: { a: 1, b: 0 }, next: 0, inOrder: true, hashed: t.hash });
        const destroy = b.destroy.bind(b);
        b.destroy = () => { if (t.live.delete(b)) t.destroyed++; t.info.delete(b); destroy(); };
        return b;
      },
      pushErrorScope: (f) => dev.pushErrorScope(f),
      // The decode pass (decode: 'gpu'): its shaders, pipelines and passes go to the real device.
      createShaderModule: (d) => dev.createShaderModule(d),
      createComputePipeline: (d) => dev.createComputePipeline(d),
      createBindGroup: (d) => dev.createBindGroup(d),
      createCommandEncoder: (d) => dev.createCommandEncoder(d),
      popErrorScope: () => dev.popErrorScope(),
    };
  }
}

export async function setupGpu() {
  if (!navigator.gpu) return { error: 'WebGPU is not available in this browser (navigator.gpu is missing).' };
  try {
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) return { error: 'No WebGPU adapter.' };
    const device = await adapter.requestDevice({
      requiredLimits: { maxBufferSize: adapter.limits.maxBufferSize, maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize },
    });
    const info = adapter.info ?? {};
    const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') || 'adapter';
    return { adapter, device, name, tracker: new Tracker(device) };
  } catch (e) {
    return { error: `WebGPU device request failed: ${e.message}` };
  }
}

export async function readBuffer(device, buf) {
  const size = buf.size;
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buf, 0, staging, 0, size);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Uint8Array(staging.getMappedRange().slice(0));
    staging.unmap();
    return out;
  } finally {
    staging.destroy();
  }
}

// A tensor's bytes read back from the GPU ({buffer} or {buffers}) and, per buffer, the Adler-32 of
// what was read and of what was streamed into it (when the tracker hashed it).
export async function readTensor(device, tracker, t) {
  const bufs = t.buffers ?? [t.buffer];
  const bytes = new Uint8Array(t.byteLength);
  const pieces = [];
  let at = 0;
  for (const b of bufs) {
    const got = await readBuffer(device, b);
    const info = tracker.info.get(b);
    pieces.push({ size: got.length, gpu: adlerOf(got), streamed: info?.hashed ? adlerValue(info.adler) : null, inOrder: info?.inOrder ?? null });
    const n = Math.min(got.length, t.byteLength - at);
    bytes.set(got.subarray(0, n), at);
    at += n;
  }
  return { bytes, pieces, buffers: bufs.length };
}
