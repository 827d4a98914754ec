// SIMD128 kernels for GGML's small blocks: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, NVFP4,
// Q1_0, Q2_0 (FORMATS.md §6), and the f16 kernels of Q4_0, Q4_1, Q8_0, IQ4_NL, MXFP4 and NVFP4
// (at the end; the scheme is f16_util.h's).
//
// Every value is "small integer times scale" (plus m for Q4_1/Q5_1): the integer is exact in f32,
// so each output is one rounding of the same product the reference computes (two for the
// `q*d + m` forms, multiply then add, never fused). Scales of four blocks are converted in one
// vector and splatted per block.
#include "../kernel_api.h"
#include "f16_out.h"
#include "f16_util.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// Calls f(block_index, d24) for every block, d24 the block's f16 field at d_off times 2^-24
// (exact: see simd_util.h; the plain d with kScale24 = false), splatted; blocks in fours share
// one vector conversion.
template <bool kScale24 = true, class F>
inline void for_blocks_f16(const uint8_t* src, size_t n, size_t bb, size_t d_off, F&& f) {
  const v128_t k = wasm_f32x4_splat(kScale24 ? kTwoPowMinus24 : 1.0f);
  size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    const v128_t d = wasm_f32x4_mul(load_f16x4_strided(src + b * bb + d_off, bb), k);
    f(b + 0, lane_splat<0>(d));
    f(b + 1, lane_splat<1>(d));
    f(b + 2, lane_splat<2>(d));
    f(b + 3, lane_splat<3>(d));
  }
  for (; b < n; ++b) f(b, wasm_f32x4_mul(wasm_f32x4_splat(f16_at(src + b * bb + d_off)), k));
}

// As above with two f16 fields: d (passed as d24) and m (as is).
template <class F>
inline void for_blocks_f16_pair(const uint8_t* src, size_t n, size_t bb, size_t d_off, size_t m_off, F&& f) {
  size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    const v128_t d = scale24(load_f16x4_strided(src + b * bb + d_off, bb));
    const v128_t m = load_f16x4_strided(src + b * bb + m_off, bb);
    f(b + 0, lane_splat<0>(d), lane_splat<0>(m));
    f(b + 1, lane_splat<1>(d), lane_splat<1>(m));
    f(b + 2, lane_splat<2>(d), lane_splat<2>(m));
    f(b + 3, lane_splat<3>(d), lane_splat<3>(m));
  }
  for (; b < n; ++b)
    f(b, scale24(wasm_f32x4_splat(f16_at(src + b * bb + d_off))), wasm_f32x4_splat(f16_at(src + b * bb + m_off)));
}

// The fifth bits of Q5_0/Q5_1: bit j of the little-endian u32 qh belongs to element j. Returns
// 0x10 in byte k of `lo` where bit k is set and likewise for `hi` with bits 16..31.
struct HighBits {
  v128_t lo, hi;
};
inline HighBits q5_high_bits(uint32_t qh) {
  const v128_t v = wasm_i32x4_splat(int32_t(qh));
  const v128_t bit = wasm_i8x16_const(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const v128_t b01 = wasm_i8x16_shuffle(v, v, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const v128_t b23 = wasm_i8x16_shuffle(v, v, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const v128_t x10 = splat_u8(0x10);
  // (byte & bit) == bit gives 0xFF where set; keep 0x10 of it.
  return {wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(b01, bit), bit), x10),
          wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(b23, bit), bit), x10)};
}

// The FP4 value tables, as signed bytes: MXFP4/NVFP4 use 2 x E2M1; IQ4_NL its non-linear grid.
inline v128_t kvalues_mxfp4() { return wasm_i8x16_const(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12); }
inline v128_t kvalues_iq4nl() {
  return wasm_i8x16_const(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}

// MXFP4 scale (e8m0_half_to_f32) of four blocks, one E8M0 byte per u32 lane: 2^(e-128); e = 0, 1
// are the f32 subnormals 2^-128 = bits 1<<21 and 2^-127 = bits 2<<21.
inline v128_t e8m0_half_x4(v128_t e) {
  const v128_t normal = wasm_i32x4_shl(wasm_i32x4_sub(e, wasm_i32x4_splat(1)), 23);
  const v128_t sub = wasm_i32x4_shl(wasm_i32x4_add(e, wasm_i32x4_splat(1)), 21);
  return wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(e, wasm_i32x4_splat(2)));
}

