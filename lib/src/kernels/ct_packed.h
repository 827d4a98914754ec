// weightstream — compressed-tensors' row-packed integers (QuantFormat::CtPacked), shared by the
// reference and SIMD128 kernels and the Dequantizer.
//
// Layout (neuralmagic/compressed-tensors src/compressed_tensors/compressors/quantized_compressors/
// pack_quantized.py, pack_to_int32 / unpack_from_int32): each signed `bits`-bit value q is stored
// unsigned, u = q + 2^(bits-1); 32 // bits of them fill one int32 word along the row, value i of
// the word at bit i * bits (the first in the low bits), the row padded with zeros to whole words.
// Asymmetric zero points are packed by the same function down the columns (packed_dim=0):
// word [r / pf][g] holds the zero point of row r at bit (r % pf) * bits. Files written before
// compressed-tensors packed them (its commit ed3ac7c, 2025-04: "Update packed compressor to support
// zp packing") store them unpacked, int8 [rows, groups] (QuantizationArgs.pytorch_dtype()): the
// spec's element_dtype I8 says so (anything else: packed I32 words).
//
// Value (compressed-tensors quantization/lifecycle/forward.py _dequantize): (q - zp) * scale,
// computed there in the scale's dtype; here in f32, where q - zp = u - uz is an exact integer and
// the product one IEEE multiplication (symmetric: uz = 2^(bits-1), i.e. zp = 0).
//
// naive- / int-quantized weights (naive_quantized.py: the int8 weight as quantize() left it) are
// this layout at 8 bits once each byte b is read as u = b XOR 0x80 = q + 128 (spec.ct_int8):
// value (q - zp) * scale the same.
//
// The decoder's unit is one word (pf = 32 / bits values, 4 bytes): row_elems and group are
// multiples of pf, so a word never crosses a row or a group and has one scale and zero point —
// except under activation ordering: `weight_g_idx` (the spec's gptq_g_idx, int32 [row_elems])
// names each column's group, and compressed-tensors forward.py _process_quantization (group
// strategy) permutes the columns by argsort(g_idx), dequantizes them in runs of group_size and
// permutes back, unless -1 is in g_idx (its initial value: column order, g_idx unused). With
// every group holding exactly group_size columns (the Dequantizer's check), that is column c in
// group g_idx[c]; its values then each take their own scale and zero point (ct_value_params).
#pragma once

#include <stdint.h>
#include <string.h>

#include "fp_convert.h"
#include "weightstream/dequant.h"

namespace ws {
namespace kernels {

// Values per word (bits 1..8).
inline uint32_t ct_pack_factor(uint32_t bits) { return bits ? 32 / bits : 1; }

// Bytes of one stored scale of `d` (0: not a scale dtype of CtPacked).
inline uint32_t ct_scale_bytes(DType d) {
  return d == DType::F32 ? 4 : (d == DType::BF16 || d == DType::F16) ? 2 : 0;
}

inline float ct_scale_at(const DequantSpec& s, uint64_t i) {
  const uint8_t* p = s.scales;
  if (s.scale_dtype == DType::F32) {
    uint32_t u;
    memcpy(&u, p + 4 * i, 4);
    return bits_to_f32(u);
  }
  const uint16_t h = uint16_t(p[2 * i] | p[2 * i + 1] << 8);
  return s.scale_dtype == DType::BF16 ? bf16_to_f32_bits(h) : fp16_to_f32(h);
}

// True when the columns' groups come from g_idx (the Dequantizer clears it for column order).
inline bool ct_g_idx_active(const DequantSpec& s) { return s.gptq_g_idx && !s.gptq_g_idx_is_groups; }

// The scale and unsigned zero point of row r in group g.
inline void ct_params(const DequantSpec& s, uint64_t r, uint64_t g, float* scale, int32_t* uz) {
  const uint64_t groups = s.row_elems / s.group;
  *scale = ct_scale_at(s, (r / s.block_rows) * groups + g);
  if (!s.biases) {
    *uz = int32_t(1u << (s.bits - 1));
    return;
  }
  if (s.element_dtype == DType::I8) {  // unpacked (before compressed-tensors packed them): z as stored
    *uz = int32_t(int8_t(s.biases[r * groups + g])) + int32_t(1u << (s.bits - 1));
    return;
  }
  const uint32_t pf = ct_pack_factor(s.bits);
  const uint8_t* w = s.biases + 4 * ((r / pf) * groups + g);
  const uint32_t word = uint32_t(w[0]) | uint32_t(w[1]) << 8 | uint32_t(w[2]) << 16 | uint32_t(w[3]) << 24;
  *uz = int32_t((word >> ((r % pf) * s.bits)) & ((1u << s.bits) - 1));
}

// The scale and unsigned zero point of the word whose first value is element `e` of the weight
// (column order: one group a word).
inline void ct_unit_params(const DequantSpec& s, uint64_t e, float* scale, int32_t* uz) {
  ct_params(s, e / s.row_elems, (e % s.row_elems) / s.group, scale, uz);
}

// ... of element `e` itself: its column's group from g_idx when active.
inline void ct_value_params(const DequantSpec& s, uint64_t e, float* scale, int32_t* uz) {
  const uint64_t c = e % s.row_elems;
  const uint8_t* g = s.gptq_g_idx + 4 * c;
  const uint64_t group = ct_g_idx_active(s) ? uint64_t(g[0] | g[1] << 8 | g[2] << 16 | uint32_t(g[3]) << 24) : c / s.group;
  ct_params(s, e / s.row_elems, group, scale, uz);
}

}  // namespace kernels
}  // namespace ws
