// A model — one file, a sharded model, a UQFF directory, an Ollama manifest — as output events,
// for createReader() and loadToWebGPU(); the loading is ws::ModelLoader's (host.mjs):
//   { kind: 'header', shard, header, plan: { outputs } }   each data file, in the model's file
//                                                         order, once every header is validated
//   { kind: 'tbegin', d, shard } / { kind: 'tend', d, shard }   d: the output's descriptor
//   { kind: 'tdata', d, shard, ptr, size, offset }        output bytes at wasm address ptr, `offset`
//                                                         bytes into the output; valid until resumed
//   { kind: 'done', validated, index }
//   { kind: 'warning', warning }                          the library's (host.mjs publicWarning)
// With { headersOnly: true } (plan()): the header events (their outputs empty), then
//   { kind: 'planned', files, model, bytes: {read, toRead}, table }  and nothing more is read;
//   `table` (plan-table.mjs) holds the outputs as columns, each descriptor made when asked for
//   (outputDescriptor).
//
// dtype 'raw': every tensor of every file as stored, one output each (the loader's as_stored
// model: no convention applies). 'f32' / 'f16': the model's weights decoded to their logical
// shapes (MLX, Ollama, UQFF companions are the loader's), and tensors of types nothing decodes
// (integers, F64) handed on as stored (pass_stored).
import { describeModel } from './model-files.mjs';
import { loadModel, Mode } from './host.mjs';
import { toSelect, withEvents } from './options.mjs';
import { makeError } from './errors.mjs';
import { formatFromDtype, formatFromGgml, formatTable } from './formats.mjs';
import { PlanTable } from './plan-table.mjs';

const DTYPES = ['f32', 'f16', 'raw'];

// gpuFormats (a Set of format names, loadToWebGPU's decode on the GPU): weights of those formats
// go out as their stored bytes (the loader's stored_formats); their descriptors keep the
// decoded dtype, shape and byteLength and say d.gpu = { format, uploadBytes }.
export async function* modelEvents(wasm, source, options, progress, { headersOnly = false, gpuFormats = null } = {}) {
  // The cache's and a URL's resumed reads' events go through the progress callback (and
  // createReader's events).
  options = withEvents(options, progress);
  const dtype = options.dtype ?? 'raw';
  if (!DTYPES.includes(dtype)) throw new TypeError(`weightstream: dtype must be 'f32', 'f16' or 'raw', not ${JSON.stringify(dtype)}`);
  const select = toSelect(options.filter);
  const raw = dtype === 'raw';
  const model = await describeModel(source, options);
  const gpu = !raw && gpuFormats?.size ? gpuFormats : null;
  let storedFormats = 0n;
  if (gpu) for (const f of formatTable(wasm).list) if (gpu.has(f.name)) storedFormats |= 1n << BigInt(f.id);
  let outputs = null;  // weight index -> { d, shard }
  let done = null;
  let planned = null;
  // A forward stream (no seeking) resolves some weights only as it passes their data (the
  // library's ConventionDataPhase::waits_for: bitsandbytes' shape and parameters, in its
  // quant_state JSON after the packed bytes): their shape and quant are final at their begin, so a
  // decoded output is described again there (its byteLength, the library's, is exact already).
  let redescribe = null;
  const onReady = (L, ready) => {
    outputs = new Map();
    if (!model.seekable && !raw) {
      const chunk = ready.model.plan.chunk;
      redescribe = (i, d) => {
        const w = L.weight(i, chunk);
        const file = ready.files[L.tableFile(w.pieces.packed.table)];
        const now = describe(wasm, w, w.pieces.packed.index, file.header, ready.files, d.dtype, d.byteLength);
        d.shape = now.shape;
        d.quant = now.quant;
      };
    }
    const files = ready.files;
    const chunk = ready.model.plan.chunk;
    if (headersOnly) {
      ready.perFile = new Map();
      const table = planTable(wasm, L, ready, select, gpu, raw, dtype);
      planned = { kind: 'planned', files, model: ready.model, bytes: L.bytes(), configFromOption: model.configFromOption, table };
      return;
    }
    const perFile = new Map();
    for (let i = 0; i < ready.model.weightCount; i++) {
      const w = L.weight(i, chunk);
      const file = files[L.tableFile(w.pieces.packed.table)];
      const ti = w.pieces.packed.index;
      const t = file.header.tensors.at(ti);
      // The filter sees the weight's name, as its events carry it (gpt-oss's `<p>` is no stored
      // tensor's name: its packed piece is `<p>_blocks`).
      if (select && !select(w.name === t.name ? t : { ...t, name: w.name })) continue;
      const s = L.select(i);
      if (s !== 0) throw makeError({ code: wasm.statusName(s), offset: t.offset, tensor: w.name, shard: file.shard ?? null });
      // (A weight of a covered format that the library cannot decode — not whole blocks, say — goes
      // out as stored, as without the option: stored_for_host is false for it.)
      const onGpu = gpu !== null && L.storedForHost(i);
      const d = describe(wasm, w, ti, file.header, files, raw || (L.passesStored(i) && !onGpu) ? null : dtype,
        onGpu ? w.elements * (dtype === 'f16' ? 2 : 4) : L.outputBytes(i));
      if (onGpu) d.gpu = gpuOf(w, files, L.outputBytes(i));
      outputs.set(i, { d, shard: file.shard ?? null });
      if (!perFile.has(file.index)) perFile.set(file.index, []);
      perFile.get(file.index).push(d);
    }
    ready.perFile = perFile;
    const bytes = L.bytes();
    if (progress) {
      progress.bytes = bytes.read;
      progress.setTotal(bytes.read + bytes.toRead);
    }
    done = { validated: select && model.seekable ? 'header' : 'full', index: indexOf(model, ready, raw) };
  };
  for await (const ev of loadModel(wasm, model, options, { mode: raw ? Mode.raw : Mode.decode, dtype, passStored: !raw, asStored: raw, storedFormats, progress, onReady })) {
    switch (ev.kind) {
      case 'ready':
        for (const f of ev.files) {
          if (!f.header) continue;
          yield { kind: 'header', shard: f.shard ?? null, header: f.header, plan: { outputs: ev.perFile.get(f.index) ?? [] } };
        }
        if (headersOnly) { yield planned; return; }  // the loader is closed before any data is read
        break;
      case 'begin': {
        const o = outputs.get(ev.weight);
        if (redescribe && o.d.source && o.d.dtype !== o.d.source.dtype && !o.d.gpu) redescribe(ev.weight, o.d);
        yield { kind: 'tbegin', d: o.d, shard: o.shard };
        break;
      }
      case 'data': { const o = outputs.get(ev.weight); yield { kind: 'tdata', d: o.d, shard: o.shard, ptr: ev.ptr, size: ev.size, offset: ev.offset, role: ev.role }; break; }
      case 'end': { const o = outputs.get(ev.weight); yield { kind: 'tend', d: o.d, shard: o.shard }; break; }
      case 'done': yield { kind: 'done', ...done }; break;
      case 'warning': yield ev; break;  // { kind: 'warning', warning } (host.mjs publicWarning)
      default: break;
    }
  }
}