// NVFP4 sub-block scale (ue4m3_half_to_f32), one byte per u32 lane: bit 7 ignored, the E4M3
// value times 0.5; 0x7F (not 0xFF) gives 0.
inline v128_t ue4m3_half_x4(v128_t x) {
  const v128_t v = e4m3_magnitude<1>(wasm_v128_and(x, splat_u32(0x7F)));
  return wasm_v128_andnot(v, wasm_i32x4_eq(x, splat_u32(0x7F)));
}

}  // namespace

namespace simd {

static void Q4_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t eight = splat_u8(8);
  for_blocks_f16(src, n, 18, 0, [&](size_t b, v128_t d) {
    const v128_t q = wasm_v128_load(src + b * 18 + 2);
    float* y = dst + b * 32;
    store_i8x16_scaled(y, wasm_i8x16_sub(lo_nibbles(q), eight), d);
    store_i8x16_scaled(y + 16, wasm_i8x16_sub(hi_nibbles(q), eight), d);
  });
}

static void Q4_1_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for_blocks_f16_pair(src, n, 20, 0, 2, [&](size_t b, v128_t d, v128_t m) {
    const v128_t q = wasm_v128_load(src + b * 20 + 4);
    float* y = dst + b * 32;
    store_i8x16_scaled_plus(y, lo_nibbles(q), d, m);
    store_i8x16_scaled_plus(y + 16, hi_nibbles(q), d, m);
  });
}

static void Q5_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t sixteen = splat_u8(16);
  for_blocks_f16(src, n, 22, 0, [&](size_t b, v128_t d) {
    const uint8_t* blk = src + b * 22;
    const HighBits h = q5_high_bits(load_u32(blk + 2));
    const v128_t q = wasm_v128_load(blk + 6);
    float* y = dst + b * 32;
    store_i8x16_scaled(y, wasm_i8x16_sub(wasm_v128_or(lo_nibbles(q), h.lo), sixteen), d);
    store_i8x16_scaled(y + 16, wasm_i8x16_sub(wasm_v128_or(hi_nibbles(q), h.hi), sixteen), d);
  });
}

static void Q5_1_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for_blocks_f16_pair(src, n, 24, 0, 2, [&](size_t b, v128_t d, v128_t m) {
    const uint8_t* blk = src + b * 24;
    const HighBits h = q5_high_bits(load_u32(blk + 4));
    const v128_t q = wasm_v128_load(blk + 8);
    float* y = dst + b * 32;
    store_i8x16_scaled_plus(y, wasm_v128_or(lo_nibbles(q), h.lo), d, m);
    store_i8x16_scaled_plus(y + 16, wasm_v128_or(hi_nibbles(q), h.hi), d, m);
  });
}

static void Q8_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for_blocks_f16(src, n, 34, 0, [&](size_t b, v128_t d) {
    const uint8_t* blk = src + b * 34;
    float* y = dst + b * 32;
    store_i8x16_scaled(y, wasm_v128_load(blk + 2), d);
    store_i8x16_scaled(y + 16, wasm_v128_load(blk + 18), d);
  });
}

static void IQ4_NL_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t k = kvalues_iq4nl();
  for_blocks_f16(src, n, 18, 0, [&](size_t b, v128_t d) {
    const v128_t q = wasm_v128_load(src + b * 18 + 2);
    float* y = dst + b * 32;
    store_i8x16_scaled(y, wasm_i8x16_swizzle(k, lo_nibbles(q)), d);
    store_i8x16_scaled(y + 16, wasm_i8x16_swizzle(k, hi_nibbles(q)), d);
  });
}

