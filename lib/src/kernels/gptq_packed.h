// weightstream — GPTQ's packed integers as logical rows (QuantFormat::GptqPacked), shared by the
// reference and SIMD128 kernels and the Dequantizer.
//
// The writers: AutoGPTQ nn_modules/qlinear/__init__.py (and qlinear_cuda_old.py) `pack`, and
// GPTQModel nn_modules/qlinear/__init__.py PackableQuantLinear.pack: intweight [in, out] is packed
// along the input dimension, qweight[r][o] |= code[r * (32 / bits) + j][o] << (bits * j) — an
// int32 [in * bits / 32, out] matrix; qzeros [groups, out * bits / 32] packs the zero points
// along the output dimension the same way; scales [groups, out] (float16); g_idx [in] int32 the
// group of each input (desc_act writes it in activation order, not monotonic). checkpoint_format
// "gptq" (v1) stores each zero point minus one (`zeros -= 1` before packing), "gptq_v2" as is.
//
// The reader: vLLM csrc/quantization/gptq/q_gemm.cu (reconstruct_gptq / the exllama kernels)
// unpacks a zero lane as (qzeros >> (bits * lane)) & mask and adds 1 for v1 (0 for v2): a v1
// zero point of 0, stored as -1, spills ones into the lanes above it in AutoGPTQ's uint32
// packing, and each of those lanes then reads 2^bits — a value no writer meant; this is decoded
// as vLLM decodes it, and the convention warns of it. The value is scale * (q - zero)
// (GPTQModel TorchQuantLinear.dequantize_weight: scales[g_idx] * (weight - zeros[g_idx])), in
// f32: q - zero is an exact integer, so one rounding.
//
// Logical order: row o (an output feature) is qweight's column o, the stored words read down
// it; a block is one word (32 / bits values of one row: rows hold in_features values, a
// multiple of 32 / bits).
#pragma once

#include <stdint.h>
#include <string.h>

#include "fp8_block.h"
#include "weightstream/dequant.h"

namespace ws {
namespace kernels {

inline uint32_t gptq_le32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// Values per int32 word.
inline uint32_t gptq_per_word(const DequantSpec& s) { return 32 / s.bits; }

// The group of input i.
inline uint32_t gptq_group_of(const DequantSpec& s, uint64_t i) {
  return s.gptq_g_idx ? gptq_le32(s.gptq_g_idx + 4 * i) : uint32_t(i / s.group);
}

// AWQ's lane of output o % 8 in a zero word (AutoAWQ awq/utils/packing_utils.py
// AWQ_REVERSE_ORDER, which reverse_awq_order applies after unpack_awq; the inverse of the
// AWQ_ORDER that WQLinear_GEMM.from_linear packs with).
constexpr uint8_t kAwqReverseOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};

// The zero point of row (output) o in group g, as vLLM reads it: the lane's code plus zero_add
// (AWQ's words: the lane its interleave gives output o, spec.gptq_awq_zeros).
inline int32_t gptq_zero(const DequantSpec& s, uint64_t rows, uint32_t g, uint64_t o) {
  const uint32_t per = gptq_per_word(s);
  if (s.gptq_zero_words) {  // AWQ GEMV: [rows, zero_words], the groups along the row
    const uint32_t w = gptq_le32(s.gptq_zeros + 4 * (o * s.gptq_zero_words + g / per));
    return int32_t((w >> (s.bits * (g % per))) & ((1u << s.bits) - 1)) + int32_t(s.gptq_zero_add);
  }
  const uint64_t words = rows / per;
  const uint32_t w = gptq_le32(s.gptq_zeros + 4 * (uint64_t(g) * words + o / per));
  const uint32_t lane = s.gptq_awq_zeros ? kAwqReverseOrder[o % 8] : uint32_t(o % per);
  return int32_t((w >> (s.bits * lane)) & ((1u << s.bits) - 1)) + int32_t(s.gptq_zero_add);
}

// The scale of row o in group g (scales are [groups, rows]; AWQ GEMV's [rows, zero_words * 8]).
inline float gptq_scale(const DequantSpec& s, uint64_t rows, uint32_t g, uint64_t o) {
  if (s.gptq_zero_words) return fp8_scale_at(s, o * s.gptq_zero_words * gptq_per_word(s) + g);
  return fp8_scale_at(s, uint64_t(g) * rows + o);
}

}  // namespace kernels
}  // namespace ws
