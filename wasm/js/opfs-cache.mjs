// The persistent cache (`cache: 'opfs'`): a URL's bytes kept in the Origin Private File System as
// they stream, so that a later load reads them from there and an interrupted download resumes
// where it stopped. A wrapper around a URL source (sources.mjs's UrlSource, which does every
// network read): it serves each range the loader asks for from the cache where the entry covers
// it and from the network for the rest, writing what the network sends at its offsets.
//
// Storage: <root>/weightstream-cache/<key>.bin (the file's bytes at their offsets; holes where
// nothing was read) and <key>.json ({url, size, etag, lastModified, sha256, extents: [[a, b), ...]
// merged, complete, lastUsed}). Metadata never claims bytes that are not written: it is written
// after the data. In a worker, files are written through createSyncAccessHandle (kept as written;
// the metadata is flushed every few MiB and when a read stops or fails); on the main thread through
// createWritable, which commits when the load ends (a page closed mid-load keeps the last commit).
//
// An entry is used when the server still has the same file: one request for byte 0 (ETag and
// size equal; without an ETag, Last-Modified and size), or no request at all for a complete entry
// whose recorded SHA-256 is one the caller gave (`sha256`). Anything else makes a fresh entry.
// Write failures (QuotaExceededError first) turn the cache off for that load with a
// `cache-warning` event; the load goes on from the network.
import { ioError } from './errors.mjs';
import { lockEntry, CacheBusyError } from './cache-lock.mjs';

export const CACHE_DIR = 'weightstream-cache';
const PIECE = 1 << 20;                 // bytes read from the cache per chunk
const META_EVERY_BYTES = 4 << 20;      // a worker's metadata flush, at most every 4 MiB written
const META_EVERY_MS = 250;             // ... or 250 ms

const LOCK_WAIT_MS = 5000;             // how long a load waits for another load's use of its entry
// This context's entries being closed (their writes recorded), awaited by cacheInfo() and evict().
const closing = new Set();

// ---------- extents: sorted, merged, half-open [a, b) ----------
export function addExtent(extents, a, b) {
  if (b <= a) return extents;
  const out = [];
  let i = 0;
  while (i < extents.length && extents[i][1] < a) out.push(extents[i++]);
  let lo = a, hi = b;
  while (i < extents.length && extents[i][0] <= hi) { lo = Math.min(lo, extents[i][0]); hi = Math.max(hi, extents[i][1]); i++; }
  out.push([lo, hi]);
  while (i < extents.length) out.push(extents[i++]);
  return out;
}
export const coveredBytes = (extents) => extents.reduce((s, [a, b]) => s + (b - a), 0);
// [a, b) cut into pieces, each in the cache (true) or not.
export function segments(extents, a, b) {
  const out = [];
  let pos = a;
  for (const [x, y] of extents) {
    if (y <= pos) continue;
    if (x >= b) break;
    if (x > pos) { out.push([pos, x, false]); pos = x; }
    const e = Math.min(y, b);
    out.push([pos, e, true]);
    pos = e;
    if (pos >= b) break;
  }
  if (pos < b) out.push([pos, b, false]);
  return out;
}

// ---------- the storage root ----------
function emit(options, ev) {
  const f = options._events;
  if (typeof f === 'function') { try { f(ev); } catch { /* a callback's failure is not the cache's */ } }
}
const warn = (options, url, code, message, cause) => emit(options, { type: 'cache-warning', url, code, message, ...(cause ? { cause } : {}) });

// The cache's directory, or null (no OPFS here: Node without cacheRoot, a browser without it).
async function cacheDir(options, create = true) {
  let root = options.cacheRoot ?? null;
  if (!root) {
    const storage = globalThis.navigator?.storage;
    if (typeof storage?.getDirectory !== 'function') return null;
    root = await storage.getDirectory();
  }
  try {
    return await root.getDirectoryHandle(CACHE_DIR, { create });
  } catch (e) {
    if (!create && e?.name === 'NotFoundError') return undefined;
    throw e;
  }
}

