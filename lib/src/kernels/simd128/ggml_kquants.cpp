// SIMD128 kernels for GGML's K-quants (Q2_K..Q8_K) and IQ4_XS: 256-value super-blocks with
// packed sub-block scales (FORMATS.md §6; operation order of reference/ggml_k_quants.cpp).
//
// Per block, the sub-block factors (d·sc, dmin·m) are computed in vectors, exactly as the
// reference computes them one by one, and kept in a small array; each 16-value run splats its
// factor. The quants are unpacked 16 at a time as bytes, widened and converted exactly, then
// y = factor·q (− min) with the reference's roundings.
//
// At the end, the f16 kernels of Q4_K, IQ4_XS (tables per 32-value sub-block), Q5_K and Q6_K
// (per value), after f16_util.h.
#include "../kernel_api.h"
#include "f16_out.h"
#include "f16_util.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// 16 bytes -> 4 vectors of their values as f32 (signed), for the scale arrays.
inline void i8x16_to_f32(v128_t q, v128_t out[4]) {
  out[0] = wasm_f32x4_convert_i32x4(i8_lanes<0>(q));
  out[1] = wasm_f32x4_convert_i32x4(i8_lanes<1>(q));
  out[2] = wasm_f32x4_convert_i32x4(i8_lanes<2>(q));
  out[3] = wasm_f32x4_convert_i32x4(i8_lanes<3>(q));
}

// dst[k] = d * float(q[k]) for 16 signed bytes q (the reference's `d * float(sc)`).
inline void scale_times(float* dst, v128_t q, v128_t d) {
  v128_t f[4];
  i8x16_to_f32(q, f);
  for (int k = 0; k < 4; ++k) wasm_v128_store(dst + 4 * k, wasm_f32x4_mul(d, f[k]));
}

// Bytes where `bit` is set in h: `val`, else 0.
inline v128_t bit_to(v128_t h, v128_t bit, v128_t val) {
  return wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(h, bit), bit), val);
}

// Q4_K/Q5_K: the eight 6-bit scales and mins of 12 packed bytes, as bytes: sc0..7 then m0..7.
// The same bit moves as the reference's k4_scale_min, four bytes at a time.
inline v128_t k4_scales_mins(const uint8_t* p) {
  const uint32_t u0 = load_u32(p), u1 = load_u32(p + 4), u2 = load_u32(p + 8);
  const uint32_t k6 = 0x3F3F3F3Fu, k4 = 0x0F0F0F0Fu, k2 = 0x03030303u;
  const uint32_t sc_lo = u0 & k6;                                // sc 0..3: q[j] & 63
  const uint32_t sc_hi = (u2 & k4) | (((u0 >> 6) & k2) << 4);    // sc 4..7: q[j+4]&15 | q[j-4]>>6<<4
  const uint32_t m_lo = u1 & k6;                                 // m 0..3: q[j+4] & 63
  const uint32_t m_hi = ((u2 >> 4) & k4) | (((u1 >> 6) & k2) << 4);  // m 4..7: q[j+4]>>4 | q[j]>>6<<4
  return wasm_i32x4_make(int32_t(sc_lo), int32_t(sc_hi), int32_t(m_lo), int32_t(m_hi));
}

}  // namespace

namespace simd {

static void Q2_K_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 84, dst += 256) {
    const v128_t d = wasm_f32x4_splat(f16_at(src + 80)), dmin = wasm_f32x4_splat(f16_at(src + 82));
    alignas(16) float dl[16], ml[16];
    const v128_t sc = wasm_v128_load(src);
    scale_times(dl, lo_nibbles(sc), scale24(d));  // d * (sc & 15) * 2^-24 (both products exact)
    scale_times(ml, hi_nibbles(sc), dmin);  // dmin * (sc >> 4)
    for (int h = 0; h < 2; ++h) {
      const v128_t q0 = wasm_v128_load(src + 16 + 32 * h), q1 = wasm_v128_load(src + 32 + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const int is = 8 * h + 2 * j;
        float* y = dst + 128 * h + 32 * j;
        store_i8x16_scaled_minus(y, byte_shr_and(q0, 2 * j, 3), wasm_f32x4_splat(dl[is]),
                                 wasm_f32x4_splat(ml[is]));
        store_i8x16_scaled_minus(y + 16, byte_shr_and(q1, 2 * j, 3), wasm_f32x4_splat(dl[is + 1]),
                                 wasm_f32x4_splat(ml[is + 1]));
      }
    }
  }
}

