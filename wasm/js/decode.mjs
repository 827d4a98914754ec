// Turns scan events (stored bytes) into output events (the planned dtype), tensor by tensor:
//   { kind: 'header', header, plan }
//   { kind: 'tbegin', d } / { kind: 'tend', d }          d: the tensor's plan (plan.mjs)
//   { kind: 'tdata', d, ptr, size, offset }              output bytes at wasm address ptr, offset
//                                                        bytes into the tensor's output
//   { kind: 'done', validated }
// Decoded values are written into one output buffer in wasm memory (bounded pieces); every piece
// is handed on before the next is decoded, so nothing accumulates.
import { planOutputs, fileWeights } from './plan.mjs';
import { Dequantizer } from './dequantizer.mjs';
import { makeError } from './errors.mjs';

export const DEFAULT_OUT = 1 << 20;
const KERNELS = { auto: 0, reference: 1, simd128: 2 };

export async function* decodePipeline(wasm, makeScan, o = {}) {
  let plan = null;
  let dq = null, area = 0, stage = 0;
  const stageSize = o.chunkSize ?? (1 << 20);
  const held = new Map();   // companion or whole tensor index -> {bytes: Uint8Array, complete}
  const waiting = [];       // whole-mode tensors whose bytes (and companions) are being gathered
  let header = null;
  const shard = o.shard ?? null;

  // The scan reads the planned tensors (outputs and companions); planning happens at the header.
  // The logical weights come from the library: over this file alone (its session is alive now),
  // or, for a UQFF model, from the model over every file (o.logical).
  const scan = makeScan((h, session) => {
    const dtype = o.dtype ?? 'raw';
    const logical = o.logical ?? (h.format === 'safetensors' && dtype !== 'raw' ? fileWeights(wasm, h, session, { quantization: o.quantization, shard }) : null);
    plan = planOutputs(wasm, h, { dtype, select: o.select, shard, logical });
    // Companions from other files were read before this file: they are held, complete.
    for (const c of plan.companionOf.keys()) if (typeof c !== 'number') held.set(c, { bytes: logical.external.get(c).bytes, complete: true });
    return plan.scan;
  });

  const dqError = (d, status) => {
    const e = dq.error();
    return makeError({ code: wasm.statusName(status), offset: e.offset || d.source.offset, tensor: d.name, shard }, wasm.statusDescription(status));
  };

  // Starts the dequantizer on tensor d (companions copied into the companion area first).
  const start = (d, globalScale) => {
    let scales = 0, biases = 0, at = area, k = 0;
    for (const c of d.companions) {
      const bytes = held.get(c).bytes;
      if (c === d.global) {  // an Ollama global scale: one F32, passed by value
        globalScale = new DataView(bytes.buffer, bytes.byteOffset, 4).getFloat32(0, true);
        continue;
      }
      wasm.u8.set(bytes, at);
      if (k++ === 0) scales = at; else biases = at;
      at += Math.ceil(bytes.length / 8) * 8;
    }
    const s = dq.init({
      format: d.format, out: d.out, impl: KERNELS[o.kernel ?? 'auto'], elements: d.elements,
      bits: d.spec?.bits, group: d.spec?.group, scaleDtype: d.spec?.scaleDtype, scales, biases,
      globalScale, globalScaleIsOllama: d.spec?.ollama === true, inputOffset: d.source.offset,
      scalesOffset: d.scalesOffset,
    });
    if (s !== 0) throw dqError(d, s);
  };

  // Decodes n stored bytes at wasm address ptr; yields the output pieces.
  function* decode(d, ptr, n, pos) {
    while (n > 0) {
      const s = dq.decode(ptr, n);
      if (s !== 0) throw dqError(d, s);
      if (dq.outWritten > 0) {
        yield { kind: 'tdata', d, ptr: dq.out, size: dq.outWritten, offset: pos.out };
        pos.out += dq.outWritten;
      }
      if (dq.inUsed === 0 && dq.outWritten === 0) break;  // bytes past the tensor's blocks (none expected)
      ptr += dq.inUsed;
      n -= dq.inUsed;
    }
  }

  // A tensor kept whole in JS (and its companions complete): decode it from there.
  function* decodeWhole(d) {
    const bytes = held.get(d.index).bytes;
    let globalScale;
    let n = bytes.length;
    if (wasm.formats.list[d.format].name === 'I2_S') {
      n = d.elements / 4;  // codes; the tail's first 4 bytes are the f32 scale
      globalScale = new DataView(bytes.buffer, bytes.byteOffset + n, 4).getFloat32(0, true);
    }
    start(d, globalScale);
    yield { kind: 'tbegin', d };
    const pos = { out: 0 };
    for (let a = 0; a < n; a += stageSize) {
      const m = Math.min(stageSize, n - a);
      wasm.u8.set(bytes.subarray(a, a + m), stage);
      yield* decode(d, stage, m, pos);
    }
    finishCheck(d);
    yield { kind: 'tend', d };
    held.delete(d.index);
    releaseCompanions(d);
  }

  const finishCheck = (d) => {
    if (!dq.done) throw makeError({ code: 'InvalidQuantParams', offset: d.source.offset, tensor: d.name, shard, detail: `${dq.elementsDone} of ${d.elements} elements decoded` }, wasm.statusDescription(wasm.statusCode('InvalidQuantParams')));
  };

  // Companions are dropped once every weight that needs them is done.
  const releaseCompanions = (d) => {
    for (const c of d.companions) {
      const users = plan.companionOf.get(c);
      users.splice(users.indexOf(d.index), 1);
      if (users.length === 0) held.delete(c);
    }
  };

  const ready = (d) => held.get(d.index)?.complete && d.companions.every((c) => held.get(c)?.complete);

  try {
    let pos = null;
    for await (const ev of scan) {
      switch (ev.kind) {
        case 'header': {
          header = ev.header;
          // Scratch for decoding, allocated once per file before any data (memory may grow only now).
          const needsDq = plan.outputs.some((d) => d.mode !== 'raw');
          if (needsDq) {
            await wasm.whenIdle();
            dq = new Dequantizer(wasm, o.outSize ?? DEFAULT_OUT);
            if (plan.companionArea) area = wasm.alloc(plan.companionArea);
            if (plan.anyWhole) stage = wasm.alloc(stageSize);
          }
          yield { kind: 'header', header, plan };
          break;
        }
        case 'begin': {
          const d = plan.descs[ev.index];
          if (!d) {  // a companion, read but not an output
            held.set(ev.index, { bytes: new Uint8Array(header.tensors[ev.index].byteLength), complete: false });
            break;
          }
          if (d.mode === 'whole') {
            held.set(ev.index, { bytes: new Uint8Array(d.source.byteLength), complete: false });
            waiting.push(d);
            break;
          }
          if (d.mode === 'stream') start(d);
          pos = { out: 0 };
          yield { kind: 'tbegin', d };
          break;
        }
        case 'bytes': {
          const d = plan.descs[ev.index];
          if (!d || d.mode === 'whole') {
            held.get(ev.index).bytes.set(wasm.bytes(ev.ptr, ev.size), ev.offset);
          } else if (d.mode === 'raw') {
            yield { kind: 'tdata', d, ptr: ev.ptr, size: ev.size, offset: ev.offset };
          } else {
            yield* decode(d, ev.ptr, ev.size, pos);
          }
          break;
        }
        case 'end': {
          const d = plan.descs[ev.index];
          if (!d || d.mode === 'whole') {
            held.get(ev.index).complete = true;
            // Whatever was waiting for this tensor (itself, or as a companion) may go now.
            for (let k = 0; k < waiting.length;) {
              if (ready(waiting[k])) yield* decodeWhole(waiting.splice(k, 1)[0]);
              else k++;
            }
            break;
          }
          if (d.mode === 'stream') {
            finishCheck(d);
            releaseCompanions(d);
          }
          yield { kind: 'tend', d };
          break;
        }
        case 'done':
          if (waiting.length) throw makeError({ code: 'UsageError', offset: null, tensor: waiting[0].name, shard }, 'a tensor waited for companions that never came');
          yield { kind: 'done', validated: ev.validated };
          return;
        default:
          break;
      }
    }
  } finally {
    dq?.destroy();
    wasm.free(area);
    wasm.free(stage);
  }
}