static void MXFP4_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t k = kvalues_mxfp4();
  // The scale 2^(e-128) times 2^-24 stays exact from e = 26 (2^-126, the smallest normal f32);
  // blocks with smaller scales (never seen in real files) take the widening conversion.
  auto block = [&](size_t b, v128_t d, bool scaled) {
    const v128_t q = wasm_v128_load(src + b * 17 + 1);
    const v128_t lo = wasm_i8x16_swizzle(k, lo_nibbles(q)), hi = wasm_i8x16_swizzle(k, hi_nibbles(q));
    float* y = dst + b * 32;
    if (scaled) {
      const v128_t d24 = scale24(d);
      store_i8x16_scaled(y, lo, d24);
      store_i8x16_scaled(y + 16, hi, d24);
    } else {
      store_i8x16_times(y, lo, d);
      store_i8x16_times(y + 16, hi, d);
    }
  };
  size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    const uint8_t* p = src + b * 17;
    const v128_t d = e8m0_half_x4(wasm_i32x4_make(p[0], p[17], p[34], p[51]));
    const bool scaled = p[0] >= 26 && p[17] >= 26 && p[34] >= 26 && p[51] >= 26;
    block(b + 0, lane_splat<0>(d), scaled);
    block(b + 1, lane_splat<1>(d), scaled);
    block(b + 2, lane_splat<2>(d), scaled);
    block(b + 3, lane_splat<3>(d), scaled);
  }
  for (; b < n; ++b) block(b, wasm_f32x4_splat(e8m0_half_to_f32(src[b * 17])), src[b * 17] >= 26);
}

static void NVFP4_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t k = kvalues_mxfp4();
  for (size_t b = 0; b < n; ++b) {
    const uint8_t* blk = src + b * 36;
    float* y = dst + b * 64;
    // The four sub-block scales, one per lane.
    const v128_t s = u8_lanes<0>(wasm_v128_load32_zero(blk));
    const v128_t ds = scale24(ue4m3_half_x4(s));  // the smallest nonzero scale is 2^-10: exact
    const v128_t q01 = wasm_v128_load(blk + 4), q23 = wasm_v128_load(blk + 20);
    // Sub-block s is bytes 8s..8s+7: low nibbles are its first 8 values, high nibbles the next 8.
    const v128_t l01 = lo_nibbles(q01), h01 = hi_nibbles(q01), l23 = lo_nibbles(q23), h23 = hi_nibbles(q23);
    store_i8x16_scaled(y + 0, wasm_i8x16_swizzle(k, wasm_i64x2_shuffle(l01, h01, 0, 2)), lane_splat<0>(ds));
    store_i8x16_scaled(y + 16, wasm_i8x16_swizzle(k, wasm_i64x2_shuffle(l01, h01, 1, 3)), lane_splat<1>(ds));
    store_i8x16_scaled(y + 32, wasm_i8x16_swizzle(k, wasm_i64x2_shuffle(l23, h23, 0, 2)), lane_splat<2>(ds));
    store_i8x16_scaled(y + 48, wasm_i8x16_swizzle(k, wasm_i64x2_shuffle(l23, h23, 1, 3)), lane_splat<3>(ds));
  }
}

static void Q1_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t bits_lo = wasm_i32x4_const(1, 2, 4, 8), bits_hi = wasm_i32x4_const(16, 32, 64, 128);
  const v128_t sign = splat_u32(0x80000000u);
  for_blocks_f16<false>(src, n, 18, 0, [&](size_t b, v128_t d) {
    const uint8_t* qs = src + b * 18 + 2;
    float* y = dst + b * 128;
    const v128_t neg = wasm_v128_xor(d, sign);  // -d, as the reference's negation (NaN sign too)
    for (int k = 0; k < 16; ++k) {
      const v128_t v = wasm_i32x4_splat(qs[k]);
      wasm_v128_store(y + 8 * k, wasm_v128_bitselect(d, neg, wasm_i32x4_eq(wasm_v128_and(v, bits_lo), bits_lo)));
      wasm_v128_store(y + 8 * k + 4, wasm_v128_bitselect(d, neg, wasm_i32x4_eq(wasm_v128_and(v, bits_hi), bits_hi)));
    }
  });
}