// plan()'s outputs (headersOnly) as columns: the same selection as a load's (the filter sees each
// weight's name and its packed tensor), no object made for a weight unless the filter asks.
function planTable(wasm, L, ready, select, gpu, raw, dtype) {
  const files = ready.files, chunk = ready.model.plan.chunk, count = ready.model.weightCount;
  const chosen = new Uint32Array(count), outBytes = new Float64Array(count);
  const onGpu = new Uint8Array(count), asStored = new Uint8Array(count);
  let n = 0;
  for (let i = 0; i < count; i++) {
    if (select) {
      const w = L.weight(i, chunk);
      const file = files[L.tableFile(w.pieces.packed.table)];
      const t = file.header.tensors.at(w.pieces.packed.index);
      if (!select(w.name === t.name ? t : { ...t, name: w.name })) continue;
    }
    const s = L.select(i);
    if (s !== 0) {
      const w = L.weight(i, chunk), file = files[L.tableFile(w.pieces.packed.table)];
      throw makeError({ code: wasm.statusName(s), offset: file.header.tensors.at(w.pieces.packed.index).offset, tensor: w.name, shard: file.shard ?? null });
    }
    const g = gpu !== null && L.storedForHost(i);
    chosen[n] = i;
    outBytes[n] = L.outputBytes(i);
    onGpu[n] = g ? 1 : 0;
    asStored[n++] = raw || (L.passesStored(i) && !g) ? 1 : 0;
  }
  return new PlanTable(wasm, L, chunk, files, chosen.subarray(0, n), outBytes, onGpu, asStored, dtype);
}

// Output p of a PlanTable as a load describes it (its descriptor, with `gpu` for a weight the GPU
// decodes): what describe() gives at ModelReady, made from the copied words.
export function outputDescriptor(table, p) {
  const w = table.weight(p), file = table.file(p), ti = w.pieces.packed.index;
  const d = describe(table.wasm, w, ti, file.header, table.files, table.stored(p) ? null : table.dtype, table.byteLength[p]);
  if (table.gpu(p)) d.gpu = gpuOf(w, table.files, table.upload[p]);
  return d;
}

// The output descriptor of weight w (its packed tensor, `ti` of `header`): decoded to `dtype`, or as
// stored (null); `byteLength` is the library's (ModelLoader::output_bytes).
function describe(wasm, w, ti, header, files, dtype, byteLength) {
  const t = header.tensors.at(ti);
  const source = { dtype: t.dtype, shape: t.shape, byteLength: t.byteLength, offset: t.offset };
  // A plain tensor keeps its header's shape (GGUF's in ggml order, ne[0] first); a logical weight
  // has the shape it decodes to.
  const logical = dtype !== null && !wasm.plainConventions.has(w.convention);
  return {
    index: ti, name: w.name, dtype: dtype ?? t.dtype, shape: logical ? w.shape : t.shape,
    elements: dtype ? w.elements : header.tensors.elements(ti), byteLength,
    quant: quantOf(wasm, w, header.tensors.typeId(ti), header, files), source,
  };
}

