// Parallel, adaptive Range downloads for a URL read forward (issue #31): one file's bytes [a, b)
// fetched by up to N concurrent Range requests and handed on in order, each byte once.
//
// The policy (the pure functions below, tested directly) and the runner that applies it:
//   - start serial (the open `bytes=0-` response when reading from 0); every `measureMs` compare
//     the bytes received per second (all connections) with the last sample: add a connection while
//     it rose by >= 5 % (GAIN), else drop the one just added and stop growing. A sample in which the
//     consumer hardly waited for bytes (under STARVED of the time) stops the growth where it is:
//     the consumer (the loader, the GPU), not the network, sets the pace, and another connection
//     would only cut the open response for nothing. A sample in which the byte budget held a block
//     back says the same once connections run: the last one added is dropped and the count stays.
//     Settled at one connection, the rest of the read is one request. `connections: n` pins
//     the count (1: no runner at all, the serial reader of sources.mjs), `maxConnections` caps the
//     automatic one (4 in browsers, which share six HTTP/1.1 connections per host with the page).
//   - a byte budget: a block [s, e) is requested only when the bytes between what was handed on and
//     the block's end fit in `maxInflightBytes` (that span is all a download can hold: the blocks in
//     flight and those waiting for an earlier one), so memory is bounded whatever the network does.
//   - back-off: HTTP 429 (and 503) halves the count, caps it there for the rest of the read, and
//     holds new requests for the server's Retry-After; a response whose RateLimit header says no
//     requests remain holds new requests until its reset (IETF draft-ietf-httpapi-ratelimit-headers:
//     `RateLimit: "policy";r=0;t=5`, earlier drafts `RateLimit-Remaining` / `RateLimit-Reset` or
//     `RateLimit: limit=.., remaining=.., reset=..`; the Hugging Face Hub sends the draft's form,
//     huggingface/hub-docs docs/hub/rate-limits.md).
//   - each block is requested with If-Range and resumed by UrlSource.body() exactly as a serial read
//     (a file changed between ranges is SourceChanged); a connection that delivers nothing for
//     `stallTimeout` ms is aborted and its block requested again from its next byte (a retry).
//   - Range requests go to the URL the first response came from (after redirects).
//   - the caller's abort, or the consumer leaving, aborts every request at once.
import { abortError } from './errors.mjs';

export const GAIN = 1.05;
export const STARVED = 0.1;
export const BROWSER_MAX = 4;
export const DEFAULT_INFLIGHT = 32 << 20;
export const MIN_BLOCK = 256 << 10;
export const MAX_BLOCK = 8 << 20;
export const DEFAULT_STALL_MS = 30000;
export const DEFAULT_MEASURE_MS = 500;

const isBrowser = () => typeof window === 'object' || (typeof self === 'object' && typeof self.importScripts === 'function');

// ---------- the policy: pure functions ----------

// The caller's options as the policy's settings. pinned: a fixed count or null (adaptive).
export function settings(options = {}, browser = isBrowser()) {
  const c = options.connections ?? 'auto';
  if (c !== 'auto' && !(Number.isInteger(c) && c >= 1)) throw new TypeError(`weightstream: connections must be 'auto' or an integer >= 1, not ${JSON.stringify(c)}`);
  let max = options.maxConnections ?? BROWSER_MAX;
  if (!(Number.isInteger(max) && max >= 1)) throw new TypeError(`weightstream: maxConnections must be an integer >= 1, not ${JSON.stringify(max)}`);
  if (browser) max = Math.min(max, BROWSER_MAX);
  const pinned = c === 'auto' ? null : (browser ? Math.min(c, BROWSER_MAX) : c);
  const inflight = options.maxInflightBytes ?? DEFAULT_INFLIGHT;
  if (!(Number.isFinite(inflight) && inflight >= 2 * MIN_BLOCK)) throw new TypeError(`weightstream: maxInflightBytes must be at least ${2 * MIN_BLOCK}, not ${JSON.stringify(inflight)}`);
  const n = pinned ?? max;
  // Two blocks per connection fit the budget: a connection can start its next block while the
  // consumer takes the one before.
  const block = Math.max(MIN_BLOCK, Math.min(MAX_BLOCK, Math.floor(inflight / (2 * n) / 65536) * 65536));
  return {
    pinned, max: pinned ?? max, maxInflightBytes: inflight, blockSize: block,
    stallMs: options.stallTimeout ?? DEFAULT_STALL_MS, measureMs: options._measureMs ?? DEFAULT_MEASURE_MS,
  };
}

