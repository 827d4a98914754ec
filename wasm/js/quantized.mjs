// The checks every quantized logical weight passes (LogicalModel::finish_quantized,
// lib/src/conventions/logical_model.cpp), shared by Ollama blobs (ollama.mjs) and UQFF AFQ layers
// (uqff.mjs): same order, same statuses, so JS rejects what the library rejects.
export const FORMATS = { affine: 'MlxAffine', mxfp4: 'MlxMxfp4', mxfp8: 'MlxMxfp8', nvfp4: 'MlxNvfp4' };
const FLOAT_SCALES = ['BF16', 'F16', 'F32'];
export const MAX_RANK = 4;  // kMaxLogicalRank (conventions.h)

// quant_params_allowed (quant_params.cpp).
export function allowed(mode, bits, group) {
  if (mode === 'affine') return [32, 64, 128].includes(group) && [2, 3, 4, 5, 6, 8].includes(bits);
  if (mode === 'mxfp4') return group === 32 && bits === 4;
  if (mode === 'mxfp8') return group === 32 && bits === 8;
  return group === 16 && bits === 4;  // nvfp4
}

// Packed weight `t` (header tensor) with `scales`, `biases`, `global` (or null) under (mode, bits,
// group). `fail(code, at)` throws for the tensor `at`. Returns the logical shape and K per row.
export function finishQuantized(fail, t, scales, biases, global, mode, bits, group) {
  const affine = mode === 'affine';
  if (affine && !biases) fail('ConventionMissingCompanion', t);
  if (!affine && biases) fail('ConventionCompanionShape', biases);
  if (!allowed(mode, bits, group)) fail('ConventionBitsNotAllowed', t);
  if (t.dtype !== 'U32' || t.shape.length === 0 || t.shape.length > MAX_RANK) fail('ConventionCompanionShape', t);
  if (affine ? !FLOAT_SCALES.includes(scales.dtype) : scales.dtype !== 'U8') fail('ConventionCompanionShape', scales);
  if (scales.shape.length !== t.shape.length) fail('ConventionCompanionShape', scales);
  const last = t.shape.length - 1;
  for (let d = 0; d < last; d++) if (scales.shape[d] !== t.shape[d]) fail('ConventionCompanionShape', scales);
  const rowBits = t.shape[last] * 32;
  if (rowBits % bits !== 0) fail('ConventionCompanionShape', t);
  const k = rowBits / bits;
  if (k % group !== 0) fail('ConventionGroupNotDividing', t);
  if (scales.shape[last] !== k / group) fail('ConventionCompanionShape', scales);
  if (biases && (biases.dtype !== scales.dtype || biases.shape.length !== scales.shape.length || biases.shape.some((v, d) => v !== scales.shape[d]))) {
    fail('ConventionCompanionShape', biases);
  }
  if (global && (mode !== 'nvfp4' || global.dtype !== 'F32' || global.elements !== 1)) fail('ConventionCompanionShape', global);
  return { k, shape: [...t.shape.slice(0, -1), k] };
}