static void Q2_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t three = splat_u8(3), one = splat_u8(1);
  for_blocks_f16(src, n, 18, 0, [&](size_t b, v128_t d) {
    const v128_t q = wasm_v128_load(src + b * 18 + 2);
    float* y = dst + b * 64;
    // Element 4i+k is bits 2k..2k+1 of byte i: split into four code planes, then interleave
    // them byte-wise back into element order, minus 1.
    const v128_t c0 = wasm_v128_and(q, three), c1 = byte_shr_and(q, 2, 3);
    const v128_t c2 = byte_shr_and(q, 4, 3), c3 = byte_shr_and(q, 6, 3);
    const v128_t c01l = wasm_i8x16_shuffle(c0, c1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t c01h = wasm_i8x16_shuffle(c0, c1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const v128_t c23l = wasm_i8x16_shuffle(c2, c3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t c23h = wasm_i8x16_shuffle(c2, c3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    store_i8x16_scaled(y + 0, wasm_i8x16_sub(wasm_i16x8_shuffle(c01l, c23l, 0, 8, 1, 9, 2, 10, 3, 11), one), d);
    store_i8x16_scaled(y + 16, wasm_i8x16_sub(wasm_i16x8_shuffle(c01l, c23l, 4, 12, 5, 13, 6, 14, 7, 15), one), d);
    store_i8x16_scaled(y + 32, wasm_i8x16_sub(wasm_i16x8_shuffle(c01h, c23h, 0, 8, 1, 9, 2, 10, 3, 11), one), d);
    store_i8x16_scaled(y + 48, wasm_i8x16_sub(wasm_i16x8_shuffle(c01h, c23h, 4, 12, 5, 13, 6, 14, 7, 15), one), d);
  });
}


// The exported kernels: each body through run_kernel (block bytes, block values).
void Q4_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q4_0_body, src, n, dst, ctx, 18, 32);
}
void Q4_1(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q4_1_body, src, n, dst, ctx, 20, 32);
}
void Q5_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q5_0_body, src, n, dst, ctx, 22, 32);
}
void Q5_1(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q5_1_body, src, n, dst, ctx, 24, 32);
}
void Q8_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q8_0_body, src, n, dst, ctx, 34, 32);
}
void IQ4_NL(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ4_NL_body, src, n, dst, ctx, 18, 32);
}
void MXFP4(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(MXFP4_body, src, n, dst, ctx, 17, 32);
}
void NVFP4(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(NVFP4_body, src, n, dst, ctx, 36, 64);
}
void Q1_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q1_0_body, src, n, dst, ctx, 18, 128);
}
void Q2_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q2_0_body, src, n, dst, ctx, 18, 64);
}


// ---- f16 output ----
//
// Constants are hoisted (f16_util.h: hoisted, F16Consts): V8 would rebuild each in the loop.