// Whether to read [a, b) by the runner: a pinned 1 never, and a span of under two blocks not worth it.
export function worthParallel(s, a, b) {
  return s.max > 1 && b - a >= 2 * s.blockSize;
}

// The adaptive state: {target, cap, lastRate, settled}.
export function initialState(s) {
  return { target: s.pinned ?? 1, cap: s.max, lastRate: null, settled: s.pinned !== null };
}

// After a sample (bytes per second received at state.target connections; `starved`: the part of
// the sample's time the consumer waited for bytes; `budgetFull`: the budget held a block back):
// the next state.
export function afterSample(state, rate, starved = 1, budgetFull = false) {
  if (state.settled) return state;
  if (budgetFull) return { ...state, target: Math.max(1, state.target - 1), lastRate: rate, settled: true };
  if (starved < STARVED) return { ...state, lastRate: rate, settled: true };
  if (state.lastRate === null || rate >= state.lastRate * GAIN) {
    // The first sample, or the last connection paid: one more, unless at the cap.
    if (state.target >= state.cap) return { ...state, lastRate: rate, settled: true };
    return { ...state, target: state.target + 1, lastRate: rate };
  }
  // It did not: back to the count before, for good.
  return { ...state, target: Math.max(1, state.target - 1), settled: true };
}

// Is another connection worth trying with `remaining` bytes to read at `rate` bytes per second? Only
// when the read lasts long enough for the next sample to judge it and for the gain to count (two
// samples more): a probe near the end costs its cut response and pays nothing.
export function worthProbing(remaining, rate, measureMs) {
  return remaining > rate * (2 * measureMs / 1000);
}

// After the server refused a request for load (429, 503): half the connections, at most that many
// for the rest of this read.
export function afterThrottle(state, running) {
  const n = Math.max(1, Math.floor(Math.max(running, 1) / 2));
  return { ...state, target: Math.min(state.target, n), cap: Math.min(state.cap, n), settled: true };
}

// May a block of `size` bytes ending at `end` start, with `delivered` bytes handed on so far? The
// span between them is what the download holds; one block may always run.
export function fitsBudget(delivered, end, budget, running) {
  return running === 0 || end - delivered <= budget;
}

// The next block from `start` (a read ending at `b`): whole blocks, the remainder joined to the last
// one when it is under half a block.
export function nextBlock(start, b, size) {
  const end = start + size;
  return b - end < size / 2 ? b : end;
}

const num = (v) => (v !== null && v !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : null);

