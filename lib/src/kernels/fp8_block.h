// weightstream — the geometry of the Hub's block-scaled FP8 weights (QuantFormat::Fp8Block),
// shared by the reference and SIMD128 kernels and the Dequantizer.
//
// A [rows, cols] weight of F8_E4M3 (or F8_E5M2) bytes and a row-major grid of
// ceil(rows / br) x ceil(cols / bc) scales: element (r, c) is multiplied by scale
// [r / br][c / bc] — DeepSeek-V3 inference/kernel.py weight_dequant_kernel (deepseek-ai/DeepSeek-V3:
// the scale grid has tl.cdiv(N, BLOCK_SIZE) columns; x is loaded as float32 and y = x * s) and
// transformers integrations/finegrained_fp8.py (huggingface/transformers: weight_scale_inv of
// shape (ceil(out / block[0]), ceil(in / block[1]))). Per-tensor and per-channel scales
// (vLLM model_executor/layers/quantization/fp8.py, `weight_scale`) are the blocks [rows, cols] and
// [1, cols]. The value is f32(fp8) * f32(scale), one IEEE multiplication (the reference's order).
//
// The Dequantizer decodes in units of G elements, G a power of two (at most 256) dividing both
// cols and bc: a unit never crosses a row or a block column, so it has one scale.
#pragma once

#include <stdint.h>

#include "fp_convert.h"
#include "weightstream/dequant.h"

namespace ws {
namespace kernels {

// The unit: the largest power of two up to 256 dividing both cols and bc (1 when either is odd).
// The kernels compute it from the spec themselves (a caller of the kernel table directly gives
// no group).
inline uint32_t fp8_block_unit(uint64_t cols, uint64_t bc) {
  if (cols == 0 || bc == 0) return 1;
  uint32_t g = 256;
  while (g > 1 && (cols % g != 0 || bc % g != 0)) g >>= 1;
  return g;
}

// Bytes of one stored scale of `d` (0: not a scale dtype of Fp8Block).
inline uint32_t fp8_scale_bytes(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::BF16:
    case DType::F16: return 2;
    case DType::F8_E8M0:
    case DType::U8: return 1;  // U8: a UE8M0 exponent (DeepSeek's scale_fmt "ue8m0")
    default: return 0;
  }
}

// Scale i of the grid as f32, exact: F32 as stored, BF16 and F16 widened, E8M0 / UE8M0 2^(e-127)
// (torch.float8_e8m0fnu: 0xFF is NaN).
inline float fp8_scale_at(const DequantSpec& s, uint64_t i) {
  const uint8_t* p = s.scales;
  switch (s.scale_dtype) {
    case DType::F32: {
      uint32_t u;
      memcpy(&u, p + 4 * i, 4);
      return bits_to_f32(u);
    }
    case DType::BF16: return bf16_to_f32_bits(uint16_t(p[2 * i] | p[2 * i + 1] << 8));
    case DType::F16: return fp16_to_f32(uint16_t(p[2 * i] | p[2 * i + 1] << 8));
    default: return e8m0fnu_to_f32(p[i]);
  }
}

// The scale of the unit starting at element `e` (an element index of the whole weight).
inline float fp8_unit_scale(const DequantSpec& s, uint64_t e) {
  const uint64_t r = e / s.row_elems, c = e % s.row_elems;
  const uint64_t grid_cols = (s.row_elems + s.block_cols - 1) / s.block_cols;
  return fp8_scale_at(s, (r / s.block_rows) * grid_cols + c / s.block_cols);
}

}  // namespace kernels
}  // namespace ws
