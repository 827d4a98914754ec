// Compiled (not run) by `npm run typecheck`: the README's uses of the API must type-check.
import { validate, inspect, createReader, loadToWebGPU, plan, cacheInfo, evict, persist, convert, WeightstreamError, type ReaderEvent } from './weightstream.js';

export async function examples(device: GPUDevice, file: File, signal: AbortSignal): Promise<void> {
  const v = await validate('https://example.com/model.safetensors');
  if (!v.valid && v.error) console.log(v.error.code, v.error.offset, v.error.tensor, v.error.message);

  const h = await inspect(file);
  if (!('sharded' in h)) for (const t of h.tensors) console.log(t.name, t.dtype, t.shape, t.dataOffsets);
  const one = h.tensors.get('lm_head.weight');
  if (one) console.log(one.offset, h.tensors.at(-1)?.name, h.tensors.length, h.tensors.filter((t) => t.dtype === 'BF16').length);
  const old = await inspect(file, { plainArrays: true });
  const first: string | undefined = old.tensors[0]?.name;
  console.log(first, Array.from(h.tensors).length);
  if (!('sharded' in h) && h.logical) console.log(h.logical.plan?.seekablePeak, h.logical.weights.map((w) => w.bits));

  const u = await inspect({ uqff: ['model-0.uqff', 'residual.safetensors'] });
  console.log(u.version, u.files.map((f) => f.file), u.logical.weights.map((w) => [w.name, w.mode, w.shape, w.bytes]));
  const uv = await validate({ uqff: [{ name: 'model-0.uqff', source: file }] });
  console.log(uv.valid, uv.version);
  const o = await inspect({ ollama: 'models/manifests/registry.ollama.ai/library/m/latest', blobs: (f: string) => `https://host/blobs/${f}` });
  console.log(o.convention, o.logical.weights.length);
  const files: File[] = [file];
  const s = await inspect({ index: file, shards: files }, { quantization: { group_size: 64, bits: 4 } });
  console.log(s.shards.map((sh) => sh.file), s.logical?.weights.length);
  const sv = await validate({ index: new Uint8Array(0), shards: (name: string) => (name === 'a.safetensors' ? file : null) });
  if (!sv.valid && sv.error?.code === 'ShardNotGiven') console.log(sv.error.shard);

  // convert(): to a directory the user picked (File System Access), or a sink per file.
  const dir = { getFileHandle: async (_name: string, _o: { create: true }) => ({ createWritable: async () => new WritableStream<Uint8Array>() }) };
  const conv = await convert('https://host/repo/model.safetensors.index.json', { to: 'bf16', output: dir, maxShardSize: '5GB', keep: ['F32'], signal,
    onProgress: (p) => console.log(p.bytes, p.totalBytes) });
  console.log(conv.files.map((f) => [f.name, f.size]), conv.from, conv.skipped.length);
  await convert(file, { output: (name) => new WritableStream<Uint8Array>({ write: (chunk) => console.log(name, chunk.byteLength) }), filter: /^model\./, to: 'f16' });

  const reader = createReader({ dtype: 'f16', filter: ['lm_head.weight'], signal });
  for await (const ev of reader.read(await fetch('/model.gguf'))) {
    const e: ReaderEvent = ev;
    if (e.type === 'tensorData') console.log(e.tensor.name, e.offset, e.data.byteLength);
    if (e.type === 'progress') console.log(e.bytes, e.totalBytes, e.rate);
    if (e.type === 'retry') console.log(e.offset, e.attempt, e.error);
  }

  const cached = await loadToWebGPU(device, 'https://host/model.gguf', {
    dtype: 'f16', cache: 'opfs',
    onProgress: (p) => { if (p.type === 'cache-warning') console.warn(p.code, p.message); else if (p.type === 'cache') console.log(p.state, p.cachedBytes); else console.log(p.bytes); },
  });
  cached.destroy();
  for (const e of await cacheInfo()) console.log(e.url, e.size, e.bytesCached, e.complete, e.etag, e.lastUsed);
  const removed: number = await evict('https://host/model.gguf');
  console.log(removed, await evict());
  await validate('https://host/model.gguf', { cache: 'opfs', onProgress: (e) => console.log(e.type) });
  for await (const ev of createReader({ cache: 'opfs' }).read('https://host/model.gguf')) if (ev.type === 'cache') console.log(ev.state);
  const p = await plan('https://host/model.gguf', { device, dtype: 'f16', budget: 2 ** 31, filter: /^blk\.0\./ });
  if (!p.fits) console.log(p.needsSplit, p.overBindingSize, p.gpuBytes, p.downloadBytes, p.fitsBudget);
  for (const t of p.tensors) console.log(t.name, t.byteLength, t.buffers, t.gpuBytes, t.needsSplit);
  const c = await plan('https://host/model.gguf', { device, dtype: 'f16', cache: 'opfs' });
  for (const w of c.warnings) console.log(w.code, w.message, w.fix, c.storage?.cacheWrite, c.storage?.available);
  const kept = await persist();
  if (!kept.persisted) console.log(kept.outcome, kept.message);
  await plan({ uqff: ['model-0.uqff'] }, { limits: { maxBufferSize: 1 << 30, maxStorageBufferBindingSize: 1 << 27 }, dtype: 'f32', split: true });

  try {
    const model = await loadToWebGPU(device, 'model.safetensors.index.json', {
      dtype: 'f32', split: true, signal, retries: 5, retryDelay: 500,
      onProgress: (p) => (p.type === 'retry' ? console.log(p.url, p.offset, p.attempt) : console.log(p.tensors)),
      quantization: { group_size: 64, bits: 4 },
    });
    const t = model.tensors['model.embed_tokens.weight'];
    const buffers: GPUBuffer[] = t.buffers ?? (t.buffer ? [t.buffer] : []);
    console.log(buffers.length, t.dtype, t.shape, t.byteLength, t.quant?.format);
    model.destroy();
  } catch (e) {
    if (e instanceof WeightstreamError) console.log(e.code, e.offset, e.tensor, e.found, e.hint, e.retries);
  }
}

import { loadInWorker, serveLoads } from './worker.js';

export async function workerExamples(worker: Worker, device: GPUDevice, signal: AbortSignal): Promise<void> {
  const m = await loadInWorker(worker, 'model.gguf', { dtype: 'f16', cache: 'opfs', filter: /^blk\.0\./, signal, onProgress: (p) => console.log(p.bytes, p.type) });
  console.log(m.id, m.format, Object.values(m.tensors).map((t) => [t.dtype, t.shape, t.buffers]));
  m.destroy();
  const loads = serveLoads({ device: async () => device });
  console.log(loads.models.get(m.id)?.tensors);
}