async function keyOf(href) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(href)));
  return [...d.subarray(0, 16)].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// The entry's metadata; null when there is none (or it is not ours: half-written by a page closed
// mid-write, another version); undefined when it cannot be read now (a handle another context has
// not yet released): the entry is then left alone, never taken for absent and overwritten.
async function readMeta(dir, key) {
  let text;
  try {
    const fh = await dir.getFileHandle(`${key}.json`);
    text = await (await fh.getFile()).text();
  } catch (e) {
    return e?.name === 'NotFoundError' || e?.name === 'TypeMismatchError' ? null : undefined;
  }
  try {
    const m = JSON.parse(text);
    return m && m.version === 1 && typeof m.url === 'string' && Array.isArray(m.extents) ? m : null;
  } catch {
    return null;
  }
}

async function writeMetaAsync(dir, key, meta) {
  const fh = await dir.getFileHandle(`${key}.json`, { create: true });
  const w = await fh.createWritable();
  await w.write(JSON.stringify(meta));
  await w.close();
}

async function removeEntry(dir, key) {
  for (const f of [`${key}.json`, `${key}.bin`]) {
    try { await dir.removeEntry(f); } catch { /* not there */ }
  }
}

// ---------- one entry, open for a load ----------
// mode 'sync' (a worker: FileSystemSyncAccessHandle) or 'async' (createWritable, committed at close).
class Entry {
  constructor(dir, key, meta) {
    this.dir = dir;
    this.key = key;
    this.meta = meta;
    this.committed = meta.extents;  // what reads may use
    this.extents = meta.extents;    // committed + written in this load
    this.mode = null;
    this.data = null;               // sync handle, or the data FileSystemFileHandle
    this.metaHandle = null;
    this.writable = null;
    this.file = null;               // async mode: the committed File, for reads
    this.unflushed = 0;
    this.flushedAt = 0;
    this.closed = false;
  }

  async open() {
    const fh = await this.dir.getFileHandle(`${this.key}.bin`, { create: true });
    if (typeof fh.createSyncAccessHandle === 'function') {
      try {
        // A page reloaded mid-load: its worker's handles are released a moment after it is gone.
        for (let attempt = 0; ; attempt++) {
          try { this.data = await fh.createSyncAccessHandle(); break; } catch (e) {
            if (e?.name !== 'NoModificationAllowedError' || attempt >= 4) throw e;
            await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
          }
        }
        const mh = await this.dir.getFileHandle(`${this.key}.json`, { create: true });
        this.metaHandle = await mh.createSyncAccessHandle();
        this.mode = 'sync';
      } catch (e) {
        try { this.data?.close(); } catch { /* closed */ }
        this.data = null;
        // Another load holds the entry (sync handles are exclusive): not this load's to use.
        if (e?.name === 'NoModificationAllowedError') throw e;
        // The main thread has no sync handles (InvalidStateError / NotSupportedError, or absent).
      }
    }
    if (!this.mode) {
      this.mode = 'async';
      this.data = fh;
    }
    this.meta.lastUsed = Date.now();
    await this.flushMeta(true);
  }

  // What reads may use: in a worker every byte written (it is in the file), else what was committed.
  get readable() { return this.mode === 'sync' ? this.extents : this.committed; }

  async read(a, b) {
    if (this.mode === 'sync') {
      const buf = new Uint8Array(b - a);
      const n = this.data.read(buf, { at: a });
      if (n !== buf.length) throw new Error(`the cache file holds ${n} of ${buf.length} bytes at ${a}`);
      return buf;
    }
    this.file ??= await this.data.getFile();
    const buf = new Uint8Array(await this.file.slice(a, b).arrayBuffer());
    if (buf.length !== b - a) throw new Error(`the cache file holds ${buf.length} of ${b - a} bytes at ${a}`);
    return buf;
  }