static void Q3_K_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t four = splat_u8(4), zero = wasm_i32x4_splat(0);
  for (size_t b = 0; b < n; ++b, src += 110, dst += 256) {
    const v128_t d = wasm_f32x4_splat(f16_at(src + 108));
    // Sixteen 6-bit scales (+32): low nibbles from bytes 0..7 (scales 8..15 the high nibbles),
    // top two bits from bytes 8..11 (scale i: byte 8 + i%4 at shift 2·(i/4)), four at a time.
    const uint32_t a0 = load_u32(src + 96), a1 = load_u32(src + 100), a2 = load_u32(src + 104);
    const uint32_t k4 = 0x0F0F0F0Fu, k2 = 0x03030303u;
    const v128_t s = wasm_i32x4_make(int32_t((a0 & k4) | (((a2 >> 0) & k2) << 4)), int32_t((a1 & k4) | (((a2 >> 2) & k2) << 4)),
                                     int32_t(((a0 >> 4) & k4) | (((a2 >> 4) & k2) << 4)),
                                     int32_t(((a1 >> 4) & k4) | (((a2 >> 6) & k2) << 4)));
    alignas(16) float dl[16];
    scale_times(dl, wasm_i8x16_sub(s, splat_u8(32)), scale24(d));  // d * (scale - 32) * 2^-24
    const v128_t hm0 = wasm_v128_load(src), hm1 = wasm_v128_load(src + 16);
    for (int h = 0; h < 2; ++h) {
      const v128_t q0 = wasm_v128_load(src + 32 + 32 * h), q1 = wasm_v128_load(src + 48 + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const v128_t bit = splat_u8(uint8_t(1u << (4 * h + j)));
        // q in -4..3: the low two bits minus 4 where the hmask bit is clear.
        const v128_t m0 = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(hm0, bit), zero), four);
        const v128_t m1 = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(hm1, bit), zero), four);
        const v128_t v0 = wasm_i8x16_sub(byte_shr_and(q0, 2 * j, 3), m0);
        const v128_t v1 = wasm_i8x16_sub(byte_shr_and(q1, 2 * j, 3), m1);
        const int is = 8 * h + 2 * j;
        float* y = dst + 128 * h + 32 * j;
        store_i8x16_scaled(y, v0, wasm_f32x4_splat(dl[is]));
        store_i8x16_scaled(y + 16, v1, wasm_f32x4_splat(dl[is + 1]));
      }
    }
  }
}

static void Q4_K_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 144, dst += 256) {
    const v128_t d = wasm_f32x4_splat(f16_at(src)), dmin = wasm_f32x4_splat(f16_at(src + 2));
    const v128_t sm = k4_scales_mins(src + 4);
    alignas(16) float ds[16], ms[16];  // d·sc (0..7) and dmin·m (8..15 of the second array)
    scale_times(ds, sm, scale24(d));  // d·sc·2^-24 (exact)
    scale_times(ms, sm, dmin);
    const uint8_t* q = src + 16;
    for (int c = 0; c < 4; ++c, q += 32) {
      const v128_t q0 = wasm_v128_load(q), q1 = wasm_v128_load(q + 16);
      float* y = dst + 64 * c;
      const v128_t d1 = wasm_f32x4_splat(ds[2 * c]), m1 = wasm_f32x4_splat(ms[8 + 2 * c]);
      const v128_t d2 = wasm_f32x4_splat(ds[2 * c + 1]), m2 = wasm_f32x4_splat(ms[8 + 2 * c + 1]);
      store_i8x16_scaled_minus(y, lo_nibbles(q0), d1, m1);
      store_i8x16_scaled_minus(y + 16, lo_nibbles(q1), d1, m1);
      store_i8x16_scaled_minus(y + 32, hi_nibbles(q0), d2, m2);
      store_i8x16_scaled_minus(y + 48, hi_nibbles(q1), d2, m2);
    }
  }
}

