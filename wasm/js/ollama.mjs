// Ollama tensor blobs (FORMATS §3): a quantized `{name}` (U32, MLX packing) with `{name}.scale`,
// `{name}.bias` (affine only) and `{name}.global_scale` (nvfp4, an F32 scalar); params from
// __metadata__ (`{name}.quant_type` / `{name}.group_size`, else the blob's `quant_type` /
// `group_size`). The rules, their order and the status names are those of
// LogicalModel::build_ollama and finish_quantized (lib/src/conventions/logical_model.cpp), so the
// JS package rejects exactly what the library rejects, with the same codes and hints.
import { makeError } from './errors.mjs';

// quant_type (with its aliases) -> mode, bits, default group.
const TYPES = {
  int4: ['affine', 4, 64], FP4: ['affine', 4, 64], Q4: ['affine', 4, 64],
  int8: ['affine', 8, 64], FP8: ['affine', 8, 64], Q8: ['affine', 8, 64],
  nvfp4: ['nvfp4', 4, 16], mxfp4: ['mxfp4', 4, 32], mxfp8: ['mxfp8', 8, 32],
};
const FORMATS = { affine: 'MlxAffine', mxfp4: 'MlxMxfp4', mxfp8: 'MlxMxfp8', nvfp4: 'MlxNvfp4' };
const FLOAT_SCALES = ['BF16', 'F16', 'F32'];
const MAX_RANK = 4;  // kMaxLogicalRank (conventions.h)

// The blob says Ollama when a metadata key is `quant_type` or ends in `.quant_type`.
export function isOllamaBlob(header) {
  if (header.format !== 'safetensors' || !header.metadata) return false;
  return Object.keys(header.metadata).some((k) => k === 'quant_type' || k.endsWith('.quant_type'));
}

// quant_params_allowed (quant_params.cpp).
function allowed(mode, bits, group) {
  if (mode === 'affine') return [32, 64, 128].includes(group) && [2, 3, 4, 5, 6, 8].includes(bits);
  if (mode === 'mxfp4') return group === 32 && bits === 4;
  if (mode === 'mxfp8') return group === 32 && bits === 8;
  return group === 16 && bits === 4;  // nvfp4
}

// parse_u32 of logical_model.cpp: 1 to 9 decimal digits, nothing else.
const parseU32 = (s) => (/^[0-9]{1,9}$/.test(s) ? Number(s) : null);

// Every quantized weight of the blob: [{w, scales, biases, global, mode, bits, group, k, format,
// shape}] in table order, and the set of companion indices (never outputs themselves). Throws the
// first rejection, as build_ollama does.
export function ollamaWeights(wasm, header, shard) {
  const tensors = header.tensors;
  const meta = header.metadata ?? {};
  const byName = new Map();
  for (const t of tensors) if (!byName.has(t.name)) byName.set(t.name, t);
  // An error points at the header entry of `at` and names the weight (as the library's does).
  const fail = (code, at, name) => makeError({ code, offset: at.entryOffset, tensor: name, shard }, wasm.statusDescription(wasm.statusCode(code)));
  const weights = [];
  const companions = new Set();
  for (const t of tensors) {
    const name = t.name;
    // `.scale` and `.global_scale` are always companions; `.bias` only beside a `.scale`.
    let base = null;
    if (name.endsWith('.global_scale')) base = name.slice(0, -'.global_scale'.length);
    else if (name.endsWith('.scale')) base = name.slice(0, -'.scale'.length);
    if (base !== null) {
      if (!byName.has(base)) throw fail('ConventionOrphanCompanion', t, name);
      companions.add(t.index);
      continue;
    }
    if (name.endsWith('.bias') && byName.has(name.slice(0, -'.bias'.length) + '.scale')) {
      companions.add(t.index);
      continue;
    }
    const scales = byName.get(name + '.scale');
    if (!scales) continue;  // a plain tensor
    const biases = byName.get(name + '.bias') ?? null;
    const global = byName.get(name + '.global_scale') ?? null;
    const qt = meta[name + '.quant_type'] ?? meta.quant_type;
    if (qt === undefined) throw fail('ConventionUnknownParams', t, name);
    const row = Object.hasOwn(TYPES, qt) ? TYPES[qt] : null;
    if (!row) throw fail('ConventionUnknownQuantType', t, name);
    const [mode, bits] = row;
    let group = row[2];
    // Always trust an explicit group_size (early int4 files used 32).
    const gs = meta[name + '.group_size'] ?? meta.group_size;
    if (gs !== undefined) {
      group = parseU32(gs);
      if (!group) throw fail('ConventionUnknownParams', t, name);
    }
    // finish_quantized, check for check.
    const affine = mode === 'affine';
    if (affine && !biases) throw fail('ConventionMissingCompanion', t, name);
    if (!affine && biases) throw fail('ConventionCompanionShape', biases, name);
    if (!allowed(mode, bits, group)) throw fail('ConventionBitsNotAllowed', t, name);
    if (t.dtype !== 'U32' || t.shape.length === 0 || t.shape.length > MAX_RANK) throw fail('ConventionCompanionShape', t, name);
    if (affine ? !FLOAT_SCALES.includes(scales.dtype) : scales.dtype !== 'U8') throw fail('ConventionCompanionShape', scales, name);
    if (scales.shape.length !== t.shape.length) throw fail('ConventionCompanionShape', scales, name);
    const last = t.shape.length - 1;
    for (let d = 0; d < last; d++) if (scales.shape[d] !== t.shape[d]) throw fail('ConventionCompanionShape', scales, name);
    const rowBits = t.shape[last] * 32;
    if (rowBits % bits !== 0) throw fail('ConventionCompanionShape', t, name);
    const k = rowBits / bits;
    if (k % group !== 0) throw fail('ConventionGroupNotDividing', t, name);
    if (scales.shape[last] !== k / group) throw fail('ConventionCompanionShape', scales, name);
    if (biases) {
      if (biases.dtype !== scales.dtype || biases.shape.length !== scales.shape.length || biases.shape.some((v, d) => v !== scales.shape[d])) {
        throw fail('ConventionCompanionShape', biases, name);
      }
    }
    if (global && (mode !== 'nvfp4' || global.dtype !== 'F32' || global.elements !== 1)) throw fail('ConventionCompanionShape', global, name);
    weights.push({ w: t, scales, biases, global, mode, bits, group, k, format: FORMATS[mode], shape: [...t.shape.slice(0, -1), k] });
  }
  return { weights, companions };
}