  async write(pos, bytes) {
    if (this.mode === 'sync') {
      const n = this.data.write(bytes, { at: pos });
      if (n !== bytes.length) throw new DOMException(`wrote ${n} of ${bytes.length} bytes`, 'QuotaExceededError');
    } else {
      this.writable ??= await this.data.createWritable({ keepExistingData: true });
      await this.writable.write({ type: 'write', position: pos, data: bytes });
    }
    this.extents = addExtent(this.extents, pos, pos + bytes.length);
    this.unflushed += bytes.length;
    if (this.mode === 'sync' && (this.unflushed >= META_EVERY_BYTES || performance.now() - this.flushedAt >= META_EVERY_MS)) await this.flushMeta();
  }

  // Sync mode: the metadata as of now (data first, then metadata). Async mode: only at commit.
  async flushMeta(force = false) {
    const meta = this.meta;
    meta.extents = this.mode === 'sync' ? this.extents : this.committed;
    meta.complete = meta.size !== null && coveredBytes(meta.extents) === meta.size && (meta.extents[0]?.[0] ?? 0) === 0;
    if (this.mode === 'sync') {
      if (!force && this.unflushed === 0) return;
      this.data.flush();
      // Written over the old text, then cut to length: a write that fails (quota) leaves the old
      // metadata, which still describes bytes that are in the file.
      const bytes = new TextEncoder().encode(JSON.stringify(meta));
      const n = this.metaHandle.write(bytes, { at: 0 });
      if (n !== bytes.length) throw new DOMException(`wrote ${n} of ${bytes.length} bytes of metadata`, 'QuotaExceededError');
      this.metaHandle.truncate(bytes.length);
      this.metaHandle.flush();
    } else if (force) {
      await writeMetaAsync(this.dir, this.key, meta);
    }
    this.unflushed = 0;
    this.flushedAt = performance.now();
  }

  // Ends the entry's use by this load: what was written is recorded. Never throws.
  async close() {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.mode === 'sync') {
        await this.flushMeta();
      } else if (this.writable) {
        const w = this.writable;
        this.writable = null;
        await w.close();
        this.committed = this.extents;
        await this.flushMeta(true);
      }
    } catch { /* the cache is a cache: the entry keeps its last recorded state */ }
    if (this.mode === 'sync') {
      try { this.data.close(); } catch { /* closed */ }
      try { this.metaHandle.close(); } catch { /* closed */ }
    }
  }

  // Writes stop for this load (quota): async mode drops the uncommitted writes.
  async stopWriting() {
    if (this.mode === 'async' && this.writable) {
      const w = this.writable;
      this.writable = null;
      this.extents = this.committed;
      try { await w.abort(); } catch { /* gone */ }
    }
  }
}

// ---------- the source ----------
export function cachedUrlSource(url, options, makeInner) {
  if (options.cache !== 'opfs') throw new TypeError(`weightstream: cache must be 'opfs' (or false), not ${JSON.stringify(options.cache)}`);
  return new CachedUrlSource(url, options, makeInner);
}

const headerOf = (r, h) => r.headers.get(h) ?? null;