static void Q5_K_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t sixteen = splat_u8(16);
  for (size_t b = 0; b < n; ++b, src += 176, dst += 256) {
    const v128_t d = wasm_f32x4_splat(f16_at(src)), dmin = wasm_f32x4_splat(f16_at(src + 2));
    const v128_t sm = k4_scales_mins(src + 4);
    alignas(16) float ds[16], ms[16];
    scale_times(ds, sm, scale24(d));  // d·sc·2^-24 (exact)
    scale_times(ms, sm, dmin);
    const v128_t qh0 = wasm_v128_load(src + 16), qh1 = wasm_v128_load(src + 32);
    const uint8_t* q = src + 48;
    for (int c = 0; c < 4; ++c, q += 32) {
      const v128_t q0 = wasm_v128_load(q), q1 = wasm_v128_load(q + 16);
      const v128_t u1 = splat_u8(uint8_t(1u << (2 * c))), u2 = splat_u8(uint8_t(2u << (2 * c)));
      float* y = dst + 64 * c;
      const v128_t d1 = wasm_f32x4_splat(ds[2 * c]), m1 = wasm_f32x4_splat(ms[8 + 2 * c]);
      const v128_t d2 = wasm_f32x4_splat(ds[2 * c + 1]), m2 = wasm_f32x4_splat(ms[8 + 2 * c + 1]);
      store_i8x16_scaled_minus(y, wasm_v128_or(lo_nibbles(q0), bit_to(qh0, u1, sixteen)), d1, m1);
      store_i8x16_scaled_minus(y + 16, wasm_v128_or(lo_nibbles(q1), bit_to(qh1, u1, sixteen)), d1, m1);
      store_i8x16_scaled_minus(y + 32, wasm_v128_or(hi_nibbles(q0), bit_to(qh0, u2, sixteen)), d2, m2);
      store_i8x16_scaled_minus(y + 48, wasm_v128_or(hi_nibbles(q1), bit_to(qh1, u2, sixteen)), d2, m2);
    }
  }
}

static void Q6_K_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t x30 = splat_u8(0x30), x20 = splat_u8(32);
  for (size_t b = 0; b < n; ++b, src += 210, dst += 256) {
    const v128_t d = wasm_f32x4_splat(f16_at(src + 208));
    alignas(16) float ds[16];
    scale_times(ds, wasm_v128_load(src + 192), scale24(d));  // d * sc (exact) * 2^-24
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = src + 64 * half;
      const uint8_t* qh = src + 128 + 32 * half;
      const float* sc = ds + 8 * half;
      for (int l0 = 0; l0 < 32; l0 += 16) {
        const int is = l0 / 16;
        const v128_t a = wasm_v128_load(ql + l0), c = wasm_v128_load(ql + 32 + l0), h = wasm_v128_load(qh + l0);
        const v128_t v1 = wasm_v128_or(lo_nibbles(a), byte_shl_and(h, 4, 0x30));
        const v128_t v2 = wasm_v128_or(lo_nibbles(c), byte_shl_and(h, 2, 0x30));
        const v128_t v3 = wasm_v128_or(hi_nibbles(a), wasm_v128_and(h, x30));
        const v128_t v4 = wasm_v128_or(hi_nibbles(c), byte_shr_and(h, 2, 0x30));
        float* y = dst + 128 * half + l0;
        store_i8x16_scaled(y, wasm_i8x16_sub(v1, x20), wasm_f32x4_splat(sc[is]));
        store_i8x16_scaled(y + 32, wasm_i8x16_sub(v2, x20), wasm_f32x4_splat(sc[is + 2]));
        store_i8x16_scaled(y + 64, wasm_i8x16_sub(v3, x20), wasm_f32x4_splat(sc[is + 4]));
        store_i8x16_scaled(y + 96, wasm_i8x16_sub(v4, x20), wasm_f32x4_splat(sc[is + 6]));
      }
    }
  }
}

