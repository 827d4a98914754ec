// SIMD128 kernels for GGML's lattice-grid IQ formats: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
// IQ1_S, IQ1_M (reference/ggml_iq_quants.cpp; grids in reference/iq_grids.h).
//
// Grid points are gathered with scalar loads (wasm SIMD has no gather) straight into vector lanes
// (a point is 8 or 4 bytes, element k in byte k), two 8-value groups per vector; the arithmetic is
// vector. Sub-block scales are computed with the reference's scalar expressions.
//
// Signs: the reference forms (db·g)·(±1.0f), which compilers turn into a negation (GCC and
// clang fold x·-1 to -x): the sign bit of db·g flips, a NaN's included. Here the sign is applied
// to the integer grid value first and the product is db·(±g). For every db but NaN the two agree
// bit for bit, because no IQ2/IQ3 grid element is 0 (magnitudes 8..62;
// tests/kernels/simd_differential_test.cpp checks the tables), so ±g is never a signed zero and
// rounding is sign-symmetric. A NaN db (only from an invalid block, validate = false) is rare
// enough for a scalar path that flips the sign bit of db·g as the reference does.
#include "../kernel_api.h"
#include "../reference/ggml_blocks.h"
#include "../reference/iq_grids.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// One sign byte broadcast over 8 lanes, for two groups: bytes 0..7 from s0, 8..15 from s1.
// Returns 0xFF in the bytes whose element is negative (bit k of the group's sign byte).
inline v128_t sign_mask(uint32_t s0, uint32_t s1) {
  const v128_t bits = wasm_i8x16_const(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const v128_t v = wasm_i8x16_shuffle(wasm_i32x4_make(int32_t(s0), int32_t(s1), 0, 0), wasm_i32x4_splat(0), 0, 0, 0, 0, 0,
                                      0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4);
  return wasm_i8x16_eq(wasm_v128_and(v, bits), bits);
}

// ±g: negate the bytes where mask is 0xFF ((g ^ m) - m).
inline v128_t apply_sign(v128_t g, v128_t m) { return wasm_i8x16_sub(wasm_v128_xor(g, m), m); }

// 16 grid magnitudes g with sign mask m -> y = db·g, negated where m is set (see above).
inline void store_signed_grid(float* y, v128_t g, v128_t m, float db) {
  if (db == db) {
    store_i8x16_scaled(y, apply_sign(g, m), scale24(wasm_f32x4_splat(db)));  // db >= 2^-27: exact
    return;
  }
  alignas(16) uint8_t gb[16], mb[16];
  wasm_v128_store(gb, g);
  wasm_v128_store(mb, m);
  for (int k = 0; k < 16; ++k) y[k] = bits_to_f32(f32_to_bits(db * float(gb[k])) ^ (mb[k] ? 0x80000000u : 0u));
}

// The reference's d·(s + 1/2)·factor, same operations.
inline float half_step_scale(float d, uint32_t s, float factor) { return d * (0.5f + float(s)) * factor; }

// 16 grid values (signed bytes g) -> y = dl * (float(g) + delta): IQ1's shifted grid. delta_lo for
// the first 8 values, delta_hi for the next 8.
inline void store_iq1(float* y, v128_t g, v128_t dl, v128_t delta_lo, v128_t delta_hi) {
  wasm_v128_store(y + 0, wasm_f32x4_mul(dl, wasm_f32x4_add(wasm_f32x4_convert_i32x4(i8_lanes<0>(g)), delta_lo)));
  wasm_v128_store(y + 4, wasm_f32x4_mul(dl, wasm_f32x4_add(wasm_f32x4_convert_i32x4(i8_lanes<1>(g)), delta_lo)));
  wasm_v128_store(y + 8, wasm_f32x4_mul(dl, wasm_f32x4_add(wasm_f32x4_convert_i32x4(i8_lanes<2>(g)), delta_hi)));
  wasm_v128_store(y + 12, wasm_f32x4_mul(dl, wasm_f32x4_add(wasm_f32x4_convert_i32x4(i8_lanes<3>(g)), delta_hi)));
}

inline v128_t points2(uint64_t a, uint64_t b) { return wasm_i64x2_make(int64_t(a), int64_t(b)); }

}  // namespace

