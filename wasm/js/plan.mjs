// What each tensor becomes for a requested output dtype ('f32' | 'f16' | 'raw'):
//   raw     bytes as stored (also F32 asked as f32, F16 as f16, and types nothing decodes: ints, F64)
//   stream  decoded as its bytes arrive (element-wise and GGML block formats, MLX weights whose
//           scales/biases come earlier in the file)
//   whole   kept whole in JS memory, then decoded: an MLX weight stored before its scales, BitNet
//           I2_S (its scale is in the tensor's last 32 bytes)
// MLX quantized weights (FORMATS §2: `p.weight` U32 + `p.scales` [+ `p.biases`]) decode to their
// logical shape; their scales and biases are read as companions and are not outputs themselves.
// Ollama blobs (FORMATS §3, ollama.mjs) likewise: `{name}` with `{name}.scale` / `.bias` /
// `.global_scale` as companions; the global scale (an F32 scalar) is read before the weight's
// decoding starts, so a weight stored before it is kept whole. UQFF layers (uqff.mjs) come
// resolved: GGML blocks, AFQ (MLX affine), F8Q8 and MXFP4 weights with their logical shapes.
import { formatFromDtype, formatFromGgml, formatTable, OutType } from './formats.mjs';
import { makeError } from './errors.mjs';
import { isOllamaBlob, ollamaWeights } from './ollama.mjs';

const DTYPES = ['f32', 'f16', 'raw'];
const AFFINE_BITS = [2, 3, 4, 5, 6, 8];
const AFFINE_GROUPS = [32, 64, 128];

function quantInfo(f, extra = {}) {
  return { format: f.name, blockElems: f.blockElems, blockBytes: f.blockBytes, ...extra };
}

// The quantization config: config.json as a whole, its "quantization" / "quantization_config"
// object, or null.
function quantConfig(q) {
  if (!q) return null;
  return q.quantization ?? q.quantization_config ?? q;
}

function fail(code, tensor, detail, shard) {
  return makeError({ code, offset: tensor.offset, tensor: tensor.name, detail, shard });
}

// bits, group and mode of one MLX weight, from the config (and its per-layer override) or, when
// the config says nothing, from the shapes where they determine them.
function mlxParams(cfg, base, w, scales, biases, shard) {
  const layer = cfg ? cfg[base] : undefined;
  if (layer === false) return null;  // the config says this layer is not quantized
  const p = { group_size: cfg?.group_size, bits: cfg?.bits, mode: cfg?.mode, ...(layer && typeof layer === 'object' ? layer : {}) };
  const packed = w.shape[w.shape.length - 1];
  const groups = scales.shape[scales.shape.length - 1];
  if (!packed || !groups) throw fail('InvalidQuantParams', w, `${w.name} has ${packed} packed words per row and ${scales.name} ${groups} scales`, shard);
  let mode = p.mode ?? (biases ? 'affine' : { 4: 'mxfp4', 2: 'nvfp4', 8: 'mxfp8' }[packed / groups]);
  if (mode === 'affine') {
    let bits = p.bits, group = p.group_size;
    if (!bits || !group) {
      // bits × group = packed words × 32 / groups: unique only for some products.
      const prod = (packed * 32) / groups;
      const c = [];
      for (const b of AFFINE_BITS) for (const g of AFFINE_GROUPS) if (b * g === prod && (!bits || b === bits) && (!group || g === group)) c.push([b, g]);
      if (c.length !== 1) {
        throw fail('InvalidQuantParams', w, c.length ? `the shapes fit ${c.map(([b, g]) => `${b}-bit groups of ${g}`).join(' or ')}; pass config.json's quantization as the quantization option` : `no bits/group_size fits ${packed} packed words and ${groups} scales per row`, shard);
      }
      [bits, group] = c[0];
    }
    const k = (packed * 32) / bits;
    if (!Number.isInteger(k) || k / group !== groups) throw fail('InvalidQuantParams', w, `${bits}-bit groups of ${group} do not fit ${packed} packed words and ${groups} scales per row`, shard);
    return { mode, bits, group, k, format: 'MlxAffine' };
  }
  const geo = { mxfp4: [4, 32, 'MlxMxfp4'], mxfp8: [8, 32, 'MlxMxfp8'], nvfp4: [4, 16, 'MlxNvfp4'] }[mode];
  if (!geo) throw fail('InvalidQuantParams', w, `unknown MLX quantization mode ${JSON.stringify(mode)}`, shard);
  const [bits, group, format] = geo;
  const k = (packed * 32) / bits;
  if (k / group !== groups) throw fail('InvalidQuantParams', w, `${mode} (groups of ${group}) does not fit ${packed} packed words and ${groups} scales per row`, shard);
  return { mode, bits, group, k, format };
}