static void Q8_K_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 292, dst += 256) {
    float df;
    memcpy(&df, src, 4);  // an f32 scale (the bsums after the quants are for dot products)
    const v128_t d = wasm_f32x4_splat(df);
    if (scale24_exact(df)) {  // an f32 scale: 2^-24 times it may not be exact below 2^-102
      const v128_t d24 = scale24(d);
      for (int k = 0; k < 16; ++k) store_i8x16_scaled(dst + 16 * k, wasm_v128_load(src + 4 + 16 * k), d24);
    } else {
      for (int k = 0; k < 16; ++k) store_i8x16_times(dst + 16 * k, wasm_v128_load(src + 4 + 16 * k), d);
    }
  }
}

static void IQ4_XS_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t kv = wasm_i8x16_const(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
  for (size_t b = 0; b < n; ++b, src += 136, dst += 256) {
    const v128_t d = wasm_f32x4_splat(f16_at(src));
    const uint32_t sh = load_u16(src + 2);
    const uint32_t sl = load_u32(src + 4);
    // Sub-block ib's 6-bit scale: nibble ib of scales_l (low nibble first) | bits 2ib..2ib+1 of
    // scales_h << 4; minus 32.
    int8_t ls[16] = {};
    for (int ib = 0; ib < 8; ++ib) ls[ib] = int8_t((((sl >> (4 * ib)) & 15) | (((sh >> (2 * ib)) & 3) << 4)) - 32);
    alignas(16) float dl[16];
    scale_times(dl, wasm_v128_load(ls), scale24(d));
    const uint8_t* qs = src + 8;
    for (int ib = 0; ib < 8; ++ib, qs += 16) {
      const v128_t q = wasm_v128_load(qs);
      const v128_t s = wasm_f32x4_splat(dl[ib]);
      store_i8x16_scaled(dst + 32 * ib, wasm_i8x16_swizzle(kv, lo_nibbles(q)), s);
      store_i8x16_scaled(dst + 32 * ib + 16, wasm_i8x16_swizzle(kv, hi_nibbles(q)), s);
    }
  }
}


// The exported kernels: each body through run_kernel (block bytes, block values).
void Q2_K(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q2_K_body, src, n, dst, ctx, 84, 256);
}
void Q3_K(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q3_K_body, src, n, dst, ctx, 110, 256);
}
void Q4_K(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q4_K_body, src, n, dst, ctx, 144, 256);
}
void Q5_K(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q5_K_body, src, n, dst, ctx, 176, 256);
}
void Q6_K(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q6_K_body, src, n, dst, ctx, 210, 256);
}
void Q8_K(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(Q8_K_body, src, n, dst, ctx, 292, 256);
}
void IQ4_XS(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(IQ4_XS_body, src, n, dst, ctx, 136, 256);
}

// ---- f16 output ----

namespace {

// 16 signed bytes -> dst[k] = p * float(q[k]) for a prescaled f16 scale p: the reference's d * sc,
// scaled, exact (at most 19 significant bits, on the 2^-136 grid).
inline void prescaled_scales(float* dst, v128_t q, v128_t p) { scale_times(dst, q, p); }

}  // namespace