// What the GPU decode pass needs of a weight it decodes: its format, the bytes it uploads, and for
// a weight with companions (MLX) their tensors' sizes, offsets and scale dtype.
function gpuOf(w, files, uploadBytes) {
  const g = { format: w.format.name, uploadBytes };
  // Blocks (plain tensors, UQFF's GGML and unquantized layers) stream; a weight with companions
  // (MLX, Ollama, UQFF Afq / mxfp4) is decoded at its end.
  if (!w.pieces.scales) return g;
  const piece = (r) => files.find((f) => f.table === r.table).header.tensors.at(r.index);
  const p = w.pieces;
  g.bits = w.bits;
  g.group = w.group;
  g.scaleDtype = piece(p.scales).dtype;
  // A global scale that multiplies the value (Ollama's nvfp4, mlx_quants.cpp) or the scale (MLX's, / 2688).
  g.ollamaGlobal = w.globalScaleIsOllama;  // the library's spec flag (DequantSpec::global_scale_is_ollama)
  // ModelOpt's weight_scale_2 multiplies the block scale as stored (DequantSpec::global_scale_is_modelopt).
  g.modeloptGlobal = w.globalScaleIsModelopt;
  // compressed-tensors' weight_global_scale divides it (DequantSpec::global_scale_divides).
  g.dividingGlobal = w.globalScaleDivides;
  g.globalOffset = p.globalScale ? piece(p.globalScale).offset : 0;  // its byte, for InvalidBlockData
  g.pieces = {};
  for (const role of ['packed', 'scales', 'biases']) {
    const t = p[role] ? piece(p[role]) : null;
    g.pieces[role] = { byteLength: t ? t.byteLength : 0, offset: t ? t.offset : 0 };
  }
  return g;
}

const pieceName = (files, r) => (r ? files.find((f) => f.table === r.table).header.tensors.at(r.index).name : null);

// tensor.quant: a logical weight's convention, mode, bits, group and companions' names; a stored
// tensor's block format (its block size and bytes, whether or not it decodes); null for element
// types.
function quantOf(wasm, w, typeId, header, files) {
  if (wasm.plainConventions.has(w.convention) || (w.convention === 'uqff' && w.uqffType === 'unquant')) {
    const f = header.format === 'gguf' ? formatFromGgml(wasm, typeId, header.gguf?.dialect === 'bitnet' ? 1 : 0) : formatFromDtype(wasm, typeId);
    return f && f.blockElems > 1 ? { format: f.name, blockElems: f.blockElems, blockBytes: f.blockBytes } : null;
  }
  const q = { format: w.format.name };
  if (w.convention === 'uqff') {
    Object.assign(q, { convention: 'uqff', uqffType: w.uqffType });
    if (w.uqffType === 'gguf') q.ggmlType = w.format.name;
    if (w.mode === 'none') return q;
  }
  const name = (role) => pieceName(files, w.pieces[role]);
  Object.assign(q, { mode: w.mode, bits: w.bits, groupSize: w.group, scales: name('scales'), biases: name('biases') });
  // A convention with no MLX mode (FP8) says what it is by its parameters: method, block, dtypes.
  if (w.mode === 'none' && w.parameters) Object.assign(q, { convention: w.convention, parameters: w.parameters });
  if (w.convention === 'ollama') Object.assign(q, { globalScale: name('globalScale'), convention: 'ollama' });
  // The Hub methods (issue #27): the convention is the method (mxfp4, modelopt); ModelOpt's
  // weight_scale_2 is its global scale.
  else if (w.convention !== 'mlx') {
    q.convention = w.convention;
    if (w.pieces.globalScale) q.globalScale = name('globalScale');
  }
  return q;
}

// What the end event says of a model of several files (read raw, a UQFF directory is its stored
// tensors: no convention, no version).
function indexOf(model, ready, raw) {
  const shards = ready.files.filter((f) => f.header).map((f) => f.shard);
  if (model.kind === 'sharded') {
    const index = ready.files.find((f) => f.kind === 'index');
    // The index's metadata as the loader read it: its total_size.
    const totalSize = index?.totalSize ?? null;
    return { tensors: index?.tensors ?? 0, totalSize, metadata: totalSize === null ? null : { total_size: totalSize }, shards };
  }
  if (model.kind === 'uqff') return { convention: 'uqff', version: raw ? null : ready.model.version.join('.'), metadata: null, shards };
  if (model.kind === 'ollama') return { convention: 'ollama', version: null, metadata: null, shards };
  if (ready.model.splitCount > 1) return { splits: shards, metadata: null };
  return null;
}
