// What each tensor becomes for a requested output dtype ('f32' | 'f16' | 'raw'):
//   raw     bytes as stored (also F32 asked as f32, F16 as f16, and types nothing decodes: ints, F64)
//   stream  decoded as its bytes arrive (element-wise and GGML block formats, MLX weights whose
//           scales/biases come earlier in the file)
//   whole   kept whole in JS memory, then decoded: an MLX weight stored before its scales, BitNet
//           I2_S (its scale is in the tensor's last 32 bytes)
// Quantized logical weights (MLX, Ollama blobs, UQFF layers) decode to their logical shape; which
// tensors form one, and its mode, bits, group, shape and format, are the library's
// (ws::LogicalModel through conventions.mjs): scales, biases and global scales are read as
// companions and are not outputs themselves. The global scale (an F32 scalar) is read before the
// weight's decoding starts, so a weight stored before a companion is kept whole.
import { formatFromDtype, formatFromGgml, OutType } from './formats.mjs';
import { makeError } from './errors.mjs';
import { Model, configBytes } from './conventions.mjs';

const DTYPES = ['f32', 'f16', 'raw'];

function quantInfo(f, extra = {}) {
  return { format: f.name, blockElems: f.blockElems, blockBytes: f.blockBytes, ...extra };
}

function fail(code, tensor, detail, shard) {
  return makeError({ code, offset: tensor.offset, tensor: tensor.name, detail, shard });
}

// The logical weights of one safetensors file, by the library (its session is alive: the model
// reads its table). `logical` for planOutputs. The file's metadata decides the convention (Model.kind(), as in the CLI); the quantization
// option (config.json) also makes it MLX.
export function fileWeights(wasm, header, session, { quantization = null, shard = null, chunk = 1 << 20 } = {}) {
  const model = new Model(wasm, [{ session, header, name: shard }], { config: configBytes(quantization) });
  const kind = model.kind();
  try {
    model.build(kind);
    return { table: 0, headers: [header], names: [shard], weights: model.weights(chunk), plan: model.plan(chunk), convention: kind };
  } finally {
    model.destroy();
  }
}

// The quant facts an output descriptor carries (tensor.quant of the public events).
function quantOf(w, name) {
  const q = { format: w.format.name };
  if (w.convention === 'uqff') {
    Object.assign(q, { convention: 'uqff', uqffType: w.uqffType });
    if (w.uqffType === 'gguf') q.ggmlType = w.format.name;
    if (w.mode === 'none') return q;
  }
  Object.assign(q, { mode: w.mode, bits: w.bits, groupSize: w.group, scales: name(w.pieces.scales), biases: name(w.pieces.biases) });
  if (w.convention === 'ollama') Object.assign(q, { globalScale: name(w.pieces.globalScale), convention: 'ollama' });
  return q;
}

const LABEL = { mlx: 'MLX', ollama: 'Ollama', uqff: 'UQFF' };

