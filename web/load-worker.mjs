// The page's module worker: loads to WebGPU off the main thread with the package's serveLoads()
// (weightstream/worker), on its own device wrapped by the same tracker as the page's (buffers
// counted, the streamed bytes' Adler-32 kept), and answers the page's own messages:
//   {page: 'gpu'}                       -> {name, maxBufferSize} or {error}
//   {page: 'stats'}                     -> {live, created, destroyed, wasm (bytes of wasm memory)}
//   {page: 'hash', on}                  checksum the next loads' bytes (or not)
//   {page: 'read', id, name}            -> a loaded tensor read back: {bytes, pieces, buffers}
//   {page: 'cacheInfo'} / {page: 'evict', url?}   the OPFS cache, as this worker sees it
// Replies carry the request's `seq`.
import { serveLoads } from './dist/worker.mjs';
import { init, cacheInfo, evict } from './dist/weightstream.mjs';
import { setupGpu, readTensor } from './gpu-check.mjs';

const gpu = setupGpu();
let wasm = null;
// At the top level, before any await: no load message may arrive before this listens.
const loads = serveLoads({ device: async () => { const g = await gpu; if (g.error) throw new Error(g.error); return g.tracker.wrap(); } });

self.addEventListener('message', async (ev) => {
  const m = ev.data;
  if (!m || typeof m.page !== 'string') return;
  const reply = (out, transfer = []) => self.postMessage({ page: 'reply', seq: m.seq, ...out }, transfer);
  try {
    const g = await gpu;
    switch (m.page) {
      case 'gpu':
        wasm ??= await init();
        reply(g.error ? { error: g.error } : { name: g.name, maxBufferSize: g.device.limits.maxBufferSize });
        break;
      case 'stats': {
        const t = g.tracker;
        reply({ live: t?.live.size ?? 0, created: t?.created ?? 0, destroyed: t?.destroyed ?? 0, wasm: wasm?.memory?.buffer?.byteLength ?? 0 });
        break;
      }
      case 'hash':
        if (g.tracker) g.tracker.hash = !!m.on;
        reply({});
        break;
      case 'read': {
        const t = loads.models.get(m.id)?.tensors[m.name];
        if (!t) { reply({ error: `no tensor ${m.name} in load ${m.id}` }); break; }
        const r = await readTensor(g.device, g.tracker, t);
        reply(r, [r.bytes.buffer]);
        break;
      }
      case 'cacheInfo':
        reply({ entries: await cacheInfo() });
        break;
      case 'evict':
        reply({ removed: await evict(m.url ?? undefined) });
        break;
      default:
        reply({ error: `unknown request ${m.page}` });
    }
  } catch (e) {
    reply({ error: `${e?.name ?? 'Error'}: ${e?.message ?? e}` });
  }
});