class CachedUrlSource {
  constructor(url, options, makeInner) {
    this.url = url;
    this.href = url.href.replace(/#.*$/, '');
    this.name = url.href;
    this.options = options;
    this.realFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.inner = makeInner({ ...options, fetch: (u, init) => this.fetchHook(u, init) });
    this.size = null;
    this.seekable = false;
    this.sha256 = null;
    this.entry = null;         // an open Entry while the cache is on for this load
    this.validator = null;     // {etag, lastModified} of the file this load reads
    this.fromCache = 0;        // bytes served from the cache in this load
    this.innerOpened = false;
    this.usedFirst = false;    // the open request's body was handed on
  }

  // Every response of the URL source passes here: the file must stay the one the entry holds.
  async fetchHook(u, init) {
    const r = await this.realFetch(u, init);
    if (r.status === 200 || r.status === 206) {
      const v = { etag: headerOf(r, 'etag'), lastModified: headerOf(r, 'last-modified') };
      if (!this.validator) this.validator = v;
      else if ((v.etag && this.validator.etag && v.etag !== this.validator.etag)) {
        r.body?.cancel?.().catch?.(() => {});
        const entry = this.entry;
        this.entry = null;
        if (entry) { await entry.stopWriting(); await entry.close(); await removeEntry(entry.dir, entry.key); }
        this.unlock();
        throw ioError(`${this.href} changed on the server while it was read (ETag ${this.validator.etag} -> ${v.etag})${this.fromCache ? '; parts of it came from the cache, which is discarded' : ''}`, 0);
      }
    }
    return r;
  }

  async open(signal) {
    let dir = null;
    try {
      dir = await cacheDir(this.options);
    } catch (e) {
      warn(this.options, this.href, 'CacheUnavailable', `the cache cannot be opened (${e?.name ?? 'Error'}: ${e?.message ?? e}); reading from the network`, e);
    }
    if (dir === null) {
      warn(this.options, this.href, 'CacheUnavailable', 'no Origin Private File System here (navigator.storage.getDirectory; in Node pass cacheRoot); reading from the network');
      return this.openInner(signal);
    }
    const key = await keyOf(this.href);
    // The entry is this load's alone from here until close() has recorded what it wrote
    // (cache-lock.mjs): a preflight and a load, or two tabs, never interleave their commits.
    try {
      this.lock = await lockEntry(key, { signal, waitMs: this.options.cacheWaitMs ?? LOCK_WAIT_MS });
    } catch (e) {
      if (!(e instanceof CacheBusyError)) throw e;
      return this.openOff(signal, 'CacheBusy', `another load is using this cache entry (${e.message}); reading from the network`, e);
    }
    try {
      await this.openLocked(dir, key, signal);
    } catch (e) {
      this.unlock();
      throw e;
    }
    if (!this.entry) this.unlock();
  }

  // The entry cannot be used by this load: the network for all of it, the entry as it was.
  async openOff(signal, code, message, cause) {
    warn(this.options, this.href, code, message, cause);
    if (!this.innerOpened) await this.openInner(signal);
    emit(this.options, { type: 'cache', url: this.href, state: 'off', size: this.size, cachedBytes: 0 });
  }

  async openLocked(dir, key, signal) {
    let meta = await readMeta(dir, key);
    if (meta === undefined) return this.openOff(signal, 'CacheBusy', 'the cache entry cannot be read now (another context still holds it); reading from the network');
    if (meta && meta.url !== this.href) meta = null;
    let state = 'miss';
    if (meta) {
      const usable = await this.stillValid(meta, signal);
      // The server could not be asked (a network failure): nothing says the entry is stale, so it
      // is kept for a later load; this one goes to the network, which reports its own failure.
      if (usable === null) return this.openOff(signal, 'CacheUnverified', 'the server could not be asked whether the cached file is current; reading from the network');
      if (usable) {
        state = meta.complete ? 'hit' : 'partial';
        this.size = meta.size;
        this.seekable = true;
        this.sha256 = meta.sha256 ?? this.sha256;
      } else {
        state = 'stale';
        await removeEntry(dir, key);
        meta = null;
      }
    }
    if (!meta) {
      await this.openInner(signal);
      meta = {
        version: 1, url: this.href, size: this.size, etag: this.validator?.etag ?? null, lastModified: this.validator?.lastModified ?? null,
        sha256: this.sha256 ?? this.givenDigest(), extents: [], complete: false, created: Date.now(), lastUsed: Date.now(),
      };
    }
    try {
      const entry = new Entry(dir, key, meta);
      await entry.open();
      this.entry = entry;
    } catch (e) {
      const busy = e?.name === 'NoModificationAllowedError';
      warn(this.options, this.href, busy ? 'CacheBusy' : quota(e) ? 'QuotaExceeded' : 'CacheUnavailable',
        busy ? 'another load is using this cache entry; reading from the network' : `the cache entry cannot be opened (${e?.name ?? 'Error'}: ${e?.message ?? e}); reading from the network`, e);
      if (state === 'hit' || state === 'partial') {
        // Nothing may come from an entry this load cannot hold: the network for all of it.
        if (!this.innerOpened) await this.openInner(signal);
      }
      state = 'off';
    }
    emit(this.options, { type: 'cache', url: this.href, state, size: this.size, cachedBytes: this.entry ? coveredBytes(this.entry.committed) : 0 });
  }

  unlock() {
    const lock = this.lock;
    this.lock = null;
    lock?.release();
  }

  async openInner(signal) {
    this.innerOpened = true;
    await this.inner.open(signal);
    this.size = this.inner.size;
    this.seekable = this.inner.seekable;
    this.sha256 = this.inner.sha256 ?? null;
  }

  givenDigest() {
    const s = this.options.sha256;
    if (typeof s === 'object' && s !== null) return s[this.url.pathname.split('/').pop()] ?? null;
    return null;
  }

  // Is the server's file still the entry's? No request when the caller names the complete entry's
  // digest; else one request for byte 0: ETag and size (or Last-Modified and size) must match.
  // null: the request failed, so it cannot be told.
  async stillValid(meta, signal) {
    const given = typeof this.options.sha256 === 'string' ? [this.options.sha256]
      : this.options.sha256 && typeof this.options.sha256 === 'object' ? Object.values(this.options.sha256) : [];
    if (meta.complete && meta.sha256 && given.some((d) => typeof d === 'string' && d.toLowerCase() === meta.sha256)) return true;
    let r;
    try {
      r = await this.realFetch(this.href, { headers: { ...(this.options.headers ?? {}), Range: 'bytes=0-0' }, signal });
    } catch (e) {
      if (signal?.aborted) throw e;
      return null;  // not asked: neither current nor stale
    }
    r.body?.cancel?.().catch?.(() => {});
    if (r.status !== 206 && r.status !== 200) return false;
    const etag = headerOf(r, 'etag'), lastModified = headerOf(r, 'last-modified');
    let size = null;
    if (r.status === 206) {
      const m = /^bytes\s+\d+-\d+\/(\d+)$/i.exec(headerOf(r, 'content-range') ?? '');
      size = m ? Number(m[1]) : null;
    } else {
      const len = headerOf(r, 'content-length');
      size = len !== null && /^\d+$/.test(len) ? Number(len) : null;
    }
    const same = size === meta.size && (etag ? etag === meta.etag : !meta.etag && !!lastModified && lastModified === meta.lastModified);
    if (!same) return false;
    this.validator = { etag, lastModified };
    // The inner source reads the missing ranges as if it had opened the file itself (If-Range with
    // these validators, parallel connections); a 200 says nothing of ranges.
    if (r.status === 206) this.inner.adopt?.(r, size);
    // A server without ranges cannot fill a partial entry's holes.
    return r.status === 206 || meta.complete;
  }

  // From byte 0: the open request's body when nothing is cached (its first use), else by range.
  chunks(signal) {
    const fresh = this.innerOpened && !this.usedFirst && (!this.entry || this.entry.readable.length === 0);
    if (fresh || !this.seekable || this.size === null) {
      if (this.usedFirst) throw ioError(`${this.href}: the source cannot be read twice`, 0);
      this.usedFirst = true;
      return this.through(this.inner.chunks(signal), 0);
    }
    return this.range(0, this.size, signal);
  }

  async* range(a, b, signal) {
    if (b <= a) return;
    const entry = this.entry;
    const pieces = entry ? segments(entry.readable, a, b) : [[a, b, false]];
    for (const [x, y, cached] of pieces) {
      if (cached && this.entry) {
        for (let pos = x; pos < y;) {
          const e = Math.min(y, pos + PIECE);
          let buf = null;
          try {
            buf = await this.entry.read(pos, e);
          } catch (err) {
            await this.disable('CacheReadFailed', `reading the cache failed (${err?.name ?? 'Error'}: ${err?.message ?? err}); reading from the network`, err);
          }
          if (!buf) { yield* this.fromNetwork(pos, y, signal); break; }
          this.fromCache += buf.length;
          pos = e;
          yield buf;
        }
      } else {
        yield* this.fromNetwork(x, y, signal);
      }
    }
  }

  async* fromNetwork(a, b, signal) {
    if (!this.innerOpened && !this.seekable) throw ioError(`${this.href}: the cache cannot serve bytes ${a}-${b - 1} and the server has no ranges`, a);
    yield* this.through(this.inner.range(a, b, signal), a);
  }

  // Network bytes on their way to the loader, written to the entry at their offsets first.
  async* through(it, start) {
    let pos = start;
    try {
      for await (const c of it) {
        if (this.entry) {
          try {
            await this.entry.write(pos, c);
          } catch (e) {
            await this.disable(quota(e) ? 'QuotaExceeded' : 'CacheWriteFailed',
              `${quota(e) ? 'the storage quota is exhausted' : `writing the cache failed (${e?.name ?? 'Error'}: ${e?.message ?? e})`}; the cache is off for the rest of this load`, e);
          }
        }
        pos += c.length;
        yield c;
      }
    } finally {
      // A read that stops (the loader jumps, the connection fails) records what was written.
      if (this.entry?.mode === 'sync') { try { await this.entry.flushMeta(); } catch { /* best effort */ } }
    }
  }

  async disable(code, message, cause) {
    const entry = this.entry;
    this.entry = null;
    warn(this.options, this.href, code, message, cause);
    if (entry) { await entry.stopWriting(); await entry.close(); }
    this.unlock();
  }

  close() {
    this.inner.close();
    const entry = this.entry;
    this.entry = null;
    // The lock is released once what this load wrote is recorded: the next load of the entry
    // (in any context) waits for that, not only for this call.
    const lock = this.lock;
    this.lock = null;
    if (entry) {
      const p = entry.close().finally(() => { lock?.release(); closing.delete(p); });
      closing.add(p);
    } else {
      lock?.release();
    }
  }
}

const quota = (e) => e?.name === 'QuotaExceededError' || e?.code === 22;

// ---------- the public functions ----------
// Every entry: {url, size, bytesCached, extents ([start, end) held), complete, etag, lastModified,
// sha256, lastUsed (ms since the epoch)}, most recently used first. [] when there is no cache.
export async function cacheInfo(options = {}) {
  const dir = await cacheDir(options, false).catch(() => null);
  if (!dir) return [];
  await Promise.all([...closing]);
  const out = [];
  for await (const [name] of dir.entries()) {
    if (!name.endsWith('.json')) continue;
    const m = await readMeta(dir, name.slice(0, -5));
    if (!m) continue;
    out.push({ url: m.url, size: m.size, bytesCached: coveredBytes(m.extents), extents: m.extents.map(([a, b]) => [a, b]), complete: !!m.complete, etag: m.etag ?? null,
      lastModified: m.lastModified ?? null, sha256: m.sha256 ?? null, lastUsed: m.lastUsed ?? null });
  }
  return out.sort((x, y) => (y.lastUsed ?? 0) - (x.lastUsed ?? 0));
}

// Removes the entry of `url` (string or URL; relative to the page), or every entry; resolves to
// the number of entries removed.
export async function evict(url, options = {}) {
  if (url !== null && typeof url === 'object' && !(url instanceof URL)) { options = url; url = undefined; }
  const dir = await cacheDir(options, false).catch(() => null);
  if (!dir) return 0;
  await Promise.all([...closing]);
  if (url === undefined || url === null) {
    const names = [];
    for await (const [name] of dir.entries()) names.push(name);
    let n = 0;
    for (const name of names) {
      if (name.endsWith('.json')) n++;
      try { await dir.removeEntry(name); } catch { /* gone */ }
    }
    return n;
  }
  const href = (url instanceof URL ? url : new URL(String(url), globalThis.location?.href)).href.replace(/#.*$/, '');
  const key = await keyOf(href);
  const had = (await readMeta(dir, key)) !== null;
  await removeEntry(dir, key);
  return had ? 1 : 0;
}
