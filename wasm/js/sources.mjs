// Byte sources: everything a model can come from, behind one small interface.
//
//   source.name       for messages (URL or file name), or null
//   source.size       total bytes when known (Blob, file, Content-Length), else null
//   source.seekable   true when byte ranges can be read (bytes, Blob, file, HTTP server with Range)
//   source.open()     makes the first request (URLs); before size/seekable are final
//   source.chunks()   async iterator over the bytes from 0, in the pieces they arrive in
//   source.range(a,b) async iterator over bytes [a, b) (seekable sources)
//   source.close()    releases what is open
//
// Chunks are handed on without copying; they belong to the consumer, which copies them into wasm
// memory (FORMATS §7: a BYOB reader cannot read into wasm memory).
import { ioError, abortError, makeError } from './errors.mjs';
import { cachedUrlSource } from './opfs-cache.mjs';
import { settings as parallelSettings, worthParallel, parallelRanges, serverWaitMs } from './parallel-ranges.mjs';

const FILE_PIECE = 1 << 20;  // pieces read from a local file in Node

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';
}

// Rejects as soon as the signal aborts, so that a stalled network read does not delay the abort.
export function raceAbort(promise, signal, offset) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, offset));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, offset));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); });
  });
}

// A chunk as bytes: a Uint8Array as it is, another view or an ArrayBuffer over the same memory.
const asBytes = (v) => (v instanceof Uint8Array ? v : new Uint8Array(v.buffer ?? v, v.byteOffset ?? 0, v.byteLength));

// Reads a ReadableStream as an async iterator; cancelling it on return()/abort releases the body.
async function* readStream(stream, signal, startOffset = 0) {
  const reader = stream.getReader();
  let pos = startOffset;
  try {
    for (;;) {
      let r;
      try {
        r = await raceAbort(reader.read(), signal, pos);
      } catch (e) {
        if (e?.code === 'Aborted') throw e;
        throw ioError(`reading the stream failed: ${e?.message ?? e}`, pos, e);
      }
      if (r.done) return;
      const chunk = asBytes(r.value);
      pos += chunk.length;
      if (chunk.length) yield chunk;
    }
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock?.();
  }
}

class BytesSource {
  constructor(bytes, name = null) { this.bytes = bytes; this.name = name; this.size = bytes.length; this.seekable = true; }
  async open() {}
  async* chunks() { if (this.bytes.length) yield this.bytes; }
  async* range(a, b) { if (b > a) yield this.bytes.subarray(a, b); }
  close() {}
}

// Blobs and Files are read in 1 MiB slices (blob.stream() may hand over the whole blob at once).
class BlobSource {
  constructor(blob) { this.blob = blob; this.name = blob.name ?? null; this.size = blob.size; this.seekable = true; }
  async open() {}
  chunks(signal) { return this.range(0, this.size, signal); }
  async* range(a, b, signal) {
    for (let pos = a; pos < b;) {
      const end = Math.min(b, pos + FILE_PIECE);
      let buf;
      try {
        buf = await raceAbort(this.blob.slice(pos, end).arrayBuffer(), signal, pos);
      } catch (e) {
        if (e?.code === 'Aborted') throw e;
        throw ioError(`reading the file failed: ${e?.message ?? e}`, pos, e);
      }
      if (buf.byteLength === 0) return;
      pos += buf.byteLength;
      yield new Uint8Array(buf);
    }
  }
  close() {}
}

class StreamSource {
  constructor(stream, size = null, name = null) { this.stream = stream; this.name = name; this.size = size; this.seekable = false; }
  async open() {}
  chunks(signal) { return readStream(this.stream, signal); }
  close() { this.stream.cancel?.().catch?.(() => {}); }
}

class IterableSource {
  constructor(iterable, size = null, name = null) { this.iterable = iterable; this.name = name; this.size = size; this.seekable = false; }
  async open() {}
  async* chunks(signal) {
    const it = this.iterable[Symbol.asyncIterator]();
    let pos = 0;
    try {
      for (;;) {
        const r = await raceAbort(it.next(), signal, pos);
        if (r.done) return;
        const chunk = asBytes(r.value);
        pos += chunk.length;
        if (chunk.length) yield chunk;
      }
    } finally {
      it.return?.().catch?.(() => {});
    }
  }
  close() {}
}

// Content-Length is the body's size only when the body is not content-encoded (fetch decodes it).
function bodySize(response) {
  const enc = response.headers.get('content-encoding');
  if (enc && enc !== 'identity') return null;
  const len = response.headers.get('content-length');
  return len !== null && /^\d+$/.test(len) ? Number(len) : null;
}