// The f16 of every value of a Q4_0 block: (q - 8) * d has nine magnitudes |q - 8| * |d|, exact
// products (4 x 11 significant bits). Fast while 8|d| < 65536.
void Q4_0_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  const v128_t k_odd = hoisted(wasm_f32x4_make(1, 3, 5, 7)), k_even = hoisted(wasm_f32x4_make(2, 4, 6, 8));
  // Code q reads magnitude |q - 8| from u16 lane |q - 8| - 1 of m (code 8: zero).
  const v128_t idx_lo = hoisted(wasm_i8x16_const(14, 12, 10, 8, 6, 4, 2, 0, -1, 0, 2, 4, 6, 8, 10, 12));
  const v128_t idx_hi = hoisted(wasm_i8x16_const(15, 13, 11, 9, 7, 5, 3, 1, -1, 1, 3, 5, 7, 9, 11, 13));
  // Codes below 8 have the sign opposite to d's, the others d's (code 8: 0 * d, a zero of d's
  // sign): the sign bits for d > 0 and d < 0, indexed by d's sign bit (a load, not a branch).
  const v128_t sign_bits[2] = {hoisted(wasm_i8x16_const(-128, -128, -128, -128, -128, -128, -128, -128, 0, 0, 0, 0, 0, 0, 0, 0)),
                               hoisted(wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, -128, -128, -128, -128, -128, -128, -128, -128))};
  for (size_t b = 0; b < n; ++b, src += 18, dst += 32) {
    const uint32_t h = load_u16(src);
    if (!f16_below(h & 0x7FFF, 27)) {
      decode_f16_via_f32(Q4_0, src, 1, 18, 32, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    const v128_t d = splat_u32(prescaled_f16_magnitude(h));
    const v128_t m = low_halves_interleaved(round_exact_bits(wasm_f32x4_mul(k_odd, d), c),
                                            round_exact_bits(wasm_f32x4_mul(k_even, d), c));
    const NibbleTable t{lookup16(m, idx_lo), wasm_v128_or(lookup16(m, idx_hi), sign_bits[h >> 15])};
    const v128_t q = wasm_v128_load(src + 2);
    store_codes(dst, t, nibbles_lo(q, c));
    store_codes(dst + 16, t, nibbles_hi(q, c));
  }
}

// q * d + m: a general f32 per code (the addition rounds). Prescaled, d and m sit on the 2^-136
// grid and so does every sum, so even sums in the f16 subnormal range come out right
// (f16_util.h); |15d| + |m| < 65536 keeps them finite.
void Q4_1_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  const v128_t k[4] = {hoisted(wasm_f32x4_make(0, 2, 4, 6)), hoisted(wasm_f32x4_make(1, 3, 5, 7)),
                       hoisted(wasm_f32x4_make(8, 10, 12, 14)), hoisted(wasm_f32x4_make(9, 11, 13, 15))};
  for (size_t b = 0; b < n; ++b, src += 20, dst += 32) {
    const uint32_t hd = load_u16(src), hm = load_u16(src + 2);
    if (!f16_below(hd & 0x7FFF, 25) || !f16_below(hm & 0x7FFF, 29)) {
      decode_f16_via_f32(Q4_1, src, 1, 20, 32, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    const v128_t d = splat_u32(prescaled_f16(hd)), m = splat_u32(prescaled_f16(hm));
    v128_t t[4];
    for (int j = 0; j < 4; ++j) t[j] = wasm_f32x4_add(wasm_f32x4_mul(k[j], d), m);
    const NibbleTable tab = table_from_prescaled(t, c);
    const v128_t q = wasm_v128_load(src + 4);
    store_codes(dst, tab, nibbles_lo(q, c));
    store_codes(dst + 16, tab, nibbles_hi(q, c));
  }
}

// q * d for 32 int8 q: per value, |q| * |d| (exact, 18 significant bits) rounded by
// round_exact_bits, the sign put back from q and d. Fast while 128|d| < 65536. Natively the
// blocks' d fields are read and checked four at a time (as the f32 kernel's for_blocks_f16):
// per block, the scalar check, the two splats and the loop were a fifth of the instructions.
void Q8_0_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  // |q| of bytes 2i (resp. 2i+1) of an 8-byte half into lane i: the even and odd elements.
  const v128_t lanes[4] = {hoisted(even_bytes_lanes(0)), hoisted(even_bytes_lanes(1)), hoisted(even_bytes_lanes(8)),
                           hoisted(even_bytes_lanes(9))};
  // Sign byte k into the high byte of u16 lane k (of the first or second eight).
  const v128_t sign_lo = hoisted(wasm_i8x16_const(-1, 0, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6, -1, 7));
  const v128_t sign_hi = hoisted(wasm_i8x16_const(-1, 8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15));
  const v128_t x80 = hoisted(splat_u8(0x80));
  // One block: d = |d| prescaled, dsign = d's sign bit (0x80) in every byte.
  auto block = [&](const uint8_t* p, uint16_t* y, v128_t d, v128_t dsign) {
    for (int half = 0; half < 2; ++half) {
      const v128_t q = wasm_v128_load(p + 2 + 16 * half);
      const v128_t aq = wasm_i8x16_abs(q);  // -128 gives 0x80: 128 as the unsigned byte it is read as
      // sign(q) ^ sign(d); for q = 0 that is d's sign, as 0 * d has.
      const v128_t s = wasm_v128_and(wasm_v128_xor(q, dsign), x80);
      v128_t m[4];
      for (int k = 0; k < 4; ++k) m[k] = round_exact_bits(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(lookup16(aq, lanes[k])), d), c);
      uint16_t* yh = y + 16 * half;
      wasm_v128_store(yh, wasm_v128_or(low_halves_interleaved(m[0], m[1]), lookup16(s, sign_lo)));
      wasm_v128_store(yh + 8, wasm_v128_or(low_halves_interleaved(m[2], m[3]), lookup16(s, sign_hi)));
    }
  };
  auto one = [&](size_t b) {
    const uint32_t h = load_u16(src + 34 * b);
    if (!f16_below(h & 0x7FFF, 23)) {
      decode_f16_via_f32(Q8_0, src + 34 * b, 1, 34, 32, dst + 32 * b, KernelContext{ctx.spec, ctx.first_block + b});
      return;
    }
    block(src + 34 * b, dst + 32 * b, splat_u32(prescaled_f16_magnitude(h)), splat_u8(uint8_t((h >> 8) & 0x80)));
  };
  size_t b = 0;
#if !defined(__wasm_simd128__)  // under V8 the four-block loop measured slower (see bench/README.md)
  // Four blocks' d fields in u32 lanes: the magnitude mask, the fast path's limit (f16_below
  // (.., 23)), d's sign (0x8000) and the lookup16 index splatting byte 1 of lane k (its sign byte).
  const v128_t mag_mask = splat_u32(0x7FFF), limit = splat_u32(24u << 10), sign32 = splat_u32(0x8000);
  const v128_t sign_byte[4] = {splat_u8(1), splat_u8(5), splat_u8(9), splat_u8(13)};
  for (; b + 4 <= n; b += 4) {
    const uint8_t* p = src + 34 * b;
    const v128_t h = wasm_i32x4_make(load_u16(p), load_u16(p + 34), load_u16(p + 68), load_u16(p + 102));
    const v128_t mag = wasm_v128_and(h, mag_mask);
    if (!wasm_i32x4_all_true(wasm_i32x4_lt(mag, limit))) {
      for (size_t k = 0; k < 4; ++k) one(b + k);
      continue;
    }
    const v128_t d = wasm_i32x4_shl(mag, 13);  // prescaled_f16_magnitude, four at once
    const v128_t ds = wasm_v128_and(h, sign32);
    uint16_t* y = dst + 32 * b;
    block(p, y, lane_splat<0>(d), lookup16(ds, sign_byte[0]));
    block(p + 34, y + 32, lane_splat<1>(d), lookup16(ds, sign_byte[1]));
    block(p + 68, y + 64, lane_splat<2>(d), lookup16(ds, sign_byte[2]));
    block(p + 102, y + 96, lane_splat<3>(d), lookup16(ds, sign_byte[3]));
  }
#endif
  for (; b < n; ++b) one(b);
}