namespace simd {

static void IQ2_XXS_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 66) {
    const float d = f16_at(src);
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const uint8_t* g = src + 2 + 8 * ib;
      const uint32_t aux = load_u32(g + 4);
      const float db = half_step_scale(d, aux >> 28, 0.25f);
      for (int l = 0; l < 4; l += 2) {
        const v128_t v = points2(kIq2xxsGrid[g[l]], kIq2xxsGrid[g[l + 1]]);
        const v128_t m = sign_mask(kIq2Signs[(aux >> (7 * l)) & 127], kIq2Signs[(aux >> (7 * l + 7)) & 127]);
        store_signed_grid(dst + 8 * l, v, m, db);
      }
    }
  }
}

static void IQ2_XS_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 74) {
    const float d = f16_at(src);
    const uint8_t* scales = src + 66;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      for (int l = 0; l < 4; l += 2) {  // groups l, l+1 share the nibble l/2 of scales[ib]
        const float db = half_step_scale(d, (scales[ib] >> (2 * l)) & 0x0F, 0.25f);
        const uint16_t q0 = load_u16(src + 2 + 2 * (4 * ib + l)), q1 = load_u16(src + 2 + 2 * (4 * ib + l + 1));
        const v128_t v = points2(kIq2xsGrid[q0 & 511], kIq2xsGrid[q1 & 511]);
        store_signed_grid(dst + 8 * l, v, sign_mask(kIq2Signs[q0 >> 9], kIq2Signs[q1 >> 9]), db);
      }
    }
  }
}

static void IQ2_S_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 82) {
    const float d = f16_at(src);
    const uint8_t* qs = src + 2;
    const uint8_t* signs = src + 34;
    const uint8_t* qh = src + 66;
    const uint8_t* scales = src + 74;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      for (int l = 0; l < 4; l += 2) {
        const float db = half_step_scale(d, (scales[ib] >> (2 * l)) & 0x0F, 0.25f);
        const uint32_t c0 = qs[4 * ib + l] | (((qh[ib] >> (2 * l)) & 3u) << 8);
        const uint32_t c1 = qs[4 * ib + l + 1] | (((qh[ib] >> (2 * l + 2)) & 3u) << 8);
        const v128_t v = points2(kIq2sGrid[c0], kIq2sGrid[c1]);
        store_signed_grid(dst + 8 * l, v, sign_mask(signs[4 * ib + l], signs[4 * ib + l + 1]), db);
      }
    }
  }
}

static void IQ3_XXS_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 98) {
    const float d = f16_at(src);
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const uint8_t* qs = src + 2 + 8 * ib;
      const uint32_t aux = load_u32(src + 66 + 4 * ib);
      const float db = half_step_scale(d, aux >> 28, 0.5f);
      for (int l = 0; l < 4; l += 2) {  // group l = points qs[2l], qs[2l+1] (4 values each)
        const v128_t v = wasm_i32x4_make(int32_t(kIq3xxsGrid[qs[2 * l]]), int32_t(kIq3xxsGrid[qs[2 * l + 1]]),
                                         int32_t(kIq3xxsGrid[qs[2 * l + 2]]), int32_t(kIq3xxsGrid[qs[2 * l + 3]]));
        const v128_t m = sign_mask(kIq2Signs[(aux >> (7 * l)) & 127], kIq2Signs[(aux >> (7 * l + 7)) & 127]);
        store_signed_grid(dst + 8 * l, v, m, db);
      }
    }
  }
}

