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
// as vLLM decodes it, and the convention warns of it (gptq_all_ones_lanes below; warning.h
// GptqZeroSpill, where GPTQModel's reading is cited). The value is scale * (q - zero)
// (GPTQModel TorchQuantLinear.dequantize_weight: scales[g_idx] * (weight - zeros[g_idx])), in
// f32: q - zero is an exact integer, so one rounding.
//
// 3 bits (AutoGPTQ qlinear_cuda_old.py `pack`'s bits == 3 branch, GPTQModel's the same): 32
// codes take 3 words, written 10 + 1 + 10 + 1 + 10 — code 10 is word 0's top 2 bits and word 1's
// bit 0, code 21 word 1's bit 31 and word 2's low 2 bits: the 3 words are one little-endian
// string of 96 bits, code k at bit 3k (vLLM csrc/quantization/gptq/qdq_3.cuh and q_gemm.cu's
// MatrixView_q3_row read it so). qzeros are packed the same way along the outputs.
//
// Logical order: row o (an output feature) is qweight's column o, the stored words read down
// it; a block is one word (32 / bits values of one row) for bits 2, 4 and 8, and 3 words (32
// values) for bits 3: rows hold in_features values, a multiple of a block's.
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

// Words and values of a block (see above): 3 words of 32 codes for 3 bits, else one word.
inline uint32_t gptq_block_words(uint32_t bits) { return bits == 3 ? 3 : 1; }
inline uint32_t gptq_block_values(uint32_t bits) { return bits == 3 ? 32 : 32 / bits; }

// Code k of the block at `p`: `bits` bits from bit bits * k of its words read as one
// little-endian bit string (a 3-bit code may straddle two words).
inline uint32_t gptq_code(const uint8_t* p, uint32_t bits, uint32_t k) {
  const uint32_t bit = bits * k, at = bit % 32;
  uint32_t v = gptq_le32(p + 4 * (bit / 32)) >> at;
  if (at + bits > 32) v |= gptq_le32(p + 4 * (bit / 32 + 1)) << (32 - at);
  return v & ((1u << bits) - 1);
}

// The lanes of a qzeros block (one word; 3 words at 3 bits) whose code is all ones. In a v1
// checkpoint that is a stored -1: a zero point of 0, whose ones AutoGPTQ's `pack` ORs into every
// lane above it (warning.h GptqZeroSpill; gptq_convention.cpp warns of it).
inline uint32_t gptq_all_ones_lanes(const uint8_t* block, uint32_t bits) {
  const uint32_t n = gptq_block_values(bits), mask = (1u << bits) - 1;
  uint32_t hits = 0;
  for (uint32_t k = 0; k < n; ++k) hits += gptq_code(block, bits, k) == mask;
  return hits;
}

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
  const uint32_t bw = gptq_block_words(s.bits), bv = gptq_block_values(s.bits);
  const uint64_t words = rows / bv * bw;  // of a group's qzeros row
  const uint8_t* block = s.gptq_zeros + 4 * (uint64_t(g) * words + o / bv * bw);
  const uint32_t lane = s.gptq_awq_zeros ? kAwqReverseOrder[o % 8] : uint32_t(o % bv);
  return int32_t(gptq_code(block, s.bits, lane)) + int32_t(s.gptq_zero_add);
}

// The scale of row o in group g (scales are [groups, rows]; AWQ GEMV's [rows, zero_words * 8]).
inline float gptq_scale(const DequantSpec& s, uint64_t rows, uint32_t g, uint64_t o) {
  if (s.gptq_zero_words) return fp8_scale_at(s, o * s.gptq_zero_words * gptq_per_word(s) + g);
  return fp8_scale_at(s, uint64_t(g) * rows + o);
}

}  // namespace kernels
}  // namespace ws