// Per 32-value sub-block, d·sc·q - dmin·m for the sixteen codes: a general f32 table. With d and
// dmin below 64, every product and difference prescaled sits on the 2^-136 grid and stays below
// 63·64·15 + 63·64 < 65536 (f16_util.h).
void Q4_K_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();  // constants hoisted (f16_util.h)
  const v128_t k[4] = {hoisted(wasm_f32x4_make(0, 2, 4, 6)), hoisted(wasm_f32x4_make(1, 3, 5, 7)),
                       hoisted(wasm_f32x4_make(8, 10, 12, 14)), hoisted(wasm_f32x4_make(9, 11, 13, 15))};
  const v128_t lanes[4] = {hoisted(u8_lanes_index(0)), hoisted(u8_lanes_index(1)), hoisted(u8_lanes_index(2)),
                           hoisted(u8_lanes_index(3))};
  for (size_t b = 0; b < n; ++b, src += 144, dst += 256) {
    const uint32_t hd = load_u16(src), hm = load_u16(src + 2);
    if (!f16_below(hd & 0x7FFF, 20) || !f16_below(hm & 0x7FFF, 20)) {
      decode_f16_via_f32(Q4_K, src, 1, 144, 256, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    // d·sc and dmin·m of the eight sub-blocks, prescaled, in four vectors (sc, m: 0..63); each
    // sub-block splats its pair from a lane (one shuffle each, no trip through memory).
    const v128_t sm = k4_scales_mins(src + 4);
    const v128_t pd = splat_u32(prescaled_f16(hd)), pm = splat_u32(prescaled_f16(hm));
    const v128_t D0 = wasm_f32x4_mul(pd, wasm_f32x4_convert_i32x4(lookup16(sm, lanes[0])));
    const v128_t D1 = wasm_f32x4_mul(pd, wasm_f32x4_convert_i32x4(lookup16(sm, lanes[1])));
    const v128_t M0 = wasm_f32x4_mul(pm, wasm_f32x4_convert_i32x4(lookup16(sm, lanes[2])));
    const v128_t M1 = wasm_f32x4_mul(pm, wasm_f32x4_convert_i32x4(lookup16(sm, lanes[3])));
    // Sub-blocks 2c (low nibbles) and 2c+1 (high nibbles) of chunk c's 32 bytes.
    auto chunk = [&](const uint8_t* q, uint16_t* y, v128_t d1, v128_t m1, v128_t d2, v128_t m2) {
      v128_t t1[4], t2[4];
      for (int i = 0; i < 4; ++i) {
        t1[i] = wasm_f32x4_sub(wasm_f32x4_mul(d1, k[i]), m1);
        t2[i] = wasm_f32x4_sub(wasm_f32x4_mul(d2, k[i]), m2);
      }
      const NibbleTable tab1 = table_from_prescaled(t1, c), tab2 = table_from_prescaled(t2, c);
      const v128_t q0 = wasm_v128_load(q), q1 = wasm_v128_load(q + 16);
      store_codes(y, tab1, nibbles_lo(q0, c));
      store_codes(y + 16, tab1, nibbles_lo(q1, c));
      store_codes(y + 32, tab2, nibbles_hi(q0, c));
      store_codes(y + 48, tab2, nibbles_hi(q1, c));
    };
    chunk(src + 16, dst, lane_splat<0>(D0), lane_splat<0>(M0), lane_splat<1>(D0), lane_splat<1>(M0));
    chunk(src + 48, dst + 64, lane_splat<2>(D0), lane_splat<2>(M0), lane_splat<3>(D0), lane_splat<3>(M0));
    chunk(src + 80, dst + 128, lane_splat<0>(D1), lane_splat<0>(M1), lane_splat<1>(D1), lane_splat<1>(M1));
    chunk(src + 112, dst + 192, lane_splat<2>(D1), lane_splat<2>(M1), lane_splat<3>(D1), lane_splat<3>(M1));
  }
}

// Per 32-value sub-block, dl·kvalue with dl = d·(ls - 32): sixteen exact products. |d| below 16
// keeps them below 16·32·127 < 65536.
void IQ4_XS_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  // The kvalues in table_from_prescaled's order (codes 0, 2, 4, 6; 1, 3, 5, 7; ...).
  const v128_t k[4] = {hoisted(wasm_f32x4_make(-127, -83, -49, -22)), hoisted(wasm_f32x4_make(-104, -65, -35, -10)),
                       hoisted(wasm_f32x4_make(1, 25, 53, 89)), hoisted(wasm_f32x4_make(13, 38, 69, 113))};
  for (size_t b = 0; b < n; ++b, src += 136, dst += 256) {
    const uint32_t hd = load_u16(src);
    if (!f16_below(hd & 0x7FFF, 18)) {
      decode_f16_via_f32(IQ4_XS, src, 1, 136, 256, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    const uint32_t sh = load_u16(src + 2);
    const uint32_t sl = load_u32(src + 4);
    int8_t ls[16] = {};
    for (int ib = 0; ib < 8; ++ib) ls[ib] = int8_t((((sl >> (4 * ib)) & 15) | (((sh >> (2 * ib)) & 3) << 4)) - 32);
    alignas(16) float dl[16];
    prescaled_scales(dl, wasm_v128_load(ls), splat_u32(prescaled_f16(hd)));
    const uint8_t* qs = src + 8;
    for (int ib = 0; ib < 8; ++ib, qs += 16) {
      const v128_t s = wasm_f32x4_splat(dl[ib]);
      const v128_t t[4] = {wasm_f32x4_mul(s, k[0]), wasm_f32x4_mul(s, k[1]), wasm_f32x4_mul(s, k[2]),
                           wasm_f32x4_mul(s, k[3])};
      const NibbleTable tab = table_from_prescaled(t, c);
      const v128_t q = wasm_v128_load(qs);
      store_codes(dst + 32 * ib, tab, nibbles_lo(q, c));
      store_codes(dst + 32 * ib + 16, tab, nibbles_hi(q, c));
    }
  }
}

// d·sc·q - dmin·m per value (general f32: the subtraction rounds), as Q4_K's table but with
// q up to 31: d and dmin below 32 keep 63·32·31 + 63·32 < 65536.
void Q5_K_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  const v128_t sixteen = hoisted(splat_u8(16));
  const v128_t even_lo = hoisted(even_bytes_lanes(0)), odd_lo = hoisted(even_bytes_lanes(1)),
               even_hi = hoisted(even_bytes_lanes(8)), odd_hi = hoisted(even_bytes_lanes(9));
  for (size_t b = 0; b < n; ++b, src += 176, dst += 256) {
    const uint32_t hd = load_u16(src), hm = load_u16(src + 2);
    if (!f16_below(hd & 0x7FFF, 19) || !f16_below(hm & 0x7FFF, 19)) {
      decode_f16_via_f32(Q5_K, src, 1, 176, 256, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    const v128_t sm = k4_scales_mins(src + 4);
    alignas(16) float ds[16], ms[16];
    prescaled_scales(ds, sm, splat_u32(prescaled_f16(hd)));
    prescaled_scales(ms, sm, splat_u32(prescaled_f16(hm)));
    const v128_t qh0 = wasm_v128_load(src + 16), qh1 = wasm_v128_load(src + 32);
    const uint8_t* q = src + 48;
    // 16 codes (u8) -> 16 halves of d·q - m at y.
    auto run = [&](uint16_t* y, v128_t codes, v128_t d, v128_t m) {
      const v128_t x[4] = {wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(lookup16(codes, even_lo))), m),
                           wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(lookup16(codes, odd_lo))), m),
                           wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(lookup16(codes, even_hi))), m),
                           wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(lookup16(codes, odd_hi))), m)};
      wasm_v128_store(y, halves_from_prescaled(x[0], x[1], c));
      wasm_v128_store(y + 8, halves_from_prescaled(x[2], x[3], c));
    };
    for (int ch = 0; ch < 4; ++ch, q += 32) {
      const v128_t q0 = wasm_v128_load(q), q1 = wasm_v128_load(q + 16);
      const v128_t u1 = splat_u8(uint8_t(1u << (2 * ch))), u2 = splat_u8(uint8_t(2u << (2 * ch)));
      uint16_t* y = dst + 64 * ch;
      const v128_t d1 = wasm_f32x4_splat(ds[2 * ch]), m1 = wasm_f32x4_splat(ms[8 + 2 * ch]);
      const v128_t d2 = wasm_f32x4_splat(ds[2 * ch + 1]), m2 = wasm_f32x4_splat(ms[8 + 2 * ch + 1]);
      run(y, wasm_v128_or(nibbles_lo(q0, c), bit_to(qh0, u1, sixteen)), d1, m1);
      run(y + 16, wasm_v128_or(nibbles_lo(q1, c), bit_to(qh1, u1, sixteen)), d1, m1);
      run(y + 32, wasm_v128_or(nibbles_hi(q0, c), bit_to(qh0, u2, sixteen)), d2, m2);
      run(y + 48, wasm_v128_or(nibbles_hi(q1, c), bit_to(qh1, u2, sixteen)), d2, m2);
    }
  }
}

