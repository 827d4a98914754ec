// createReader(): a model as an async iterator of events.
//
//   const reader = createReader({ dtype: 'f32', filter: ['lm_head.weight'], signal });
//   for await (const ev of reader.read(source)) {
//     ev.type: 'header' | 'tensorBegin' | 'tensorData' | 'tensorEnd' | 'warning' | 'progress' | 'retry' | 'end'
//   }
//
// tensorData's `data` is a view of wasm memory, valid until the loop asks for the next event:
// use it (upload it, hash it, copy it with data.slice()) before then.
import { init } from './module.mjs';
import { modelEvents } from './model.mjs';
import { Progress } from './options.mjs';
import { publicHeader } from './validate.mjs';

export function publicTensor(d) {
  return { name: d.name, index: d.index, dtype: d.dtype, shape: d.shape, elements: d.elements, byteLength: d.byteLength, quant: d.quant, source: d.source };
}

export function createReader(options = {}) {
  return {
    read(source) { return readEvents(source, options); },
    [Symbol.asyncIterator]() {
      if (options.source === undefined) throw new TypeError('weightstream: pass a source to read(source), or createReader({ source })');
      return readEvents(options.source, options)[Symbol.asyncIterator]();
    },
  };
}

async function* readEvents(source, options) {
  const wasm = await init(options);
  const pending = [];
  const progress = new Progress(options.onProgress, { interval: options.progressInterval ?? 100, signal: options.signal });
  progress.listeners.push((p) => pending.push(p.type ? p : { type: 'progress', ...p }));
  let holding = false;
  try {
    for await (const ev of modelEvents(wasm, source, options, progress)) {
      if (holding) { wasm.releaseView(); holding = false; }
      while (pending.length) yield pending.shift();
      switch (ev.kind) {
        case 'header':
          yield { type: 'header', shard: ev.shard ?? null, ...publicHeader(ev.header), outputs: ev.plan.outputs.map(publicTensor) };
          break;
        case 'tbegin':
          yield { type: 'tensorBegin', shard: ev.shard ?? null, tensor: publicTensor(ev.d) };
          break;
        case 'tdata':
          // The view stays valid while the caller holds it: allocations wait (module.mjs).
          wasm.holdView();
          holding = true;
          yield { type: 'tensorData', shard: ev.shard ?? null, tensor: publicTensor(ev.d), offset: ev.offset, data: wasm.bytes(ev.ptr, ev.size) };
          break;
        case 'tend':
          progress.addTensor();
          yield { type: 'tensorEnd', shard: ev.shard ?? null, tensor: publicTensor(ev.d) };
          break;
        case 'warning':  // the library's (host.mjs publicWarning): {type, code, file, offset, tensor, weight, count, message}
          yield { type: 'warning', ...ev.warning };
          break;
        case 'done': {
          const p = progress.maybe(true);
          if (p) yield { type: 'progress', ...p };
          yield { type: 'end', validated: ev.validated, index: ev.index ?? null };
          break;
        }
        default:
          break;
      }
    }
  } finally {
    if (holding) wasm.releaseView();
  }
}