static void IQ3_S_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 110) {
    const float d = f16_at(src);
    const uint8_t* qh = src + 66;
    const uint8_t* signs = src + 74;
    const uint8_t* scales = src + 106;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const uint8_t* qs = src + 2 + 8 * ib;
      const float db = d * float(1 + 2 * ((scales[ib / 2] >> (4 * (ib % 2))) & 0x0F));
      const uint32_t h = qh[ib];
      for (int l = 0; l < 4; l += 2) {
        // Point m of this sub-block: qs[8ib + m] | bit m of qh[ib] << 8.
        const int m0 = 2 * l;
        const v128_t v = wasm_i32x4_make(int32_t(kIq3sGrid[qs[m0] | (((h >> m0) & 1u) << 8)]),
                                         int32_t(kIq3sGrid[qs[m0 + 1] | (((h >> (m0 + 1)) & 1u) << 8)]),
                                         int32_t(kIq3sGrid[qs[m0 + 2] | (((h >> (m0 + 2)) & 1u) << 8)]),
                                         int32_t(kIq3sGrid[qs[m0 + 3] | (((h >> (m0 + 3)) & 1u) << 8)]));
        store_signed_grid(dst + 8 * l, v, sign_mask(signs[4 * ib + l], signs[4 * ib + l + 1]), db);
      }
    }
  }
}

static void IQ1_S_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 50) {
    const float d = f16_at(src);
    const uint8_t* qs = src + 2;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const uint32_t qh = load_u16(src + 34 + 2 * ib);
      const v128_t dl = wasm_f32x4_splat(d * float(2 * ((qh >> 12) & 7) + 1));
      // ±1/8 with the sign from bit 15, without a branch (random signs mispredict).
      const v128_t delta = wasm_f32x4_splat(bits_to_f32(0x3E000000u | ((qh & 0x8000u) << 16)));
      for (int l = 0; l < 4; l += 2) {
        const v128_t v = points2(kIq1sGrid[qs[4 * ib + l] | (((qh >> (3 * l)) & 7u) << 8)],
                                 kIq1sGrid[qs[4 * ib + l + 1] | (((qh >> (3 * l + 3)) & 7u) << 8)]);
        store_iq1(dst + 8 * l, v, dl, delta, delta);
      }
    }
  }
}

static void IQ1_M_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 56) {
    const float d = fp16_to_f32(ggml::iq1m_super_scale(src));
    const uint8_t* qs = src;
    const uint8_t* qh = src + 32;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const uint32_t sc = load_u16(src + ggml::kIq1mScalesOffset + 2 * (ib / 2));
      const int shift = 6 * (ib % 2);
      // Groups 0-1 and 2-3 of the sub-block: qh byte 2ib + l/2, its low nibble for group l, high
      // for l+1 (3 code bits, then the delta sign).
      for (int l = 0; l < 4; l += 2) {
        const v128_t dl = wasm_f32x4_splat(d * float(2 * ((sc >> (shift + 3 * (l / 2))) & 7) + 1));
        const uint32_t h = qh[2 * ib + l / 2];
        const v128_t v = points2(kIq1sGrid[qs[4 * ib + l] | ((h & 7u) << 8)], kIq1sGrid[qs[4 * ib + l + 1] | (((h >> 4) & 7u) << 8)]);
        // ±1/8 per group, the sign from bit 3 of its nibble, without a branch.
        store_iq1(dst + 8 * l, v, dl, wasm_f32x4_splat(bits_to_f32(0x3E000000u | ((h & 0x08u) << 28))),
                  wasm_f32x4_splat(bits_to_f32(0x3E000000u | ((h & 0x80u) << 24))));
      }
    }
  }
}


// The exported kernels: each body through run_kernel (block bytes, block values).
void IQ2_XXS(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ2_XXS_body, src, n, dst, ctx, 66, 256);
}
void IQ2_XS(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ2_XS_body, src, n, dst, ctx, 74, 256);
}
void IQ2_S(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ2_S_body, src, n, dst, ctx, 82, 256);
}
void IQ3_XXS(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ3_XXS_body, src, n, dst, ctx, 98, 256);
}
void IQ3_S(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ3_S_body, src, n, dst, ctx, 110, 256);
}
void IQ1_S(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ1_S_body, src, n, dst, ctx, 50, 256);
}
void IQ1_M(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ1_M_body, src, n, dst, ctx, 56, 256);
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