function httpError(response, url, offset) {
  return ioError(`HTTP ${response.status}${response.statusText ? ' ' + response.statusText : ''} for ${url}`, offset, undefined);
}

class ResponseSource {
  constructor(response, name = null) {
    this.response = response;
    this.name = name ?? (response.url || null);
    this.size = bodySize(response);
    this.seekable = false;
    this.sha256 = sha256OfResponse(response);
  }
  async open() {
    if (!this.response.ok) throw httpError(this.response, this.name ?? 'the response', 0);
    if (!this.response.body) throw ioError('the response has no body', 0);
  }
  chunks(signal) { return readStream(this.response.body, signal); }
  close() { this.response.body?.cancel?.().catch?.(() => {}); }
}

// An HTTP(S) URL. The first request asks for `bytes=0-`: a server that supports ranges answers
// 206 with the total size in Content-Range, and the source becomes seekable at no extra cost; one
// that does not answers 200 with the whole file.
//
// Resume: a body read that fails mid-way (a network error, a reset, a body that ends before its
// Content-Length / Content-Range end) is requested again from the next unread byte with
// `Range: bytes=<pos>-` (`-<b-1>` for a range read) and `If-Range` (the first response's strong
// ETag, else its Last-Modified), and the bytes continue from exactly there: the consumer sees no
// gap and no repeat. Up to `retries` (3) attempts per failure (the count starts again once bytes
// arrive), `retryDelay` (250 ms) doubled after each; each is announced as
// {type: 'retry', url, offset, attempt, error} to `onRetry`. A server that ignores Range on the
// resume (200) is ResumeUnsupported; a file that changed (If-Range failed: 200 with another
// validator; or another ETag / total size on a 206) is SourceChanged — never mixed bytes. An
// abort ends every wait at once. A content-encoded body (whose bytes are not the file's) and
// rangeRequests: false are not resumed.
//
// Parallel: a read of a seekable file (from the open response, or a range) of at least two blocks
// goes through parallel-ranges.mjs (adaptive Range connections, a byte budget, back-off), unless
// `connections: 1`; every block is requested and resumed as above, at the URL after redirects.
const RETRYABLE_STATUS = new Set([408, 429, 502, 503, 504]);