// How long the server asks to wait before the next request, in ms, or null: Retry-After (seconds or
// an HTTP date), else a RateLimit that says no requests remain (its reset in seconds). `get(name)`
// reads a header; `now` in ms since the epoch (for an HTTP date).
export function serverWaitMs(get, now = Date.now()) {
  const ra = get('retry-after');
  if (ra !== null && ra !== undefined) {
    const s = num(ra);
    if (s !== null) return Math.round(s * 1000);
    const t = Date.parse(ra);
    if (!Number.isNaN(t)) return Math.max(0, t - now);
  }
  let remaining = null, reset = null;
  const rl = get('ratelimit');
  if (rl) {
    // Draft 08+: "policy";r=0;t=5 (several policies: any exhausted one counts). Earlier: limit=10, remaining=0, reset=5.
    for (const part of rl.split(',')) {
      const r = /(?:^|[;\s])(?:r|remaining)=(\d+)/.exec(part), t = /(?:^|[;\s])(?:t|reset)=(\d+)/.exec(part);
      if (r && Number(r[1]) === 0) { remaining = 0; reset = Math.max(reset ?? 0, t ? Number(t[1]) : 0); }
      else if (r && remaining === null) remaining = Number(r[1]);
      else if (!r && t && /remaining=0/.test(rl)) reset = Math.max(reset ?? 0, Number(t[1]));
    }
  }
  const rem = num(get('ratelimit-remaining')), rst = num(get('ratelimit-reset'));
  if (rem === 0) { remaining = 0; reset = Math.max(reset ?? 0, rst ?? 0); }
  if (remaining === 0) return Math.round((reset ?? 1) * 1000);
  return null;
}

// ---------- the runner ----------