// Plans every tensor of `header`. `select(t)` says which the caller wants (all when null).
// `uqff`: this file's part of a UQFF model (uqff.mjs), its layers already resolved.
export function planOutputs(wasm, header, { dtype = 'raw', quantization = null, select = null, shard = null, uqff = null } = {}) {
  if (!DTYPES.includes(dtype)) throw new TypeError(`weightstream: dtype must be 'f32', 'f16' or 'raw', not ${JSON.stringify(dtype)}`);
  const formats = formatTable(wasm);
  const tensors = header.tensors;
  const gguf = header.format === 'gguf';
  const dialectId = header.gguf?.dialect === 'bitnet' ? 1 : 0;
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const out = dtype === 'raw' ? null : OutType[dtype];
  const outBytes = dtype === 'f16' ? 2 : 4;
  const descs = new Array(tensors.length).fill(null);
  const companionOf = new Map();  // companion index -> weights that need it
  const consumed = new Set();
  let companionArea = 0;
  const cfg = quantConfig(quantization);

  // A quantized weight's plan: decoded to `shape`; `companions` are read first (scales, then
  // biases), `global` (an index among them, or null) is the F32 global scale.
  const addQuantized = (w, q, f, shape, companions, global, quant, spec) => {
    const elements = shape.reduce((a, b) => a * b, 1);
    const mode = companions.some((c) => tensors[c].offset > w.offset) ? 'whole' : 'stream';
    descs[w.index] = {
      index: w.index, name: w.name, dtype, shape, elements, byteLength: elements * outBytes,
      source: { dtype: w.dtype, shape: w.shape, byteLength: w.byteLength, offset: w.offset },
      quant, mode, format: f.id, out, companions, global, spec,
    };
    let area = 0;
    for (const c of companions) {
      consumed.add(c);
      if (!companionOf.has(c)) companionOf.set(c, []);
      companionOf.get(c).push(w.index);
      if (c !== global) area += Math.ceil(tensors[c].byteLength / 8) * 8;
    }
    companionArea = Math.max(companionArea, area);
  };

  if (uqff && out !== null) {
    // UQFF: version and scalar tensors, scales and biases are not outputs ('raw' lists them all).
    for (const c of uqff.consumed) consumed.add(c);
    for (const q of uqff.weights) {
      if (select && !select(q.w)) continue;
      if (!q.format.supported) throw fail('UnsupportedFormat', q.w, `UQFF ${q.quant.uqffType} (${q.format.name}) has no kernel in this build`, shard);
      addQuantized(q.w, q, q.format, q.shape, q.companions, null, q.quant, q.spec);
    }
  } else if (!gguf && out !== null && isOllamaBlob(header)) {
    // Ollama: every companion is known (and checked) before anything is planned.
    const { weights, companions } = ollamaWeights(wasm, header, shard);
    for (const c of companions) consumed.add(c);
    for (const q of weights) {
      if (select && !select(q.w)) continue;
      const f = formats.byName.get(q.format);
      if (!f.supported) throw fail('UnsupportedFormat', q.w, `Ollama ${q.mode} (${q.format}) has no kernel in this build`, shard);
      const companionList = [q.scales.index, ...(q.biases ? [q.biases.index] : []), ...(q.global ? [q.global.index] : [])];
      addQuantized(q.w, q, f, q.shape, companionList, q.global ? q.global.index : null,
        { format: q.format, mode: q.mode, bits: q.bits, groupSize: q.group, scales: q.scales.name, biases: q.biases?.name ?? null, globalScale: q.global?.name ?? null, convention: 'ollama' },
        { bits: q.bits, group: q.group, scaleDtype: wasm.dtypeNames.indexOf(q.scales.dtype), ollama: true });
    }
  } else if (!gguf && out !== null) {
    // MLX weights first: their companions are then known not to be outputs.
    for (const w of tensors) {
      if (!w.name.endsWith('.weight') || w.dtype !== 'U32') continue;
      const base = w.name.slice(0, -'.weight'.length);
      const scales = byName.get(base + '.scales');
      if (!scales) continue;
      if (select && !select(w)) continue;
      const biases = byName.get(base + '.biases') ?? null;
      const p = mlxParams(cfg, base, w, scales, biases, shard);
      if (!p) continue;
      const f = formats.byName.get(p.format);
      if (!f.supported) throw fail('UnsupportedFormat', w, `MLX ${p.mode} (${p.format}) has no kernel in this build`, shard);
      const shape = [...w.shape.slice(0, -1), p.k];
      const companions = [scales.index, ...(p.mode === 'affine' && biases ? [biases.index] : [])];
      addQuantized(w, p, f, shape, companions, null,
        { format: p.format, mode: p.mode, bits: p.bits, groupSize: p.group, scales: scales.name, biases: p.mode === 'affine' ? biases?.name ?? null : null },
        { bits: p.bits, group: p.group, scaleDtype: wasm.dtypeNames.indexOf(scales.dtype) });
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
  for (const c of companionOf.keys()) scan[c] = 1;
  return { outputs, descs, scan, companionOf, companionArea, anyWhole: outputs.some((d) => d.mode === 'whole') };
}