// Waits `ms`, or rejects at once when the signal aborts.
function sleep(ms, signal, offset) {
  if (signal?.aborted) return Promise.reject(abortError(signal, offset));
  return new Promise((resolve, reject) => {
    const onAbort = () => { clearTimeout(t); reject(abortError(signal, offset)); };
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const strongEtag = (v) => (v && !/^W\//.test(v) ? v : null);

class UrlSource {
  constructor(url, options = {}) {
    this.url = url;
    this.name = url.href;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.headers = options.headers ?? {};
    this.useRanges = options.rangeRequests !== false;
    this.retries = Math.max(0, Math.floor(options.retries ?? 3));
    this.retryDelay = Math.max(0, options.retryDelay ?? 250);
    this.onRetry = [options._events, options.onRetry, options.onProgress].find((f) => typeof f === 'function') ?? null;
    this.size = null;
    this.seekable = false;
    this.first = null;
    this.etag = null;          // the first response's validators
    this.lastModified = null;
    this.resumable = false;
    this.resolved = null;      // the URL the first response came from, after redirects
    this.parallel = parallelSettings(options);
  }
  async open(signal) {
    const headers = { ...this.headers };
    if (this.useRanges) headers.Range = 'bytes=0-';
    let response = await this.send(headers, 0, signal, `cannot fetch ${this.url.href}`);
    if (response.status === 206) {
      const m = /^bytes\s+(\d+)-(\d+)\/(\d+)$/i.exec(response.headers.get('content-range') ?? '');
      if (m && Number(m[1]) === 0) {
        this.size = Number(m[3]);
        this.seekable = true;
      }
    } else if (response.status === 416) {
      // An empty file: no byte 0 to start the range at. Fetch it plainly.
      response.body?.cancel?.().catch?.(() => {});
      response = await this.send({ ...this.headers }, 0, signal, `cannot fetch ${this.url.href}`);
    }
    if (!response.ok) throw httpError(response, this.url.href, 0);
    if (this.size === null) this.size = bodySize(response);
    this.sha256 = sha256OfResponse(response);
    this.etag = response.headers.get('etag');
    this.lastModified = response.headers.get('last-modified');
    const enc = response.headers.get('content-encoding');
    this.resumable = this.useRanges && (!enc || enc === 'identity');
    this.first = response;
    if (response.url && response.url !== this.url.href) this.resolved = response.url;
  }
  // The file as another request of the same load established it (the OPFS cache's 1-byte check:
  // a 206 whose Content-Range gave `size`), instead of an open request of its own: ranges are then
  // read with its validators (If-Range), at its URL after redirects, and in parallel, as after open().
  adopt(response, size) {
    this.size = size;
    this.seekable = true;
    this.etag = response.headers.get('etag');
    this.lastModified = response.headers.get('last-modified');
    const enc = response.headers.get('content-encoding');
    this.resumable = this.useRanges && (!enc || enc === 'identity');
    if (response.url && response.url !== this.url.href) this.resolved = response.url;
  }
  parallelOk(a, b) {
    return this.resumable && this.seekable && this.size !== null && worthParallel(this.parallel, a, b);
  }
  chunks(signal) {
    const r = this.first;
    this.first = null;
    if (r && this.parallelOk(0, this.size)) return parallelRanges(this, 0, this.size, r, signal, this.parallel, this.onRetry);
    return this.body(r, 0, this.size, signal);
  }
  async* range(a, b, signal) {
    if (b <= a) return;
    // The sequential body is no longer needed once ranges are read.
    if (this.first) { this.first.body?.cancel?.().catch?.(() => {}); this.first = null; }
    const what = `bytes ${a}-${b - 1} of ${this.url.href}`;
    const response = await this.send({ ...this.headers, Range: `bytes=${a}-${b - 1}` }, a, signal, `cannot fetch ${what}`, this.resolved ?? this.url.href);
    if (response.status !== 206) {
      response.body?.cancel?.().catch?.(() => {});
      throw ioError(`the server answered HTTP ${response.status} to a range request for ${what}`, a);
    }
    this.checkPartial(response, a, b, false);
    // Its response is the parallel download's serial start, as the open response is for chunks().
    if (this.parallelOk(a, b)) yield* parallelRanges(this, a, b, response, signal, this.parallel, this.onRetry);
    else yield* this.body(response, a, b, signal);
  }
  close() { this.first?.body?.cancel?.().catch?.(() => {}); this.first = null; }

  // One request; a fetch that rejects (the network) is IoError `what`.
  async send(headers, offset, signal, what, url = this.url.href) {
    try {
      return await raceAbort(this.fetch(url, { headers, signal }), signal, offset);
    } catch (e) {
      if (e?.code === 'Aborted') throw e;
      throw ioError(`${what}: ${e?.message ?? e}`, offset, e);
    }
  }

  // A file that is not the one the first response described: SourceChanged.
  changed(offset, what) {
    return makeError({ code: 'SourceChanged', offset, detail: `${this.url.href} at byte ${offset}: ${what}; its bytes would not continue the ones read` });
  }

  // A 206's Content-Range must start at `a` (end at b - 1 when b is known) and name the first
  // response's total size, and its ETag must be the first one's.
  checkPartial(response, a, b, resuming) {
    const cr = response.headers.get('content-range') ?? '';
    const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(cr);
    const fail = (e) => { response.body?.cancel?.().catch?.(() => {}); throw e; };
    const etag = response.headers.get('etag');
    if (this.etag && etag && etag.replace(/^W\//, '') !== this.etag.replace(/^W\//, '')) {
      fail(this.changed(a, `the server now sends ETag ${etag}, not ${this.etag}`));
    }
    if (m && m[3] !== '*' && this.size !== null && Number(m[3]) !== this.size) {
      fail(this.changed(a, `the file is now ${m[3]} bytes, not ${this.size}`));
    }
    if (!m || Number(m[1]) !== a || (b !== null && Number(m[2]) !== b - 1)) {
      const want = b !== null ? `bytes ${a}-${b - 1}` : `bytes ${a}-`;
      fail(ioError(`the server sent ${cr || 'no Content-Range'} for ${want} of ${this.url.href}${resuming ? ' (resuming)' : ''}`, a));
    }
  }

  // A parallel block's connection that delivered nothing `restarts + 1` times for `ms`.
  stallError(pos, restarts, ms) {
    const err = ioError(`reading ${this.url.href} stalled at byte ${pos}: no bytes for ${ms} ms (${restarts} ${restarts === 1 ? 'retry' : 'retries'} stalled too)`, pos);
    err.retries = restarts;
    return err;
  }

  // The request that continues a body at `pos` (up to b, exclusive, when known); null when the
  // attempt failed in a way worth retrying (its error in `out.error`, and in `out.waitMs` how long
  // the server asked to wait). `hooks` (parallel-ranges.mjs): {url, onResponse, onThrottle}.
  async resumeRequest(pos, b, signal, out, hooks = null) {
    const headers = { ...this.headers, Range: `bytes=${pos}-${b !== null ? b - 1 : ''}` };
    const validator = strongEtag(this.etag) ?? this.lastModified;
    if (validator) headers['If-Range'] = validator;
    let response;
    try {
      response = await this.send(headers, pos, signal, `cannot fetch ${this.url.href} from byte ${pos}`, hooks?.url);
    } catch (e) {
      if (e?.code === 'Aborted') throw e;
      out.error = e;
      return null;
    }
    hooks?.onResponse?.(response);
    if (response.status === 206) {
      this.checkPartial(response, pos, b, true);
      return response;
    }
    response.body?.cancel?.().catch?.(() => {});
    if (response.status === 200) {
      const etag = response.headers.get('etag'), lm = response.headers.get('last-modified');
      const len = bodySize(response);
      if (this.etag && etag && etag !== this.etag) throw this.changed(pos, `If-Range failed: the server sent the whole file again with ETag ${etag}, not ${this.etag}`);
      if (!this.etag && this.lastModified && lm && lm !== this.lastModified) throw this.changed(pos, `If-Range failed: the server sent the whole file again, last modified ${lm}, not ${this.lastModified}`);
      if (this.size !== null && len !== null && len !== this.size) throw this.changed(pos, `the server sent the whole file again, now ${len} bytes, not ${this.size}`);
      throw makeError({ code: 'ResumeUnsupported', offset: pos, detail: `${this.url.href} at byte ${pos}: the server answered HTTP 200 (the whole file) to Range: bytes=${pos}-${validator ? ` with If-Range: ${validator}` : ''}, so the download cannot continue from there` });
    }
    if (response.status === 416) throw this.changed(pos, `the server answered HTTP 416 to Range: bytes=${pos}- (the file is shorter now)`);
    if (RETRYABLE_STATUS.has(response.status)) {
      out.waitMs = serverWaitMs((h) => response.headers.get(h));
      if (response.status === 429 || response.status === 503) hooks?.onThrottle?.(response.status, out.waitMs);
      out.error = httpError(response, this.url.href, pos);
      return null;
    }
    throw ioError(`the server answered HTTP ${response.status} to the request that resumes ${this.url.href} at byte ${pos}`, pos);
  }

  // The bytes of `response` from `a` (up to b, exclusive, when known), resumed after failures.
  // response null: its first request is made here (a parallel block, with `hooks`).
  async* body(response, a, b, signal, hooks = null) {
    let pos = a, attempt = 0, failure = null, waitMs = null;
    if (response === null) {
      const out = {};
      response = await this.resumeRequest(pos, b, signal, out, hooks);
      if (!response) { failure = out.error; waitMs = out.waitMs ?? null; }
    }
    for (;;) {
      if (response) {
        // readStream ends at the body's end and throws IoError (its cause the network's error)
        // when a read fails; either way before b is a failure to resume from.
        failure = null;
        try {
          for await (const chunk of readStream(response.body, signal, pos)) {
            pos += chunk.length;
            attempt = 0;  // bytes arrived: a later failure has its retries again
            yield chunk;
          }
          if (b !== null && pos < b) failure = new Error(`the body ended at byte ${pos}, before byte ${b}`);
        } catch (e) {
          if (e?.code === 'Aborted') throw e;
          failure = e?.cause ?? e;
        }
        if (!failure) return;
      }
      // Resume, after a pause that doubles with each attempt.
      if (!this.resumable || attempt >= this.retries) {
        const why = failure?.message ?? String(failure);
        const err = this.resumable
          ? ioError(`reading ${this.url.href} failed at byte ${pos} (${attempt} ${attempt === 1 ? 'retry' : 'retries'} to resume it failed too): ${why}`, pos, failure)
          : ioError(`reading ${this.url.href} failed at byte ${pos}: ${why}`, pos, failure);
        err.retries = attempt;
        throw err;
      }
      attempt++;
      if (this.onRetry && !signal?.aborted) this.onRetry({ type: 'retry', url: this.url.href, offset: pos, attempt, error: failure });
      // The server's Retry-After / RateLimit reset when it gave one and it is longer.
      await sleep(Math.max(this.retryDelay * 2 ** (attempt - 1), waitMs ?? 0), signal, pos);
      const out = {};
      response = await this.resumeRequest(pos, b, signal, out, hooks);
      waitMs = null;
      if (!response) { failure = out.error; waitMs = out.waitMs ?? null; }
    }
  }
}

// The SHA-256 a response states for its file, or null: Hugging Face's X-Linked-Etag (an LFS
// file's digest, on resolve URLs), else an ETag that is 64 hex digits (the LFS CDN's).
function sha256OfResponse(response) {
  for (const h of ['x-linked-etag', 'etag']) {
    const v = (response.headers.get(h) ?? '').replace(/^W\//, '').replace(/"/g, '').trim();
    if (/^[0-9a-f]{64}$/i.test(v)) return v.toLowerCase();
  }
  return null;
}

// A local file (Node): file: URLs and plain paths. Seekable; read in 1 MiB pieces.
class FileSource {
  constructor(url) { this.url = url; this.name = null; this.size = null; this.seekable = true; this.fh = null; }
  async open() {
    const fs = await import('node:fs/promises');
    const { fileURLToPath } = await import('node:url');
    this.name = fileURLToPath(this.url);
    try {
      this.fh = await fs.open(this.url, 'r');
      this.size = (await this.fh.stat()).size;
    } catch (e) {
      throw ioError(`cannot open ${this.name}: ${e.message}`, 0, e);
    }
  }
  chunks(signal) { return this.range(0, this.size, signal); }
  async* range(a, b, signal) {
    let pos = a;
    while (pos < b) {
      const buf = new Uint8Array(Math.min(FILE_PIECE, b - pos));
      let r;
      try {
        r = await raceAbort(this.fh.read(buf, 0, buf.length, pos), signal, pos);
      } catch (e) {
        if (e?.code === 'Aborted') throw e;
        throw ioError(`cannot read ${this.name}: ${e.message}`, pos, e);
      }
      if (r.bytesRead === 0) return;  // the file shrank; the reader reports the truncation
      pos += r.bytesRead;
      yield r.bytesRead === buf.length ? buf : buf.subarray(0, r.bytesRead);
    }
  }
  close() { this.fh?.close().catch(() => {}); this.fh = null; }
}

// "https://…", "file:///…", "data:…", and (in Node) plain paths; relative URLs in browsers.
export async function toUrl(s) {
  if (s instanceof URL) return s;
  if (/^[a-zA-Z][a-zA-Z\d+.-]+:/.test(s)) return new URL(s);
  if (isNode()) {
    const { pathToFileURL } = await import('node:url');
    return pathToFileURL(s);
  }
  return new URL(s, globalThis.location?.href);
}

export function isIndexUrl(url) {
  return url.pathname.endsWith('.index.json');
}

// Turns what the caller passed into a byte source.
export async function toSource(source, options = {}) {
  if (typeof source === 'string' || source instanceof URL) {
    const url = await toUrl(source);
    if (url.protocol === 'file:' && isNode()) return new FileSource(url);
    // cache: 'opfs' keeps http(s) files in the Origin Private File System (opfs-cache.mjs).
    if (options.cache && /^https?:$/.test(url.protocol)) return cachedUrlSource(url, options, (o) => new UrlSource(url, o));
    return new UrlSource(url, options);
  }
  if (typeof Response !== 'undefined' && source instanceof Response) return new ResponseSource(source);
  if (typeof Blob !== 'undefined' && source instanceof Blob) return new BlobSource(source);
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) return new StreamSource(source, options.size ?? null);
  if (source instanceof ArrayBuffer) return new BytesSource(new Uint8Array(source));
  if (ArrayBuffer.isView(source)) return new BytesSource(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  if (source && typeof source[Symbol.asyncIterator] === 'function') return new IterableSource(source, options.size ?? null);
  throw new TypeError('weightstream: source must be a URL, a path (Node), a Response, a Blob or File, a ReadableStream, an ArrayBuffer or typed array, or an async iterable of bytes');
}

// Every byte of an (unopened) source, in one buffer: for inputs that must be read out of order or
// twice (an index, a manifest, a stream in a multi-file model).
export async function readAll(src, signal, opened = false) {
  if (!opened) await src.open(signal);
  const parts = [];
  let n = 0;
  for await (const c of src.chunks(signal)) { parts.push(c); n += c.length; }
  src.close();
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return all;
}
