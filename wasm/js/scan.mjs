// One file through the reader: bytes in (in bounded pieces), header and tensor events out.
//
// scanFile() is an async generator of internal events:
//   { kind: 'header', header }                       the validated header (header.mjs)
//   { kind: 'begin', index } / { kind: 'end', index } a selected tensor starts / is complete
//   { kind: 'bytes', index, ptr, size, offset }      `size` bytes of tensor `index` at wasm address
//                                                    `ptr`, `offset` bytes into the tensor; valid
//                                                    until the generator is resumed
//   { kind: 'done', validated }                      'full' (the reader saw every byte and reached
//                                                    End) or 'header' (a range plan skipped data)
// and throws a WeightstreamError on any rejection, I/O failure or abort.
//
// Each chunk of the source is copied into the session's input buffer in pieces of at most
// `chunkSize` bytes (HEAPU8.set, then feed): the reader never sees memory outside wasm, and memory
// does not grow while bytes flow. Until HeaderReady the pieces fed are remembered (references, not
// copies), so that an ArenaExhausted verdict can be answered by one retry with the arena size the
// reader measured — even for a stream, which cannot be read twice.
import { Session, EventType as E } from './session.mjs';
import { GgufKvCollector } from './gguf-kv.mjs';
import { buildHeader, ggmlType } from './header.mjs';
import { makeError, abortError, ioError, inShard } from './errors.mjs';

export const DEFAULT_ARENA = 1 << 20;
export const DEFAULT_CHUNK = 1 << 20;

const roundUp8 = (n) => Math.ceil(n / 8) * 8;

async function createSession(wasm, o, arenaSize) {
  await wasm.whenIdle();  // allocation may grow memory: not while a caller holds a view
  const s = new Session(wasm, { arenaSize, inputSize: o.chunkSize ?? DEFAULT_CHUNK, limits: o.limits });
  return s;
}

// The facts behind a reader error, turned into a WeightstreamError.
function readerError(wasm, session, info, ctx) {
  const err = info.error;
  const f = {
    code: err.code,
    offset: err.offset,
    tensor: err.tensor,
    shard: ctx.shard ?? null,
    found: err.found,
    expected: err.expected,
    prefix: ctx.prefix,
    inputSize: ctx.size ?? ctx.fed,
    inputSizeExact: ctx.size !== null && ctx.size !== undefined,
    dataEnd: info.dataStart ? info.dataStart + info.dataSize : null,
    declaredHeader: info.format === 'safetensors' ? info.headerSizeBig : null,
    arenaSize: info.arenaSize,
    arenaNeeded: info.arenaNeeded,
    alignment: info.ggufAlignment,
  };
  if (f.tensor === null && err.tensorIndex !== null && err.tensorIndex < info.tensorCount) {
    f.tensor = session.tensor(err.tensorIndex, wasm.scratch, 0).name;
  }
  if (err.code === 'GgufRetiredType' && err.found !== null) {
    const id = Number(err.found);
    f.retiredName = ggmlType(wasm, id, info.dialectId).name;
    if (info.dialectId === 0) {
      const b = ggmlType(wasm, id, 1);
      if (b.kind !== 0 && b.kind !== 1) f.bitnetName = b.name;  // neither Unknown nor Retired in BitNet
    }
  }
  if (err.code === 'GgufDuplicateKey') {
    const k = ctx.kvs.keyAt(err.offset);
    if (k) { f.ggufKey = k.key; f.ggufKeyOther = k.other; }
  }
  return makeError(f, wasm.statusDescription(err.status));
}

// Byte ranges to read instead of the whole data section, or null when streaming on is as good.
// Tensors are read in file order; neighbours closer than `gap` bytes share one request.
export function planRanges(header, selected, gap) {
  const ranges = [];
  let skipped = 0;
  let prevEnd = header.dataStart;
  for (const t of header.tensors) {
    if (!selected[t.index]) continue;
    const a = t.offset, b = t.offset + t.byteLength;
    const last = ranges[ranges.length - 1];
    if (last && a - last.end <= gap) {
      last.end = Math.max(last.end, b);
      last.tensors.push(t.index);
    } else {
      ranges.push({ start: a, end: b, tensors: [t.index] });
    }
    if (a > prevEnd) skipped += a - prevEnd;
    prevEnd = Math.max(prevEnd, b);
  }
  const dataEnd = header.dataStart + header.dataSize;
  if (dataEnd > prevEnd) skipped += dataEnd - prevEnd;
  // Skipping less than a request's worth is not worth the requests.
  if (skipped < Math.max(gap, 1)) return null;
  return ranges;
}

