// Reference kernels for GGML's IQ formats: IQ4_NL, IQ4_XS (non-linear 4-bit levels) and the
// lattice-grid formats IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M (FORMATS.md §6 names
// them; the layouts and formulas below are read from ggml's dequantize_row_iq* and block_iq*
// structs, the grids are in iq_grids.cpp).
//
// The grid formats decode groups of 8 (IQ2, IQ1) or 4 (IQ3) values at once: a code selects a grid
// point (a row of small magnitudes), a sign byte flips some of its elements, and a per-32 (or
// per-16) scale multiplies. Rounding follows ggml's expression order; every intermediate is
// exact anyway (an fp16 times a scale of at most 5 significant bits times a grid value of at most
// 6, or, for IQ1, times a grid value ± 1/8), so the outputs equal the exact products.
#include "../kernel_api.h"
#include "ggml_blocks.h"
#include "iq_grids.h"

namespace ws {
namespace kernels {

using ggml::fp16_at;
using ggml::le16;
using ggml::le32;

namespace {

// ggml writes `v * (±1.0f)`. For every number that equals flipping the sign bit (zeros
// included); for a NaN (an inf/NaN scale) the sign a multiplication gives is up to the compiler —
// optimized builds, ggml's among them, emit a negation. Flipping the bit explicitly gives that
// result at every optimization level and on every target.
inline float with_sign(float v, uint32_t sign_bits, int k) {
  return bits_to_f32(f32_to_bits(v) ^ (((sign_bits >> k) & 1u) << 31));
}

// IQ2_XXS / IQ2_XS / IQ2_S / IQ3_XXS sub-block scale from a 4-bit field s: d·(s + 1/2)·factor.
inline float half_step_scale(float d, uint32_t s, float factor) { return d * (0.5f + float(s)) * factor; }

}  // namespace

// {fp16 d; u8 qs[16]}: y = d·K[nibble], nibble order as Q4_0.
void ref::IQ4_NL(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = fp16_at(src);
    const uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = d * float(kIq4nlValues[qs[j] & 0x0F]);
      dst[j + 16] = d * float(kIq4nlValues[qs[j] >> 4]);
    }
  }
}

// {fp16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: eight 32-value sub-blocks as IQ4_NL with
// 6-bit scales ls (low 4 bits: nibble ib%2 of scales_l[ib/2]; top 2: bits 2ib of scales_h),
// dl = d·(ls - 32).
void ref::IQ4_XS(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 136) {
    const float d = fp16_at(src);
    const uint16_t scales_h = le16(src + 2);
    const uint8_t* scales_l = src + 4;
    const uint8_t* qs = src + 8;
    for (int ib = 0; ib < 8; ++ib, qs += 16, dst += 32) {
      const int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0F) | (((scales_h >> (2 * ib)) & 3) << 4);
      const float dl = d * float(ls - 32);
      for (int j = 0; j < 16; ++j) {
        dst[j] = dl * float(kIq4nlValues[qs[j] & 0x0F]);
        dst[j + 16] = dl * float(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

// {fp16 d; u16 qs[32]}: per 32 values, 8 bytes = two u32 words. Word 0's four bytes are grid
// codes (8 values each); word 1 holds four 7-bit sign indices (bits 7l..7l+6) and a 4-bit scale
// in bits 28..31: db = d·(s + 1/2)/4.
void ref::IQ2_XXS(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 66) {
    const float d = fp16_at(src);
    for (int ib = 0; ib < 8; ++ib) {
      const uint8_t* g = src + 2 + 8 * ib;
      const uint32_t aux = le32(g + 4);
      const float db = half_step_scale(d, aux >> 28, 0.25f);
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint64_t point = kIq2xxsGrid[g[l]];
        const uint32_t signs = kIq2Signs[(aux >> (7 * l)) & 127];
        for (int k = 0; k < 8; ++k) dst[k] = with_sign(db * float(grid_u8(point, k)), signs, k);
      }
    }
  }
}

// {fp16 d; u16 qs[32]; u8 scales[8]}: each u16 is a 9-bit grid code plus a 7-bit sign index
// (bits 9..15). Per 32 values one scales byte: its low nibble scales the first 16 values, the high
// nibble the next 16; db = d·(s + 1/2)/4.
void ref::IQ2_XS(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 74) {
    const float d = fp16_at(src);
    const uint8_t* scales = src + 66;
    for (int ib = 0; ib < 8; ++ib) {
      const float db[2] = {half_step_scale(d, scales[ib] & 0x0F, 0.25f), half_step_scale(d, scales[ib] >> 4, 0.25f)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint16_t q = le16(src + 2 + 2 * (4 * ib + l));
        const uint64_t point = kIq2xsGrid[q & 511];
        const uint32_t signs = kIq2Signs[q >> 9];
        for (int k = 0; k < 8; ++k) dst[k] = with_sign(db[l / 2] * float(grid_u8(point, k)), signs, k);
      }
    }
  }
}

// {fp16 d; u8 qs[32]; u8 signs[32]; u8 qh[8]; u8 scales[8]}: 10-bit grid codes, the low 8 bits in
// qs and the top 2 in qh[ib] (bits 2l..2l+1 for group l of sub-block ib); full 8-bit sign masks;
// scales as IQ2_XS.
void ref::IQ2_S(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 82) {
    const float d = fp16_at(src);
    const uint8_t* qs = src + 2;
    const uint8_t* signs = src + 34;
    const uint8_t* qh = src + 66;
    const uint8_t* scales = src + 74;
    for (int ib = 0; ib < 8; ++ib) {
      const float db[2] = {half_step_scale(d, scales[ib] & 0x0F, 0.25f), half_step_scale(d, scales[ib] >> 4, 0.25f)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint32_t code = qs[4 * ib + l] | (((qh[ib] >> (2 * l)) & 3u) << 8);
        const uint64_t point = kIq2sGrid[code];
        const uint32_t sign_bits = signs[4 * ib + l];
        for (int k = 0; k < 8; ++k) dst[k] = with_sign(db[l / 2] * float(grid_u8(point, k)), sign_bits, k);
      }
    }
  }
}

