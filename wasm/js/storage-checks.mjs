// What plan() checks of the page's environment beside the model: the origin's free storage against
// the bytes a cached load would write, whether that storage is persistent, and the `shader-f16`
// feature that f16 engines need; each failed check is a warning with a suggested fix. And
// persist(): asks the browser to keep the origin's storage, and says what came of it.
//
// Storage: navigator.storage (StorageManager: estimate(), persisted(), persist()), or the `storage`
// option (any object with those methods: tests, or a page's own wrapper). Without one (Node, an
// insecure context) nothing is checked and plan().storage is null.
import { cacheInfo } from './opfs-cache.mjs';

const storageOf = (options) => options.storage ?? globalThis.navigator?.storage ?? null;
const MB = (n) => `${(n / 1e6).toFixed(n < 1e7 ? 2 : 0)} MB`;

// persist({ storage }) → { persisted, outcome, message }; outcome: 'already' (persisted before),
// 'granted', 'denied' (the browser declined: Chrome decides by its engagement heuristics, Firefox
// asks the user), 'unsupported' (no StorageManager.persist here), 'error' (it threw). Never throws.
export async function persist(options = {}) {
  const storage = storageOf(options);
  if (!storage || typeof storage.persist !== 'function') {
    return { persisted: false, outcome: 'unsupported', message: 'navigator.storage.persist() is not available here (a browser in a secure context has it): the cache may be evicted under storage pressure' };
  }
  try {
    if (typeof storage.persisted === 'function' && await storage.persisted()) {
      return { persisted: true, outcome: 'already', message: 'the origin\'s storage is persistent already: the browser evicts it only when the user clears it' };
    }
    if (await storage.persist()) {
      return { persisted: true, outcome: 'granted', message: 'the browser made the origin\'s storage persistent: the cache is evicted only when the user clears it' };
    }
    return {
      persisted: false, outcome: 'denied',
      message: 'the browser declined to make the storage persistent (Chrome grants it to sites the user engages with, e.g. installed or bookmarked; Firefox asks the user): the cache may be evicted under storage pressure, and Safari removes site data unused for 7 days',
    };
  } catch (e) {
    return { persisted: false, outcome: 'error', message: `navigator.storage.persist() failed: ${e?.name ?? 'Error'}: ${e?.message ?? e}` };
  }
}

// The storage part of a plan: { quota, usage, available, cacheWrite, cached, persisted } (null
// without a StorageManager, or when the load is not cached), and its warnings.
// `urls`: the model's files read over HTTP(S) (href, size); `readBytes`: what the load reads.
export async function storageCheck(options, urls, readBytes) {
  const warnings = [];
  if (options.cache !== 'opfs' || urls.length === 0) return { storage: null, warnings };
  const storage = storageOf(options);
  if (!storage || typeof storage.estimate !== 'function') return { storage: null, warnings };
  // What the cache holds of these URLs already (a load writes only the bytes it lacks).
  const entries = new Map((await cacheInfo(options).catch(() => [])).map((e) => [e.url, e]));
  let cached = 0;
  for (const u of urls) cached += Math.min(entries.get(u.href)?.bytesCached ?? 0, u.size ?? Infinity);
  // The bytes the load reads that the cache does not hold yet: exact for a whole model (every
  // byte read), an upper bound's estimate for a filtered one.
  const cacheWrite = Math.max(0, readBytes - cached);
  let estimate = null;
  try { estimate = await storage.estimate(); } catch { /* treated as unknown */ }
  let persisted = null;
  try { persisted = typeof storage.persisted === 'function' ? await storage.persisted() : null; } catch { /* unknown */ }
  const quota = Number.isFinite(estimate?.quota) ? estimate.quota : null;
  const usage = Number.isFinite(estimate?.usage) ? estimate.usage : null;
  const available = quota === null ? null : Math.max(0, quota - (usage ?? 0));
  if (available !== null && cacheWrite > available) {
    warnings.push({
      code: 'StorageQuota',
      message: `the cache would write ${MB(cacheWrite)} but the origin has ${MB(available)} of storage left (quota ${MB(quota)}, used ${MB(usage ?? 0)}): the load would turn the cache off part-way (QuotaExceeded)`,
      fix: 'load a smaller quantization, load without the cache (cache: false), or free storage (evict() removes cached models)',
    });
  }
  if (persisted === false) {
    warnings.push({
      code: 'StorageNotPersisted',
      message: 'the origin\'s storage is not persistent: the browser may evict the cached model under storage pressure (Safari: after 7 days without use)',
      fix: 'call persist() (navigator.storage.persist()) before the load, and tell the user if it is declined',
    });
  }
  return { storage: { quota, usage, available, cacheWrite, cached, persisted }, warnings };
}

// The device part: an f16 plan on a device without `shader-f16` (WGSL's `enable f16;`).
export function deviceCheck(options, dtype) {
  const warnings = [];
  const features = options.device?.features;
  if (dtype === 'f16' && features && typeof features.has === 'function' && !features.has('shader-f16')) {
    const adapterHas = options.adapter?.features?.has?.('shader-f16');
    warnings.push({
      code: 'NoShaderF16',
      message: `the device lacks the shader-f16 feature: WGSL shaders cannot read the f16 buffers (enable f16;)${adapterHas === true ? ', though its adapter has it' : adapterHas === false ? ', and its adapter does not have it' : ''}`,
      fix: adapterHas === false
        ? "load dtype 'f32' (twice the GPU bytes of f16), or convert in the shader from u32 words"
        : "request the device with requiredFeatures: ['shader-f16'] (when adapter.features.has('shader-f16')), or load dtype 'f32' (twice the GPU bytes)",
    });
  }
  return warnings;
}

// The files of a planned model that a cached load would keep: those read over HTTP(S).
export function cachedUrls(files) {
  const out = [];
  for (const f of files) {
    const src = f.feed?.src;
    const href = src?.href ?? src?.url?.href ?? null;
    if (href && /^https?:/.test(href)) out.push({ href: href.replace(/#.*$/, ''), size: f.size ?? null });
  }
  return out;
}
