// Options shared by createReader, loadToWebGPU, validate and inspect.

// The options a load's sources see: the cache's events go to its Progress (so createReader yields
// them as events too). validate() and inspect() have none: the events go to onProgress.
export function withEvents(options, progress) {
  if (options.cache !== undefined && options.cache !== null && options.cache !== false && options.cache !== 'opfs') {
    throw new TypeError(`weightstream: cache must be 'opfs' (or false), not ${JSON.stringify(options.cache)}`);
  }
  if (progress) return { ...options, _events: (ev) => progress.event(ev) };
  const cb = options.onProgress;
  return typeof cb === 'function' ? { ...options, _events: (ev) => cb({ bytes: 0, totalBytes: null, tensors: 0, rate: 0, ...ev }) } : options;
}

// filter: tensor names (array, Set), a RegExp, or a predicate (name, tensor) => boolean.
export function toSelect(filter) {
  if (filter === undefined || filter === null) return null;
  if (typeof filter === 'function') return (t) => !!filter(t.name, t);
  if (filter instanceof RegExp) return (t) => filter.test(t.name);
  if (typeof filter === 'string') return (t) => t.name === filter;
  if (filter instanceof Set || Array.isArray(filter)) {
    const names = filter instanceof Set ? filter : new Set(filter);
    return (t) => names.has(t.name);
  }
  throw new TypeError('weightstream: filter must be an array or Set of tensor names, a RegExp or a function (name, tensor) => boolean');
}

// Progress: bytes read from the source(s), the total when known, tensors completed, and the
// average rate since the start in bytes per second. Reported at most every `interval` ms (and
// always at the end); never after an abort.
export class Progress {
  constructor(onProgress, { interval = 100, signal } = {}) {
    this.cb = onProgress ?? null;
    this.interval = interval;
    this.signal = signal;
    this.bytes = 0;
    this.totalBytes = null;
    this.tensors = 0;
    this.t0 = performance.now();
    this.last = -Infinity;
    this.listeners = [];
  }
  snapshot() {
    const dt = (performance.now() - this.t0) / 1000;
    return { bytes: this.bytes, totalBytes: this.totalBytes, tensors: this.tensors, rate: dt > 0 ? this.bytes / dt : 0 };
  }
  addBytes(n) { this.bytes += n; this.maybe(); }
  // An event beside the reports (the cache's `cache` and `cache-warning`; `retry`: a URL's body
  // resumed after a failure), given to the same callback and listeners at once, with the byte
  // counts so far; never after an abort.
  event(ev) {
    if (this.signal?.aborted) return;
    const e = { ...this.snapshot(), ...ev };
    if (this.cb) this.cb(e);
    for (const l of this.listeners) l(e);
  }
  addTensor() { this.tensors++; }
  setTotal(n) { this.totalBytes = n; }
  maybe(force = false) {
    if (this.signal?.aborted) return null;
    const now = performance.now();
    if (!force && now - this.last < this.interval) return null;
    this.last = now;
    const p = this.snapshot();
    if (this.cb) this.cb(p);
    for (const l of this.listeners) l(p);
    return p;
  }
}