export async function* scanFile(wasm, source, o = {}) {
  const signal = o.signal;
  const state = o.state ?? {};  // filled for validate(): format, tensor count
  const ctx = { size: null, fed: 0, prefix: new Uint8Array(0), shard: o.shard ?? null, kvs: null };
  let session = null;
  let chunks = null;
  try {
    if (signal?.aborted) throw abortError(signal, 0);
    await source.open(signal);
    ctx.size = source.size;
    let arenaSize = roundUp8(o.arenaSize ?? DEFAULT_ARENA);
    session = await createSession(wasm, o, arenaSize);
    if (source.size !== null) session.setInputSize(source.size);
    const kvs = new GgufKvCollector(wasm, { arrayLimit: o.arrayLimit ?? 16 });
    ctx.kvs = kvs;
    chunks = source.chunks(signal);
    const inputSize = session.inputSize;

    let queue = [];        // pieces to feed before reading on (a replay after ArenaExhausted)
    let cur = null, curAt = 0;
    let kept = [];         // pieces fed before HeaderReady, for the replay
    let sourceDone = false;
    let finished = false;  // finish() called on this session
    let retried = false;
    let selected = null;
    let tensorPos = 0;
    let header = null;

    for (;;) {
      const t = session.next();
      switch (t) {
        case E.NeedInput: {
          if (cur === null || curAt >= cur.length) {
            cur = null;
            if (queue.length) {
              cur = queue.shift();
              curAt = 0;
            } else if (sourceDone) {
              if (finished) throw makeError({ code: 'UsageError', offset: session.info().position }, wasm.statusDescription(2));
              session.finish();
              finished = true;
              break;
            } else {
              const r = await chunks.next();
              if (signal?.aborted) throw abortError(signal, ctx.fed);
              if (r.done) {
                sourceDone = true;
                session.finish();
                finished = true;
                break;
              }
              cur = r.value;
              curAt = 0;
              if (ctx.prefix.length < 8) {
                const p = new Uint8Array(Math.min(8, ctx.prefix.length + cur.length));
                p.set(ctx.prefix);
                p.set(cur.subarray(0, p.length - ctx.prefix.length), ctx.prefix.length);
                ctx.prefix = p;
              }
              ctx.fed += cur.length;
              o.onBytes?.(cur.length);
            }
          }
          const n = Math.min(cur.length - curAt, inputSize);
          const piece = cur.subarray(curAt, curAt + n);
          if (kept) kept.push(piece);
          session.feed(piece);
          curAt += n;
          break;
        }
        case E.KvBegin: case E.KvScalar: case E.KvBytes: case E.KvEnd:
          kvs.onEvent(t, session);
          break;
        case E.HeaderReady: {
          kept = null;
          const info = session.info();
          header = buildHeader(wasm, session, info, kvs);
          header.size = source.size;
          header.name = source.name ?? null;
          state.format = header.format;
          state.tensorCount = header.tensors.length;
          if (o.selection) {
            selected = o.selection(header, session);
          } else {
            selected = new Uint8Array(header.tensors.length);
            for (const tt of header.tensors) selected[tt.index] = !o.select || o.select(tt) ? 1 : 0;
          }
          if (o.onHeader) await o.onHeader(header, session);
          yield { kind: 'header', header, selected };
          if (signal?.aborted) throw abortError(signal, ctx.fed);
          if (o.headerOnly) {
            // o.keep takes the session (a logical model will read its table): not destroyed here.
            if (o.keep) { o.keep.session = session; session = null; }
            return;
          }
          if (o.ranges !== false && source.seekable && source.range && selected.some((v) => !v)) {
            const ranges = planRanges(header, selected, o.rangeGap ?? (source.url ? 1 << 20 : 64 << 10));
            if (ranges) {
              // What will have been read in all: what was read so far, and the planned ranges.
              o.onPlanned?.(ctx.fed + ranges.reduce((n, r) => n + r.end - r.start, 0));
              await chunks.return?.();
              chunks = null;
              yield* readRanges(wasm, source, session, header, ranges, o, ctx);
              yield { kind: 'done', validated: 'header' };
              return;
            }
          }
          break;
        }
        case E.TensorBegin:
          tensorPos = 0;
          if (selected[session.evTensor]) yield { kind: 'begin', index: session.evTensor };
          break;
        case E.TensorBytes: {
          const index = session.evTensor;
          const size = session.evSize;
          if (selected[index]) {
            yield { kind: 'bytes', index, ptr: session.evData, size, offset: tensorPos };
            if (signal?.aborted) throw abortError(signal, ctx.fed);
          }
          tensorPos += size;
          break;
        }
        case E.TensorEnd:
          if (selected[session.evTensor]) yield { kind: 'end', index: session.evTensor };
          break;
        case E.End:
          yield { kind: 'done', validated: 'full' };
          return;
        case E.Error: {
          const info = session.info();
          state.format = info.format === 'unknown' ? null : info.format;
          if (info.error.code === 'ArenaExhausted' && !retried && kept && info.arenaNeeded > arenaSize) {
            // Once, with the size the reader measured: replay what was fed, then read on.
            retried = true;
            const rest = cur && curAt < cur.length ? [cur.subarray(curAt)] : [];
            queue = [...kept, ...rest, ...queue];
            kept = [];
            cur = null;
            finished = false;
            session.destroy();
            session = null;
            arenaSize = roundUp8(info.arenaNeeded);
            session = await createSession(wasm, o, arenaSize);
            if (source.size !== null) session.setInputSize(source.size);
            kvs.reset();
            break;
          }
          // A length error right after the header: the table is valid, say how many tensors.
          if (info.error.code === 'TruncatedData' || info.error.code === 'TrailingBytes' || header) state.tensorCount = info.tensorCount;
          else state.tensorCount = 0;
          throw readerError(wasm, session, info, ctx);
        }
        default:
          break;
      }
    }
  } catch (e) {
    throw inShard(e, ctx.shard);
  } finally {
    chunks?.return?.().catch?.(() => {});
    session?.destroy();
    source.close();
  }
}