// d·sc·q per value, exact (at most 11 + 7 + 5 significant bits): |q|·|d·sc| rounded by
// round_bits, the sign from q's and the scale's. |d| below 16: 16·128·32 = 65536 is never
// reached (|sc| <= 128 with q in -32..31, |q·sc| <= 4096).
void Q6_K_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  const v128_t x30 = hoisted(splat_u8(0x30)), x20 = hoisted(splat_u8(32)), x80 = hoisted(splat_u8(0x80));
  const v128_t sign_lo = hoisted(wasm_i8x16_const(-1, 0, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6, -1, 7));
  const v128_t sign_hi = hoisted(wasm_i8x16_const(-1, 8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15));
  const v128_t abs_mask = hoisted(splat_u32(0x7FFFFFFFu));
  const v128_t lanes[4] = {hoisted(u8_lanes_index(0)), hoisted(u8_lanes_index(1)), hoisted(u8_lanes_index(2)),
                           hoisted(u8_lanes_index(3))};
  for (size_t b = 0; b < n; ++b, src += 210, dst += 256) {
    const uint32_t hd = load_u16(src + 208);
    if (!f16_below(hd & 0x7FFF, 18)) {
      decode_f16_via_f32(Q6_K, src, 1, 210, 256, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    alignas(16) float ds[16];
    prescaled_scales(ds, wasm_v128_load(src + 192), splat_u32(prescaled_f16(hd)));
    // 16 codes q (-32..31, as bytes) with scale s -> 16 halves at y.
    auto run = [&](uint16_t* y, v128_t q, float s) {
      const v128_t aq = wasm_i8x16_abs(q);
      const v128_t sg = wasm_v128_and(wasm_v128_xor(q, splat_u8(uint8_t(f32_to_bits(s) >> 24))), x80);
      const v128_t as = wasm_v128_and(wasm_f32x4_splat(s), abs_mask);
      v128_t m[4];
      for (int k = 0; k < 4; ++k) m[k] = round_bits(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(lookup16(aq, lanes[k])), as), c);
      const v128_t m0 = wasm_u16x8_narrow_i32x4(m[0], m[1]), m1 = wasm_u16x8_narrow_i32x4(m[2], m[3]);
      wasm_v128_store(y, wasm_v128_or(m0, lookup16(sg, sign_lo)));
      wasm_v128_store(y + 8, wasm_v128_or(m1, lookup16(sg, sign_hi)));
    };
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = src + 64 * half;
      const uint8_t* qh = src + 128 + 32 * half;
      const float* sc = ds + 8 * half;
      for (int l0 = 0; l0 < 32; l0 += 16) {
        const int is = l0 / 16;
        const v128_t a = wasm_v128_load(ql + l0), b2 = wasm_v128_load(ql + 32 + l0), h = wasm_v128_load(qh + l0);
        const v128_t v1 = wasm_v128_or(nibbles_lo(a, c), wasm_v128_and(wasm_i16x8_shl(h, 4), x30));
        const v128_t v2 = wasm_v128_or(nibbles_lo(b2, c), wasm_v128_and(wasm_i16x8_shl(h, 2), x30));
        const v128_t v3 = wasm_v128_or(nibbles_hi(a, c), wasm_v128_and(h, x30));
        const v128_t v4 = wasm_v128_or(nibbles_hi(b2, c), wasm_v128_and(wasm_u16x8_shr(h, 2), x30));
        uint16_t* y = dst + 128 * half + l0;
        run(y, wasm_i8x16_sub(v1, x20), sc[is]);
        run(y + 32, wasm_i8x16_sub(v2, x20), sc[is + 2]);
        run(y + 64, wasm_i8x16_sub(v3, x20), sc[is + 4]);
        run(y + 96, wasm_i8x16_sub(v4, x20), sc[is + 6]);
      }
    }
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
