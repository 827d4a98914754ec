// Loading to WebGPU off the main thread (`weightstream/worker`). The package runs unchanged in a
// module Web Worker (the .wasm is fetched next to the module, WebGPU is in workers); these two
// functions carry a load across:
//
//   // load-worker.mjs (new Worker(url, { type: 'module' })):
//   import { serveLoads } from 'weightstream/worker';
//   const loads = serveLoads({ device: async () => (await (await navigator.gpu.requestAdapter()).requestDevice()) });
//   // loads.models.get(id): the GpuModel of a finished load (its buffers live in this worker)
//
//   // the page:
//   import { loadInWorker } from 'weightstream/worker';
//   const model = await loadInWorker(worker, 'https://host/model.gguf', { dtype: 'f16', cache: 'opfs', onProgress, signal });
//   model.tensors[name]  // {dtype, shape, byteLength, quant, source, shard, buffers (count)}; model.destroy()
//
// Messages are tagged `ws` ('load', 'abort', 'destroy' in; 'progress', 'done', 'error' out) and
// carry the load's id; a worker may use its own messages beside them. GPU buffers cannot leave the
// worker that made them: the code that uses them runs there too (loads.models).
import { loadToWebGPU } from './webgpu.mjs';
import { WeightstreamError, abortError } from './errors.mjs';
import { portableTables, reviveTables } from './tensor-table.mjs';

let counter = 0;

// ---------- main thread ----------
function isNodeLike() { return typeof process === 'object' && typeof process?.versions?.node === 'string' && typeof window === 'undefined'; }

// What can cross postMessage: URLs as absolute strings (a worker resolves relative URLs against its
// own script), Blobs, bytes, streams (transferred); functions cannot.
function portable(s, transfer, where = 'source') {
  if (typeof s === 'string') {
    if (/^[a-zA-Z][a-zA-Z\d+.-]+:/.test(s) || isNodeLike() || !globalThis.location) return s;
    return new URL(s, globalThis.location.href).href;
  }
  if (s instanceof URL) return s.href;
  if (typeof s === 'function') throw new TypeError(`weightstream: ${where} is a function, which cannot cross to a worker: give a list, a directory URL or the files`);
  if (typeof ReadableStream !== 'undefined' && s instanceof ReadableStream) { transfer.push(s); return s; }
  if (s === null || typeof s !== 'object') return s;
  if (typeof Blob !== 'undefined' && s instanceof Blob) return s;
  if (s instanceof ArrayBuffer || ArrayBuffer.isView(s)) return s;
  if (typeof Response !== 'undefined' && s instanceof Response) throw new TypeError('weightstream: a Response cannot cross to a worker: give its URL or its body (a ReadableStream)');
  if (Array.isArray(s)) return s.map((e, i) => portable(e, transfer, `${where}[${i}]`));
  const out = {};
  for (const [k, v] of Object.entries(s)) out[k] = k === 'sha256' || k === 'name' ? v : portable(v, transfer, `${where}.${k}`);
  return out;
}

function portableOptions(options) {
  const out = {};
  for (const [k, v] of Object.entries(options)) {
    if (k === 'onProgress' || k === 'signal') continue;
    if (typeof v === 'function') throw new TypeError(`weightstream: the option ${k} is a function, which cannot cross to a worker${k === 'filter' ? ': give names, a Set or a RegExp' : ''}`);
    out[k] = v;
  }
  return out;
}

function revive(e) {
  if (!e || typeof e !== 'object') return new Error(String(e));
  if (e.code) {
    const err = new WeightstreamError(e.message, e);
    for (const k of ['expectedSha256', 'actualSha256']) if (k in e) err[k] = e[k];
    return err;
  }
  const C = { TypeError, RangeError }[e.name] ?? Error;
  const err = new C(e.message);
  if (e.name && !(e.name in { TypeError: 1, RangeError: 1 })) err.name = e.name;
  return err;
}

