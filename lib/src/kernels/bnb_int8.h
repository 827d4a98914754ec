// weightstream — bitsandbytes' 8-bit weights (QuantFormat::BnbInt8, LLM.int8), shared by the
// reference and SIMD128 kernels and the Dequantizer.
//
// bitsandbytes (bitsandbytes-foundation/bitsandbytes) nn/modules.py Int8Params / Linear8bitLt
// saves the row-wise quantized weight CB as `weight` (I8 [out, in]), its row scales as `SCB`
// (F32 [out]) and `weight_format` (0: "row", the only one _load_from_state_dict accepts).
// int8_vectorwise_quant (backends/default/ops.py) writes round(A * (127 / absmax_row)), and
// _ops.py's default int8_vectorwise_dequant undoes it as `A * stats.view(-1, 1) *
// 7.874015718698502e-3`: the I8 value times its row's SCB in f32, then times the constant in f32
// (torch computes a float32 tensor times a Python float in float32: 0x3C010204), two roundings
// — transformers' integrations/bitsandbytes.py dequantize_bnb_weight calls exactly that.
//
// The Dequantizer decodes in units of G values, G the largest power of two up to 256 dividing
// row_elems: a unit never crosses a row, so it has one SCB.
#pragma once

#include <stdint.h>
#include <string.h>

#include "weightstream/dequant.h"

namespace ws {
namespace kernels {

// 7.874015718698502e-3 (1 / 127 as Python writes it) rounded to f32, as torch uses it.
constexpr float kBnbInt8Inverse127 = 7.874015718698502e-3f;

inline uint32_t bnb_int8_unit(uint64_t row_elems) {
  uint32_t g = 256;
  while (g > 1 && row_elems % g != 0) g >>= 1;
  return g;
}

// SCB of the unit starting at element e.
inline float bnb_int8_scb(const DequantSpec& s, uint64_t e) {
  float v;
  memcpy(&v, s.scales + 4 * (e / s.row_elems), 4);
  return v;
}

}  // namespace kernels
}  // namespace ws