// {fp16 d; u8 qs[64]; u8 scales_and_signs[32]}: per 32 values, 8 grid codes (4 values each) and
// one u32 with four 7-bit sign indices (one per 8 values) and a 4-bit scale in bits 28..31:
// db = d·(s + 1/2)/2.
void ref::IQ3_XXS(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 98) {
    const float d = fp16_at(src);
    for (int ib = 0; ib < 8; ++ib) {
      const uint8_t* qs = src + 2 + 8 * ib;
      const uint32_t aux = le32(src + 66 + 4 * ib);
      const float db = half_step_scale(d, aux >> 28, 0.5f);
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint32_t signs = kIq2Signs[(aux >> (7 * l)) & 127];
        const uint32_t p1 = kIq3xxsGrid[qs[2 * l]], p2 = kIq3xxsGrid[qs[2 * l + 1]];
        for (int k = 0; k < 4; ++k) {
          dst[k] = with_sign(db * float(uint8_t(p1 >> (8 * k))), signs, k);
          dst[k + 4] = with_sign(db * float(uint8_t(p2 >> (8 * k))), signs, k + 4);
        }
      }
    }
  }
}

// {fp16 d; u8 qs[64]; u8 qh[8]; u8 signs[32]; u8 scales[4]}: 9-bit grid codes (4 values each),
// code m of sub-block ib = qs[8ib + m] | bit m of qh[ib] << 8; full sign masks (one byte per 8
// values); a 4-bit scale per 32 values (low nibble of scales[ib/2] for even ib, high for odd):
// db = d·(1 + 2s).
void ref::IQ3_S(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 110) {
    const float d = fp16_at(src);
    const uint8_t* qh = src + 66;
    const uint8_t* signs = src + 74;
    const uint8_t* scales = src + 106;
    for (int ib = 0; ib < 8; ++ib) {
      const uint8_t* qs = src + 2 + 8 * ib;
      const float db = d * float(1 + 2 * ((scales[ib / 2] >> (4 * (ib % 2))) & 0x0F));
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint32_t p1 = kIq3sGrid[qs[2 * l] | (((qh[ib] >> (2 * l)) & 1u) << 8)];
        const uint32_t p2 = kIq3sGrid[qs[2 * l + 1] | (((qh[ib] >> (2 * l + 1)) & 1u) << 8)];
        const uint32_t sign_bits = signs[4 * ib + l];
        for (int k = 0; k < 4; ++k) {
          dst[k] = with_sign(db * float(uint8_t(p1 >> (8 * k))), sign_bits, k);
          dst[k + 4] = with_sign(db * float(uint8_t(p2 >> (8 * k))), sign_bits, k + 4);
        }
      }
    }
  }
}

// {fp16 d; u8 qs[32]; u16 qh[8]}: per 32 values one u16: bits 3l..3l+2 are the top bits of group
// l's 11-bit grid code (low 8 in qs), bits 12..14 a scale s (dl = d·(2s + 1)), bit 15 the sign of
// a ±1/8 shift added to every grid element: y = dl·(g + delta).
void ref::IQ1_S(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 50) {
    const float d = fp16_at(src);
    const uint8_t* qs = src + 2;
    for (int ib = 0; ib < 8; ++ib) {
      const uint16_t qh = le16(src + 34 + 2 * ib);
      const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
      const float delta = (qh & 0x8000) ? -0.125f : 0.125f;
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint64_t point = kIq1sGrid[qs[4 * ib + l] | (((qh >> (3 * l)) & 7u) << 8)];
        for (int k = 0; k < 8; ++k) dst[k] = dl * (float(grid_i8(point, k)) + delta);
      }
    }
  }
}

// {u8 qs[32]; u8 qh[16]; u8 scales[8]}: no d field — the fp16 super-scale is the four top
// nibbles of the scales words (ggml::iq1m_super_scale). Per 32 values: qh bytes 2ib, 2ib+1 hold,
// per nibble, 3 top code bits and a delta sign (bit 3) for one 8-value group; the 12 low bits of
// scales word ib/2 hold two 3-bit scales per sub-block (bits 6·(ib%2) for groups 0-1, +3 for
// groups 2-3): dl = d·(2s + 1), y = dl·(g + delta).
void ref::IQ1_M(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 56) {
    const float d = fp16_to_f32(ggml::iq1m_super_scale(src));
    const uint8_t* qs = src;
    const uint8_t* qh = src + 32;
    for (int ib = 0; ib < 8; ++ib) {
      const uint16_t sc = le16(src + ggml::kIq1mScalesOffset + 2 * (ib / 2));
      const int shift = 6 * (ib % 2);
      const float dl[2] = {d * float(2 * ((sc >> shift) & 7) + 1), d * float(2 * ((sc >> (shift + 3)) & 7) + 1)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint8_t h = uint8_t(qh[2 * ib + l / 2] >> (4 * (l % 2)));  // this group's nibble
        const uint64_t point = kIq1sGrid[qs[4 * ib + l] | ((h & 7u) << 8)];
        const float delta = (h & 8) ? -0.125f : 0.125f;
        for (int k = 0; k < 8; ++k) dst[k] = dl[l / 2] * (float(grid_i8(point, k)) + delta);
      }
    }
  }
}

}  // namespace kernels
}  // namespace ws