// Loads `source` in `worker` (which called serveLoads()); resolves to the model's description
// (no GPU buffers: they stay in the worker, as loads.models.get(model.id) there). onProgress gets
// the worker's progress reports and cache events; aborting `signal` aborts the load there, and the
// promise rejects (Aborted) once the worker has destroyed what it made.
export function loadInWorker(worker, source, options = {}) {
  if (!worker || typeof worker.postMessage !== 'function') throw new TypeError('weightstream: loadInWorker needs a Worker');
  const { signal, onProgress } = options;
  const transfer = [];
  const msg = { ws: 'load', id: `${Date.now().toString(36)}-${++counter}`, source: portable(source, transfer), options: portableOptions(options) };
  if (signal?.aborted) return Promise.reject(abortError(signal, 0));
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const onAbort = () => worker.postMessage({ ws: 'abort', id: msg.id, reason: String(signal.reason ?? 'aborted') });
    const onMessage = (ev) => {
      const m = ev.data;
      if (!m || m.id !== msg.id || typeof m.ws !== 'string') return;
      if (m.ws === 'progress') {
        bytes = m.event.bytes ?? bytes;
        if (onProgress && !signal?.aborted) onProgress(m.event);
        return;
      }
      worker.removeEventListener('message', onMessage);
      signal?.removeEventListener('abort', onAbort);
      if (m.ws === 'done') {
        resolve({ ...m.model, header: reviveTables(m.model.header), shards: reviveTables(m.model.shards), id: msg.id, destroy() { worker.postMessage({ ws: 'destroy', id: msg.id }); } });
      } else if (signal?.aborted) {
        reject(abortError(signal, bytes));
      } else {
        reject(revive(m.error));
      }
    };
    worker.addEventListener('message', onMessage);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.postMessage(msg, transfer);
  });
}

// ---------- in the worker ----------
function errorOut(e) {
  if (e instanceof WeightstreamError) {
    const o = { name: e.name, message: e.message, code: e.code, offset: e.offset, tensor: e.tensor, shard: e.shard, found: e.found, expected: e.expected, description: e.description, hint: e.hint };
    if ('expectedSha256' in e) { o.expectedSha256 = e.expectedSha256; o.actualSha256 = e.actualSha256; }
    return o;
  }
  return { name: e?.name ?? 'Error', message: e?.message ?? String(e) };
}

function summary(model) {
  const tensors = {};
  for (const [name, t] of Object.entries(model.tensors)) {
    const { buffer, buffers, ...rest } = t;
    tensors[name] = { ...rest, buffers: buffers ? buffers.length : 1 };
  }
  // The header's and shards' tensor lists cross as their bytes (tensor-table.mjs).
  const out = { format: model.format, tensors, metadata: model.metadata, header: portableTables(model.header), shards: portableTables(model.shards), bytes: model.bytes, warnings: model.warnings };
  if (model.gpuDecode) out.gpuDecode = model.gpuDecode;
  return out;
}

// Serves loadInWorker() in this worker: `device` is a GPUDevice or a function giving one (called
// for each load; it may return a wrapper). Call it at the top level of the worker module, before
// any await, so that no message arrives before it listens. Returns { models: Map id -> GpuModel }.
export function serveLoads({ device, scope = globalThis, onLoaded } = {}) {
  if (!device) throw new TypeError('weightstream: serveLoads needs { device }: a GPUDevice or a function returning one');
  const models = new Map();
  const running = new Map();
  const post = (m) => {
    try { scope.postMessage(m); } catch {
      if (m.event?.cause !== undefined) { const { cause, ...event } = m.event; scope.postMessage({ ...m, event: { ...event, cause: String(cause) } }); }
    }
  };
  scope.addEventListener('message', async (ev) => {
    const m = ev.data;
    if (!m || typeof m.ws !== 'string' || m.id === undefined) return;
    if (m.ws === 'abort') { running.get(m.id)?.abort(new DOMException(m.reason ?? 'aborted', 'AbortError')); return; }
    if (m.ws === 'destroy') { models.get(m.id)?.destroy(); models.delete(m.id); return; }
    if (m.ws !== 'load') return;
    const controller = new AbortController();
    running.set(m.id, controller);
    try {
      const dev = typeof device === 'function' ? await device() : device;
      const model = await loadToWebGPU(dev, m.source, {
        ...m.options, signal: controller.signal,
        onProgress: (p) => post({ ws: 'progress', id: m.id, event: p }),
      });
      models.set(m.id, model);
      onLoaded?.(model, m.id);
      post({ ws: 'done', id: m.id, model: summary(model) });
    } catch (e) {
      post({ ws: 'error', id: m.id, error: errorOut(e) });
    } finally {
      running.delete(m.id);
    }
  });
  return { models };
}