// Plans every tensor of `header`. `select(t)` says which the caller wants (all when null).
// `logical`: the library's logical weights over this file and the model's other files
// ({table: this file's table, headers: every table's header, weights}); outputs are then the
// weights whose packed piece is in this file, and every other tensor of it is a companion (or, in
// UQFF, a version tensor), not an output. Without it (and for dtype 'raw') every tensor is one.
export function planOutputs(wasm, header, { dtype = 'raw', select = null, shard = null, logical = null } = {}) {
  if (!DTYPES.includes(dtype)) throw new TypeError(`weightstream: dtype must be 'f32', 'f16' or 'raw', not ${JSON.stringify(dtype)}`);
  const tensors = header.tensors;
  const gguf = header.format === 'gguf';
  const dialectId = header.gguf?.dialect === 'bitnet' ? 1 : 0;
  const out = dtype === 'raw' ? null : OutType[dtype];
  const outBytes = dtype === 'f16' ? 2 : 4;
  const descs = new Array(tensors.length).fill(null);
  const companionOf = new Map();  // companion index -> weights that need it
  const consumed = new Set();
  let companionArea = 0;
  const external = new Map();  // companion key of another file -> its header tensor
  const companionTensor = (c) => (typeof c === 'number' ? tensors[c] : external.get(c));

  // A quantized weight's plan: decoded to `shape`; `companions` are read first (scales, then
  // biases), `global` (an index among them, or null) is the F32 global scale.
  const addQuantized = (w, f, shape, elements, companions, global, quant, spec) => {
    const mode = companions.some((c) => typeof c === 'number' && tensors[c].offset > w.offset) ? 'whole' : 'stream';
    const first = companions.length ? companionTensor(companions[0]) : null;
    descs[w.index] = {
      index: w.index, name: w.name, dtype, shape, elements, byteLength: elements * outBytes,
      source: { dtype: w.dtype, shape: w.shape, byteLength: w.byteLength, offset: w.offset },
      quant, mode, format: f.id, out, companions, global, spec, scalesOffset: first ? first.offset : 0,
    };
    let area = 0;
    for (const c of companions) {
      if (!companionOf.has(c)) companionOf.set(c, []);
      companionOf.get(c).push(w.index);
      if (c !== global) area += Math.ceil(companionTensor(c).byteLength / 8) * 8;
    }
    companionArea = Math.max(companionArea, area);
  };

  if (logical && out !== null) {
    const here = logical.table;
    const packedHere = new Set();
    const name = (r) => (r ? logical.headers[r.table].tensors[r.index].name : null);
    for (const w of logical.weights) {
      if (w.pieces.packed.table === here) packedHere.add(w.pieces.packed.index);
    }
    // Everything of this file that is no weight's packed piece is a companion or version tensor.
    for (const t of tensors) if (!packedHere.has(t.index)) consumed.add(t.index);
    for (const w of logical.weights) {
      const p = w.pieces.packed;
      if (p.table !== here) continue;
      // Plain weights (and UQFF Unquant layers) are decided by their dtype, below.
      if (w.mode === 'none' && (w.convention === 'plain' || w.uqffType === 'unquant')) continue;
      const t = tensors[p.index];
      if (select && !select(t)) continue;
      if (!w.format.supported) throw fail('UnsupportedFormat', t, `${LABEL[w.convention]} ${w.mode === 'none' ? w.uqffType : w.mode} (${w.format.name}) has no kernel in this build`, shard);
      // Companions in this file are indices; one in another file is a key of logical.external
      // (its bytes, read before this file streams).
      const companions = [];
      let global = null;
      for (const role of ['scales', 'biases', 'globalScale']) {
        const r = w.pieces[role];
        if (!r) continue;
        const c = r.table === here ? r.index : `${r.table}:${r.index}`;
        if (r.table !== here) external.set(c, logical.external.get(c).tensor);
        companions.push(c);
        if (role === 'globalScale') global = c;
      }
      addQuantized(t, w.format, w.shape, w.elements, companions, global, quantOf(w, name),
        { bits: w.bits, group: w.group, scaleDtype: w.scaleDtype, ollama: w.convention === 'ollama' });
    }
  }

  for (const t of tensors) {
    if (descs[t.index] || consumed.has(t.index)) continue;
    if (select && !select(t)) continue;
    const d = {
      index: t.index, name: t.name, dtype: t.dtype, shape: t.shape, elements: t.elements, byteLength: t.byteLength,
      source: { dtype: t.dtype, shape: t.shape, byteLength: t.byteLength, offset: t.offset },
      quant: null, mode: 'raw', format: null, out: null, companions: [],
    };
    const f = gguf ? formatFromGgml(wasm, t.typeId, dialectId) : formatFromDtype(wasm, t.typeId);
    if (f && f.blockElems > 1) d.quant = quantInfo(f);
    if (out !== null && f) {
      const identity = (f.name === 'F32' && dtype === 'f32') || (f.name === 'F16' && dtype === 'f16');
      d.dtype = dtype;
      d.byteLength = t.elements * outBytes;
      if (!identity) {
        if (!f.supported) throw fail('UnsupportedFormat', t, `${f.name} has no kernel in this build; pass dtype: 'raw'`, shard);
        d.mode = f.name === 'I2_S' ? 'whole' : 'stream';
        d.format = f.id;
        d.out = out;
      }
    }
    descs[t.index] = d;
  }

  const scan = new Uint8Array(tensors.length);
  const outputs = [];
  for (const d of descs) {
    if (!d) continue;
    scan[d.index] = 1;
    outputs.push(d);
  }
  for (const c of companionOf.keys()) if (typeof c === 'number') scan[c] = 1;
  return { outputs, descs, scan, companionOf, companionArea, anyWhole: outputs.some((d) => d.mode === 'whole') };
}