// kvalues[q] * d: sixteen exact products (7 x 11 significant bits). Fast while 127|d| < 65536.
// Natively the d fields are read and checked four blocks at a time, as Q8_0_f16's.
void IQ4_NL_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  // |kvalues| of codes 0, 2, .., 14 and 1, 3, .., 15 (codes 0..7 negative, 8..15 positive).
  const v128_t k0e = hoisted(wasm_f32x4_make(127, 83, 49, 22)), k0o = hoisted(wasm_f32x4_make(104, 65, 35, 10));
  const v128_t k1e = hoisted(wasm_f32x4_make(1, 25, 53, 89)), k1o = hoisted(wasm_f32x4_make(13, 38, 69, 113));
  // Indexed by d's sign bit: a load, no branch on the sign.
  const v128_t sign_bits[2] = {hoisted(wasm_i8x16_const(-128, -128, -128, -128, -128, -128, -128, -128, 0, 0, 0, 0, 0, 0, 0, 0)),
                               hoisted(wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, -128, -128, -128, -128, -128, -128, -128, -128))};
  // One block from |d| prescaled (splatted) and its sign bit.
  auto block = [&](const uint8_t* p, uint16_t* y, v128_t d, uint32_t sign) {
    NibbleTable t = nibble_table(
        low_halves_interleaved(round_exact_bits(wasm_f32x4_mul(k0e, d), c), round_exact_bits(wasm_f32x4_mul(k0o, d), c)),
        low_halves_interleaved(round_exact_bits(wasm_f32x4_mul(k1e, d), c), round_exact_bits(wasm_f32x4_mul(k1o, d), c)), c);
    t.hi = wasm_v128_or(t.hi, sign_bits[sign]);
    const v128_t q = wasm_v128_load(p + 2);
    store_codes(y, t, nibbles_lo(q, c));
    store_codes(y + 16, t, nibbles_hi(q, c));
  };
  auto one = [&](size_t b) {
    const uint32_t h = load_u16(src + 18 * b);
    if (!f16_below(h & 0x7FFF, 23)) {
      decode_f16_via_f32(IQ4_NL, src + 18 * b, 1, 18, 32, dst + 32 * b, KernelContext{ctx.spec, ctx.first_block + b});
      return;
    }
    block(src + 18 * b, dst + 32 * b, splat_u32(prescaled_f16_magnitude(h)), h >> 15);
  };
  size_t b = 0;