// The range plan: only the selected tensors' bytes, copied into the session's input buffer in
// pieces (the reader is not fed: it validated the header and the data is opaque bytes).
async function* readRanges(wasm, source, session, header, ranges, o, ctx) {
  const signal = o.signal;
  const cap = session.inputSize;
  for (const range of ranges) {
    let pos = range.start;
    let k = 0;  // next tensor of this range
    let openIndex = -1;
    const tensorsOf = range.tensors.map((i) => header.tensors[i]);
    // Zero-size tensors need no bytes: begin and end as soon as they are reached.
    const flushEmpty = function* () {
      while (k < tensorsOf.length && tensorsOf[k].byteLength === 0 && tensorsOf[k].offset <= pos) {
        yield { kind: 'begin', index: tensorsOf[k].index };
        yield { kind: 'end', index: tensorsOf[k].index };
        k++;
      }
    };
    yield* flushEmpty();
    for await (const chunk of source.range(range.start, range.end, signal)) {
      if (signal?.aborted) throw abortError(signal, pos);
      o.onBytes?.(chunk.length);
      let at = 0;
      while (at < chunk.length) {
        yield* flushEmpty();
        const t = tensorsOf[k];
        if (!t) { at = chunk.length; break; }
        const tEnd = t.offset + t.byteLength;
        if (pos < t.offset) {  // a gap between coalesced tensors
          const skip = Math.min(t.offset - pos, chunk.length - at);
          pos += skip;
          at += skip;
          continue;
        }
        if (openIndex !== t.index) {
          openIndex = t.index;
          yield { kind: 'begin', index: t.index };
        }
        const n = Math.min(tEnd - pos, chunk.length - at, cap);
        wasm.u8.set(chunk.subarray(at, at + n), session.input);
        yield { kind: 'bytes', index: t.index, ptr: session.input, size: n, offset: pos - t.offset };
        if (signal?.aborted) throw abortError(signal, pos);
        pos += n;
        at += n;
        if (pos === tEnd) {
          yield { kind: 'end', index: t.index };
          k++;
        }
      }
    }
    yield* flushEmpty();
    if (pos < range.end || k < tensorsOf.length) {
      throw ioError(`the source ended at byte ${pos} inside a range that should reach byte ${range.end}`, pos, undefined, { shard: ctx.shard });
    }
  }
}
