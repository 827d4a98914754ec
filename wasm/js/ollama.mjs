// Ollama tensor blobs (FORMATS §3): a quantized `{name}` (U32, MLX packing) with `{name}.scale`,
// `{name}.bias` (affine only) and `{name}.global_scale` (nvfp4, an F32 scalar); params from
// __metadata__ (`{name}.quant_type` / `{name}.group_size`, else the blob's `quant_type` /
// `group_size`). The rules, their order and the status names are those of
// LogicalModel::build_ollama and finish_quantized (quantized.mjs; lib/src/conventions/
// logical_model.cpp), so the JS package rejects what the library rejects, with the same codes.
import { makeError } from './errors.mjs';
import { FORMATS, finishQuantized } from './quantized.mjs';

// quant_type (with its aliases) -> mode, bits, default group.
const TYPES = {
  int4: ['affine', 4, 64], FP4: ['affine', 4, 64], Q4: ['affine', 4, 64],
  int8: ['affine', 8, 64], FP8: ['affine', 8, 64], Q8: ['affine', 8, 64],
  nvfp4: ['nvfp4', 4, 16], mxfp4: ['mxfp4', 4, 32], mxfp8: ['mxfp8', 8, 32],
};

// The blob says Ollama when a metadata key is `quant_type` or ends in `.quant_type`.
export function isOllamaBlob(header) {
  if (header.format !== 'safetensors' || !header.metadata) return false;
  return Object.keys(header.metadata).some((k) => k === 'quant_type' || k.endsWith('.quant_type'));
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
    const { k, shape } = finishQuantized((code, at) => { throw fail(code, at, name); }, t, scales, biases, global, mode, bits, group);
    weights.push({ w: t, scales, biases, global, mode, bits, group, k, format: FORMATS[mode], shape });
  }
  return { weights, companions };
}