#if !defined(__wasm_simd128__)  // under V8 the four-block loop measured slower (see bench/README.md)
  const v128_t mag_mask = splat_u32(0x7FFF), limit = splat_u32(24u << 10);  // f16_below(.., 23)
  for (; b + 4 <= n; b += 4) {
    const uint8_t* p = src + 18 * b;
    const uint32_t h0 = load_u16(p), h1 = load_u16(p + 18), h2 = load_u16(p + 36), h3 = load_u16(p + 54);
    const v128_t mag = wasm_v128_and(wasm_i32x4_make(int32_t(h0), int32_t(h1), int32_t(h2), int32_t(h3)), mag_mask);
    if (!wasm_i32x4_all_true(wasm_i32x4_lt(mag, limit))) {
      for (size_t k = 0; k < 4; ++k) one(b + k);
      continue;
    }
    const v128_t d = wasm_i32x4_shl(mag, 13);  // prescaled_f16_magnitude, four at once
    uint16_t* y = dst + 32 * b;
    block(p, y, lane_splat<0>(d), h0 >> 15);
    block(p + 18, y + 32, lane_splat<1>(d), h1 >> 15);
    block(p + 36, y + 64, lane_splat<2>(d), h2 >> 15);
    block(p + 54, y + 96, lane_splat<3>(d), h3 >> 15);
  }
#endif
  for (; b < n; ++b) one(b);
}

