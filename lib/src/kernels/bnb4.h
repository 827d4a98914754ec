// weightstream — bitsandbytes' 4-bit weights (QuantFormat::Bnb4): code tables and geometry shared
// by the reference and SIMD128 kernels and the Dequantizer.
//
// bitsandbytes (bitsandbytes-foundation/bitsandbytes) packs a weight's values flattened in
// row-major order, two a byte, element 2i in the HIGH nibble: backends/default/ops.py
// quantize_4bit (`(q8[::2] << 4) | q8[1::2]`) and _dequantize_4bit_compute (`out_dq[::2] =
// A_flat >> 4`), csrc/kernels.cu kDequantizeBlockwise (`vals[j*2] = dDequantize..(qvals[j] >>
// 4)`). A value is code[nibble] * absmax[e / blocksize], one f32 multiplication (the kernel's
// `* local_abs_max`; the CPU path's `out_dq.view(-1, blocksize) * absmax`, "stays fp32").
//
// The codes are the CUDA kernels' built-in tables (csrc/kernels.cu nf4_dequantization_lut and
// fp4_dequantization_lut with dDequantizeFP4Tree's sign: lut[v & 7] * (1 - 2 * (v >> 3)), so
// code 8 is -0.0), the float literals as written there. They equal functional.py get_4bit_type's
// (NF4's list; FP4's list divided by 12) in f32.
//
// Double quantization (compress_statistics / bnb_4bit_use_double_quant): the absmax are stored as
// U8 codes of a blockwise 8-bit quantization of (absmax - offset) (functional.py quantize_4bit:
// quantize_blockwise(_absmax - offset, blocksize=256)); dequantize_4bit rebuilds them as
// dequantize_blockwise(absmax, state2) + offset — code2[q] * nested_absmax[j / 256] in f32, then
// the offset added in f32: two roundings, no fused multiply-add (lib/ builds with
// -ffp-contract=off).
//
// The Dequantizer decodes in units of G values, G the largest power of two up to 256 dividing both
// the element count and the blocksize (at least 2: whole bytes): a unit has one absmax.
#pragma once

#include <stdint.h>
#include <string.h>

#include "weightstream/dequant.h"

namespace ws {
namespace kernels {

// csrc/kernels.cu nf4_dequantization_lut, index = the nibble.
alignas(16) constexpr float kBnbNf4Code[16] = {
    -1.0f,                 -0.6961928009986877f,  -0.5250730514526367f,  -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f,  0.16093020141124725f,  0.24611230194568634f,  0.33791524171829224f,
    0.44070982933044434f,  0.5626170039176941f,   0.7229568362236023f,   1.0f};

// csrc/kernels.cu fp4_dequantization_lut (the magnitudes of codes 0..7) and the sign bit 8.
alignas(16) constexpr float kBnbFp4Code[16] = {
    0.0f,  0.005208333333f,  0.66666667f,  1.0f,  0.33333333f,  0.5f,  0.16666667f,  0.25f,
    -0.0f, -0.005208333333f, -0.66666667f, -1.0f, -0.33333333f, -0.5f, -0.16666667f, -0.25f};

inline const float* bnb4_code(const DequantSpec& s) { return s.bnb_fp4 ? kBnbFp4Code : kBnbNf4Code; }

// The unit: the largest power of two up to 256 dividing both elements and the blocksize (0 when
// none of at least 2 does: an odd count or blocksize, refused by the Dequantizer).
inline uint32_t bnb4_unit(uint64_t elements, uint64_t blocksize) {
  if (elements == 0 || blocksize == 0) return 0;
  uint32_t g = 256;
  while (g > 1 && (elements % g != 0 || blocksize % g != 0)) g >>= 1;
  return g >= 2 ? g : 0;
}

inline float bnb4_f32_at(const uint8_t* p, uint64_t i) {
  float v;
  memcpy(&v, p + 4 * i, 4);
  return v;
}

inline uint32_t bnb4_log2(uint64_t pow2) { return pow2 ? uint32_t(__builtin_ctzll(pow2)) : 0; }

// The walk of one kernel call: the unit, and shifts for the absmax of a unit (unit index >>
// unit_shift) and for the nested absmax of an absmax (>> nested_shift) — powers of two, so no
// division per unit (a 64-bit division cost as much as a 64-value unit's lookups).
struct Bnb4Walk {
  const DequantSpec* s;
  uint32_t unit, unit_shift, nested_shift;
};

inline Bnb4Walk bnb4_walk(const DequantSpec& s) {
  const uint32_t g = bnb4_unit(s.elements, s.group);
  return {&s, g, g ? bnb4_log2(s.group / g) : 0, bnb4_log2(s.nested_group)};
}

// absmax[j] as dequantize_4bit uses it: stored (F32), or rebuilt from its code (U8, nested).
inline float bnb4_absmax(const Bnb4Walk& w, uint64_t j) {
  const DequantSpec& s = *w.s;
  if (s.scale_dtype == DType::F32) return bnb4_f32_at(s.scales, j);
  const float scaled = bnb4_f32_at(s.nested_code, s.scales[j]) * bnb4_f32_at(s.nested_absmax, j >> w.nested_shift);
  return scaled + s.nested_offset;
}

// The absmax of unit u (the unit starting at element u * unit).
inline float bnb4_unit_absmax(const Bnb4Walk& w, uint64_t u) { return bnb4_absmax(w, u >> w.unit_shift); }

}  // namespace kernels
}  // namespace ws