// The bytes [a, b) of UrlSource `src` in order. `first`: an open response whose body starts at `a`
// (the open request's, read as the first connection), or null. `s`: settings().
export async function* parallelRanges(src, a, b, first, signal, s, events = null) {
  const url = src.resolved ?? src.url.href;
  let state = initialState(s);
  let delivered = a;       // bytes handed on
  let nextStart = a;       // the first byte no block covers
  let running = 0;
  let holdUntil = 0;       // no new request before this (ms, performance.now())
  let wake = null;         // resolves the consumer's wait
  let failed = null;       // the first error of a block, thrown when the consumer reaches it
  let finished = false;
  const segs = [];         // blocks in order, the first holding `delivered`
  const ctrls = new Set();
  const now = () => performance.now();
  const poke = () => { const w = wake; wake = null; w?.(); };
  let received = 0;        // bytes received, all connections
  let waited = 0;          // ms the consumer waited for bytes
  let budgetFull = false;  // the budget held a block back since the sample started
  let sample = null;       // {t, bytes, waited} the current throughput sample started at
  let pendingSince = null; // a decision's time, until the next sample starts
  const say = (ev) => { try { events?.({ url: src.url.href, ...ev }); } catch { /* the caller's */ } };

  const hooks = {
    url,
    onResponse(response) {
      const w = serverWaitMs((h) => response.headers.get(h));
      if (w !== null && response.status !== 429 && response.status !== 503) hold(w, 'ratelimit');
    },
    onThrottle(status, waitMs) {
      state = afterThrottle(state, running);
      hold(waitMs ?? 0, `http ${status}`);
    },
  };
  function hold(ms, why) {
    holdUntil = Math.max(holdUntil, now() + ms);
    say({ type: 'connections', connections: state.target, reason: why, waitMs: ms });
    setTimeout(schedule, ms + 1).unref?.();
  }

  // Reads one block (or the open response) into its segment; ends at seg.end, which an open
  // segment may shorten while it runs.
  async function run(seg) {
    running++;
    let restarts = 0;
    try {
      for (;;) {
        const ctrl = new AbortController();
        ctrls.add(ctrl);
        const it = src.body(seg.response, seg.pos, seg.open ? b : seg.end, ctrl.signal, hooks);
        seg.response = null;
        // The tick aborts ctrl when no byte came for stallMs (a timer per chunk cost ~70 µs a chunk).
        seg.ctrl = ctrl;
        seg.stalled = false;
        seg.lastByte = now();
        try {
          for (;;) {
            const r = await it.next();
            if (r.done) break;
            let c = r.value;
            seg.lastByte = now();
            if (!sample && seg.countsForSample) { sample = { t: now(), bytes: received, waited }; pendingSince = null; }
            restarts = 0;
            if (seg.pos + c.length > seg.end) c = c.subarray(0, seg.end - seg.pos);
            seg.chunks.push(c);
            seg.pos += c.length;
            received += c.length;
            poke();
            if (seg.pos >= seg.end) break;
            // An open segment (serial so far) reads no further ahead than the budget.
            while (seg.open && seg.pos - delivered >= s.maxInflightBytes && !finished) {
              seg.paused = true;
              await new Promise((res) => { seg.resume = res; });
              seg.paused = false;
              seg.lastByte = now();
            }
            if (finished) break;
          }
        } catch (e) {
          if (!(seg.stalled && e?.code === 'Aborted' && !signal?.aborted)) throw e;
        } finally {
          seg.ctrl = null;
          ctrls.delete(ctrl);
          it.return().catch(() => {});
          if (!ctrl.signal.aborted) ctrl.abort();
        }
        if (finished || seg.pos >= seg.end) return;
        if (!seg.stalled) throw new Error(`the body ended at byte ${seg.pos}, before byte ${seg.end}`);
        if (restarts >= src.retries) throw src.stallError(seg.pos, restarts, s.stallMs);
        restarts++;
        src.onRetry?.({ type: 'retry', url: src.url.href, offset: seg.pos, attempt: restarts, error: new Error(`no bytes for ${s.stallMs} ms`) });
      }
    } catch (e) {
      if (!finished) { seg.error = e; failed ??= e; }
    } finally {
      seg.done = true;
      running--;
      poke();
      schedule();
    }
  }

  function schedule() {
    if (finished) return;
    // The open (serial) segment is cut at its next block boundary once a second connection may run.
    const open = segs.find((g) => g.open);
    if (open && state.target > 1) {
      open.open = false;
      open.end = Math.min(b, open.pos + s.blockSize);
      if (b - open.end < s.blockSize / 2) open.end = b;
      nextStart = open.end;
      open.resume?.();
    }
    if (open && open.open) return;
    // Settled at one connection: the rest in one request (an open segment, read within the budget),
    // not block after block with a round trip between them.
    if (state.settled && state.target === 1 && running === 0 && nextStart < b && now() >= holdUntil && !signal?.aborted) {
      const seg = { start: nextStart, end: b, pos: nextStart, chunks: [], open: true, done: false, error: null, response: null, countsForSample: false };
      segs.push(seg);
      nextStart = b;
      run(seg);
      return;
    }
    while (running < state.target && nextStart < b && now() >= holdUntil && !signal?.aborted) {
      const end = nextBlock(nextStart, b, s.blockSize);
      if (!fitsBudget(delivered, end, s.maxInflightBytes, running)) { if (sample) budgetFull = true; break; }
      const seg = { start: nextStart, end, pos: nextStart, chunks: [], open: false, done: false, error: null, response: null, countsForSample: sample === null };
      segs.push(seg);
      nextStart = end;
      run(seg);
    }
  }

  // The adaptation: a sample every measureMs of the bytes handed on.
  const tick = setInterval(() => {
    if (finished) return;
    const t = now();
    for (const g of segs) {
      if (g.ctrl && !g.stalled && !g.paused && t - g.lastByte >= s.stallMs) { g.stalled = true; g.ctrl.abort(new Error('stalled')); }
    }
    if (state.settled) return;
    // A sample starts with a new block's first byte, or measureMs after the decision when none came.
    if (!sample && pendingSince !== null && t - pendingSince >= s.measureMs) { sample = { t, bytes: received, waited }; pendingSince = null; }
    if (!sample) return;
    if (t - sample.t < s.measureMs) return;
    const rate = (received - sample.bytes) / ((t - sample.t) / 1000);
    const starved = (waited - sample.waited) / (t - sample.t);
    const s0 = budgetFull;
    const before = state.target;
    state = worthProbing(b - delivered, rate, s.measureMs) || state.lastRate === null || rate < state.lastRate * GAIN
      ? afterSample(state, rate, starved, budgetFull) : { ...state, lastRate: rate, settled: true };
    budgetFull = false;
    sample = null;  // the next starts with a new connection's first byte
    pendingSince = t;
    for (const g of segs) g.countsForSample = false;
    if (state.target !== before || state.settled) say({ type: 'connections', connections: state.target, reason: state.settled ? 'settled' : 'faster', rate, starved, budgetFull: s0 });
    schedule();
  }, Math.max(10, Math.min(s.measureMs, s.stallMs) / 4));
  tick.unref?.();
  const onAbort = () => { for (const c of ctrls) c.abort(signal.reason); poke(); };
  signal?.addEventListener('abort', onAbort, { once: true });

  try {
    if (first && !state.settled) {
      // The serial phase: the consumer pulls the open response itself, as the serial reader does
      // (nothing between them: an unpaced server or a slow consumer costs nothing), and the time it
      // waits for bytes is measured. When a sample calls for a second connection the response is
      // left (its unread bytes discarded) and blocks start from the next byte.
      const it = src.body(first, a, b, signal);
      first = null;
      try {
        // The first window is not a sample: the connection's and the consumer's start (TCP slow
        // start, the loader's first header work) made it a fraction of the rate that follows.
        let t0 = now(), w0 = 0, n0 = 0, w = 0, n = 0, warm = false;
        for (;;) {
          const t = now();
          const r = await it.next();
          w += now() - t;
          if (r.done) { if (delivered < b) throw new Error(`the body ended at byte ${delivered}, before byte ${b}`); return; }
          n += r.value.length;
          delivered += r.value.length;
          yield r.value;
          const t1 = now();
          if (t1 - t0 >= s.measureMs && !warm) { warm = true; t0 = t1; w0 = w; n0 = n; continue; }
          if (t1 - t0 >= s.measureMs && delivered < b - 2 * s.blockSize) {
            const rate = (n - n0) / ((t1 - t0) / 1000);
            state = worthProbing(b - delivered, rate, s.measureMs) ? afterSample(state, rate, (w - w0) / (t1 - t0)) : { ...state, lastRate: rate, settled: true };
            say({ type: 'connections', connections: state.target, reason: state.settled ? 'settled' : 'faster', rate: (n - n0) / ((t1 - t0) / 1000), starved: (w - w0) / (t1 - t0) });
            if (state.target > 1) break;
            if (state.settled) { yield* { [Symbol.asyncIterator]: () => it }; return; }
            t0 = t1; w0 = w; n0 = n;
          }
        }
      } finally {
        it.return().catch(() => {});
      }
      nextStart = delivered;
      pendingSince = now();
    } else if (first) {
      const seg = { start: a, end: b, pos: a, chunks: [], open: true, done: false, error: null, response: first, countsForSample: true };
      segs.push(seg);
      nextStart = b;
      run(seg);
    }
    schedule();
    while (delivered < b) {
      if (signal?.aborted) throw abortError(signal, delivered);
      const seg = segs[0];
      if (seg && seg.chunks.length) {
        const c = seg.chunks.shift();
        delivered += c.length;
        if (seg.open && seg.pos - delivered < s.maxInflightBytes) { const r = seg.resume; seg.resume = null; r?.(); }
        schedule();
        yield c;
        continue;
      }
      if (seg?.error) throw seg.error;
      if (seg && seg.done && seg.chunks.length === 0) {
        if (delivered < seg.end) throw failed ?? new Error(`bytes ${delivered}-${seg.end - 1} were not read`);
        segs.shift();
        schedule();
        continue;
      }
      if (!seg && nextStart >= b) break;
      const w0 = now();
      await new Promise((r) => { wake = r; if (!seg) setTimeout(r, 5); });
      waited += now() - w0;
    }
  } finally {
    finished = true;
    clearInterval(tick);
    signal?.removeEventListener('abort', onAbort);
    for (const c of ctrls) c.abort(signal?.reason ?? new Error('the read ended'));
    for (const g of segs) g.resume?.();
  }
}
