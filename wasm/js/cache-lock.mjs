// One OPFS cache entry is used by one load at a time, across every context of the origin (the
// page, its workers, other tabs). Without it a preflight on the main thread (createWritable, which
// commits at close) and a load in a worker (sync access handles) could both hold an entry: the one
// that commits last writes metadata that no longer describes the file, and a resumed load then
// trusts too little of it (or, worse, too much).
//
// The Web Locks API (navigator.locks) is the origin-wide mutex browsers give for this: a lock is
// held until the callback's promise settles and is released when its context goes away (a page
// reloaded mid-load frees its worker's entry). Where there is no navigator.locks (Node, with a
// `cacheRoot`), an in-process queue per entry gives the same order within the process.
//
// A waiter gives up after `waitMs` (an entry held longer is another long load's: this load reads
// from the network instead of waiting for it) or when the load's signal aborts.

const PREFIX = 'weightstream-cache:';
const local = new Map();  // key -> the tail of the in-process queue (a promise that settles on release)

export class CacheBusyError extends Error {
  constructor(key, waitMs) {
    super(`the cache entry is in use by another load (waited ${waitMs} ms)`);
    this.name = 'CacheBusyError';
    this.key = key;
  }
}

// Resolves to { release() } once this context holds `key`; rejects with CacheBusyError after
// waitMs, or with the signal's reason when it aborts first.
export function lockEntry(key, { signal = null, waitMs = 5000 } = {}) {
  const locks = globalThis.navigator?.locks;
  return typeof locks?.request === 'function' ? webLock(locks, key, signal, waitMs) : localLock(key, signal, waitMs);
}

function webLock(locks, key, signal, waitMs) {
  return new Promise((resolve, reject) => {
    let release;
    const held = new Promise((r) => { release = r; });
    const giveUp = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; giveUp.abort(); }, waitMs);
    const onAbort = () => giveUp.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); };
    locks.request(PREFIX + key, { mode: 'exclusive', signal: giveUp.signal }, () => {
      settle();
      let released = false;
      resolve({ release() { if (!released) { released = true; release(); } } });
      return held;
    }).catch((e) => {
      settle();
      reject(signal?.aborted ? (signal.reason ?? e) : timedOut ? new CacheBusyError(key, waitMs) : e);
    });
  });
}

function localLock(key, signal, waitMs) {
  const before = local.get(key) ?? Promise.resolve();
  let release;
  const mine = new Promise((r) => { release = r; });
  // The queue's tail is this holder's release, whether or not it waits to the end: a waiter
  // that gives up passes its turn on once the holder before it is done.
  const tail = before.then(() => mine);
  local.set(key, tail);
  tail.then(() => { if (local.get(key) === tail) local.delete(key); });
  let released = false;
  const handle = { release() { if (!released) { released = true; release(); } } };
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => finish(new CacheBusyError(key, waitMs)), waitMs);
    const onAbort = () => finish(signal.reason ?? new DOMException('aborted', 'AbortError'));
    signal?.addEventListener('abort', onAbort, { once: true });
    function finish(err) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) { handle.release(); reject(err); } else resolve(handle);
    }
    if (signal?.aborted) { onAbort(); return; }
    before.then(() => finish(null));
  });
}