// kvalues (2 x E2M1: 0, 1, 2, 3, 4, 6, 8, 12 and negatives) times 2^(e-128): exact, and an f16
// whose low byte is zero. The high bytes are the kvalues' f16 high bytes with (e - 128) added to
// the exponent field (bits 2..6 of the byte); fast for e in 114..140 (|kvalue| * 2^(e-128) from
// 2^-14 to 12 * 2^12).
void MXFP4_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  const v128_t hi_1 = hoisted(wasm_i8x16_const(0, 0x3C, 0x40, 0x42, 0x44, 0x46, 0x48, 0x4A, 0, -0x44, -0x40, -0x3E, -0x3C,
                                               -0x3A, -0x38, -0x36));  // the f16 high bytes of kvalues * 1
  const v128_t nonzero = hoisted(wasm_i8x16_const(0, -1, -1, -1, -1, -1, -1, -1, 0, -1, -1, -1, -1, -1, -1, -1));
  for (size_t b = 0; b < n; ++b, src += 17, dst += 32) {
    const uint32_t e = src[0];
    if (e - 114u > 26u) {
      decode_f16_via_f32(MXFP4, src, 1, 17, 32, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    const v128_t hi = wasm_i8x16_add(hi_1, wasm_v128_and(splat_u8(uint8_t((e - 128u) << 2)), nonzero));
    const v128_t q = wasm_v128_load(src + 1);
    store_codes_hi(dst, hi, nibbles_lo(q, c), c);
    store_codes_hi(dst + 16, hi, nibbles_hi(q, c), c);
  }
}

// kvalues * ue4m3/2: at most 2 x 4 significant bits, from 2^-10 to 12 * 240: always an exact
// normal f16, so there is no exact path. The tables come from f16(s) and f16(1.5 s) of the four
// sub-block scales (fp4_scale_pairs); a block with a zero scale computes its eight magnitudes
// |kvalue| * s as prescaled f32 products instead, whose f16 is a shift.
void NVFP4_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext&) {
  const F16Consts c = f16_consts();
  const v128_t prescale = hoisted(wasm_f32x4_splat(1.925929944387236e-34f));  // 2^-112
  // Code c: kvalue 0, 1, 2, 3, 4, 6, 8, 12 (c < 8), negated for c > 8. Low byte from f16(s) (index
  // 0), f16(1.5 s) (index 8) or zero (0x80); high byte: the next index, plus 4 per power of two
  // and the sign. Sub-block k's scale pair is 2k bytes further.
  v128_t idx_lo[4], idx_hi[4];
  for (int k = 0; k < 4; ++k) {
    idx_lo[k] = hoisted(wasm_i8x16_add(wasm_i8x16_const(-128, 0, 0, 8, 0, 8, 0, 8, -128, 0, 0, 8, 0, 8, 0, 8), splat_u8(uint8_t(2 * k))));
    idx_hi[k] = hoisted(wasm_i8x16_add(wasm_i8x16_const(-128, 1, 1, 9, 1, 9, 1, 9, -128, 1, 1, 9, 1, 9, 1, 9), splat_u8(uint8_t(2 * k))));
  }
  const v128_t hi_add = hoisted(wasm_i8x16_const(0, 0, 4, 4, 8, 8, 12, 12, 0, -128, -124, -124, -120, -120, -116, -116));
  // The slow variant's: code c reads magnitude c & 7; codes 9..15 are negative (8 is +0).
  const v128_t k_lo = wasm_f32x4_make(0, 1, 2, 3), k_hi = wasm_f32x4_make(4, 6, 8, 12);
  const v128_t mag_lo = wasm_i8x16_const(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14);
  const v128_t mag_hi = wasm_i8x16_const(1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15);
  const v128_t neg_codes = wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, 0, -128, -128, -128, -128, -128, -128, -128);
  for (size_t b = 0; b < n; ++b, src += 36, dst += 64) {
    const v128_t ds = wasm_f32x4_mul(ue4m3_half_x4(u8_lanes<0>(wasm_v128_load32_zero(src))), prescale);
    const v128_t q01 = wasm_v128_load(src + 4), q23 = wasm_v128_load(src + 20);
    const v128_t l01 = nibbles_lo(q01, c), h01 = nibbles_hi(q01, c), l23 = nibbles_lo(q23, c), h23 = nibbles_hi(q23, c);
    const v128_t codes[4] = {wasm_i64x2_shuffle(l01, h01, 0, 2), wasm_i64x2_shuffle(l01, h01, 1, 3),
                             wasm_i64x2_shuffle(l23, h23, 0, 2), wasm_i64x2_shuffle(l23, h23, 1, 3)};
    if (!wasm_v128_any_true(wasm_i32x4_eq(ds, c.zero))) {
      const v128_t f = fp4_scale_pairs(ds, c);
      for (int k = 0; k < 4; ++k) {
        const NibbleTable t{lookup16(f, idx_lo[k]), wasm_i8x16_add(lookup16(f, idx_hi[k]), hi_add)};
        store_codes(dst + 16 * k, t, codes[k]);
      }
      continue;
    }
    const v128_t s[4] = {lane_splat<0>(ds), lane_splat<1>(ds), lane_splat<2>(ds), lane_splat<3>(ds)};
    for (int k = 0; k < 4; ++k) {
      const v128_t m = wasm_u16x8_narrow_i32x4(wasm_u32x4_shr(wasm_f32x4_mul(k_lo, s[k]), 13),
                                               wasm_u32x4_shr(wasm_f32x4_mul(k_hi, s[k]), 13));
      const NibbleTable t{lookup16(m, mag_lo), wasm_v128_or(lookup16(m, mag_hi), neg_codes)};
      store_codes(dst + 16 * k, t, codes[k]);
    }
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
