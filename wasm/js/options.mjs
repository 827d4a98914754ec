// Options shared by createReader, loadToWebGPU, validate and inspect.

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
  addTensor() { this.tensors++; }
  setTotal(n) { this.totalBytes = n; }
  // An event beside the byte counts ({type: 'retry', url, offset, attempt, error}: a URL's body
  // resumed after a failure): handed on at once; never after an abort.
  event(ev) {
    if (this.signal?.aborted) return;
    if (this.cb) this.cb(ev);
    for (const l of this.listeners) l(ev);
  }
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
