// SIMD128 kernels of bitsandbytes' 4-bit weights (QuantFormat::Bnb4; layout, tables and upstream
// sources in ../bnb4.h). Per unit (one absmax) the 16 products code[k] * absmax are computed once,
// with the reference's one f32 multiplication each; every value of the unit is then a table
// lookup of its nibble: the f32 table split into four byte planes, each looked up with one byte
// shuffle (lookup16) and the bytes interleaved back into floats. So the output is the reference's
// bit for bit, and no value is multiplied at all.
//
// f16 output: the 16 products rounded once to f16 give a two-plane NibbleTable (f16_util.h), so
// each value is f32_to_fp16 of the reference's f32 for two lookups. The products are rounded by
// f16_util.h's prescaled rounding when every nonzero one is an f16 normal below 65536 (the absmax
// between bounds checked per unit: the usual case), else by f32_to_f16_row; both are exactly
// f32_to_fp16. Units under 32 values (a blocksize or element count with few factors of two) take
// the same tables one value at a time.
#include "../bnb4.h"
#include "../kernel_api.h"
#include "f16_out.h"
#include "f16_util.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// The 16 products of one unit as four byte planes: plane k, byte i = byte k of product i.
struct F32Planes {
  v128_t p[4];
};

struct Bnb4Consts {
  F16Consts f16;
  v128_t by_plane;  // lookup16 index regrouping a vector's bytes by plane (bytes 0,4,8,12, 1,5,...)
};

inline Bnb4Consts bnb4_consts() {
  return {f16_consts(), hoisted(wasm_i8x16_const(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15))};
}

inline F32Planes f32_planes(const v128_t code[4], float absmax, float* products, const Bnb4Consts& c) {
  const v128_t a = wasm_f32x4_splat(absmax);
  v128_t w[4];
  for (int i = 0; i < 4; ++i) {
    const v128_t v = wasm_f32x4_mul(code[i], a);
    wasm_v128_store(products + 4 * i, v);
    w[i] = lookup16(v, c.by_plane);  // 32-bit lane k = byte k of the four products
  }
  // A 4x4 transpose of 32-bit lanes: plane k = lane k of w[0..3].
  const v128_t ab_lo = wasm_i32x4_shuffle(w[0], w[1], 0, 4, 1, 5), cd_lo = wasm_i32x4_shuffle(w[2], w[3], 0, 4, 1, 5);
  const v128_t ab_hi = wasm_i32x4_shuffle(w[0], w[1], 2, 6, 3, 7), cd_hi = wasm_i32x4_shuffle(w[2], w[3], 2, 6, 3, 7);
  F32Planes t;
  t.p[0] = wasm_i64x2_shuffle(ab_lo, cd_lo, 0, 2);
  t.p[1] = wasm_i64x2_shuffle(ab_lo, cd_lo, 1, 3);
  t.p[2] = wasm_i64x2_shuffle(ab_hi, cd_hi, 0, 2);
  t.p[3] = wasm_i64x2_shuffle(ab_hi, cd_hi, 1, 3);
  return t;
}

// 16 nibble indices -> the 16 table floats, stored at y[0..16).
inline void store_lookup_f32(float* y, const F32Planes& t, v128_t idx) {
  const v128_t b0 = lookup16(t.p[0], idx), b1 = lookup16(t.p[1], idx);
  const v128_t b2 = lookup16(t.p[2], idx), b3 = lookup16(t.p[3], idx);
  const v128_t lo01 = wasm_i8x16_shuffle(b0, b1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t hi01 = wasm_i8x16_shuffle(b0, b1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const v128_t lo23 = wasm_i8x16_shuffle(b2, b3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t hi23 = wasm_i8x16_shuffle(b2, b3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  wasm_v128_store(y + 0, wasm_i16x8_shuffle(lo01, lo23, 0, 8, 1, 9, 2, 10, 3, 11));
  wasm_v128_store(y + 4, wasm_i16x8_shuffle(lo01, lo23, 4, 12, 5, 13, 6, 14, 7, 15));
  wasm_v128_store(y + 8, wasm_i16x8_shuffle(hi01, hi23, 0, 8, 1, 9, 2, 10, 3, 11));
  wasm_v128_store(y + 12, wasm_i16x8_shuffle(hi01, hi23, 4, 12, 5, 13, 6, 14, 7, 15));
}

// 16 packed bytes -> the nibbles of 32 values in element order (high nibble first).
inline void nibbles_in_order(v128_t q, v128_t* first, v128_t* second, const F16Consts& c) {
  const v128_t h = nibbles_hi(q, c), l = nibbles_lo(q, c);
  *first = wasm_i8x16_shuffle(h, l, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  *second = wasm_i8x16_shuffle(h, l, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

// The halves of codes 0..7 (k = 0) or 8..15 (k = 1) of a NibbleTable, in order.
inline v128_t store_table_halves(const NibbleTable& t, int k) {
  return k == 0 ? wasm_i8x16_shuffle(t.lo, t.hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23)
                : wasm_i8x16_shuffle(t.lo, t.hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

void Bnb4_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const Bnb4Walk w = bnb4_walk(*ctx.spec);
  const uint32_t g = w.unit, bytes = g / 2;
  const float* table = bnb4_code(*ctx.spec);
  const Bnb4Consts c = bnb4_consts();
  v128_t code[4];
  for (int i = 0; i < 4; ++i) code[i] = wasm_v128_load(table + 4 * i);
  alignas(16) float products[16];
  for (size_t b = 0; b < n; ++b) {
    const F32Planes t = f32_planes(code, bnb4_unit_absmax(w, ctx.first_block + b), products, c);
    const uint8_t* q = src + b * bytes;
    float* y = dst + b * g;
    uint32_t j = 0;
    for (; j + 16 <= bytes; j += 16) {
      v128_t first, second;
      nibbles_in_order(wasm_v128_load(q + j), &first, &second, c.f16);
      store_lookup_f32(y + 2 * j, t, first);
      store_lookup_f32(y + 2 * j + 16, t, second);
    }
    for (; j < bytes; ++j) {
      y[2 * j] = products[q[j] >> 4];
      y[2 * j + 1] = products[q[j] & 0x0F];
    }
  }
}

}  // namespace

namespace simd {

void Bnb4(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint32_t g = bnb4_unit(ctx.spec->elements, ctx.spec->group);
  run_kernel(Bnb4_body, src, n, dst, ctx, g / 2, g);
}

void Bnb4_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const Bnb4Walk w = bnb4_walk(*ctx.spec);
  const uint32_t g = w.unit, bytes = g / 2;
  const bool fp4 = ctx.spec->bnb_fp4;
  const float* table = bnb4_code(*ctx.spec);
  const F16Consts c = f16_consts();
  v128_t code[4];
  for (int i = 0; i < 4; ++i) code[i] = wasm_v128_load(table + 4 * i);
  // The codes in table_from_prescaled's order: 0,2,4,6 | 1,3,5,7 | 8,10,12,14 | 9,11,13,15.
  const v128_t split[4] = {
      wasm_i32x4_shuffle(code[0], code[1], 0, 2, 4, 6), wasm_i32x4_shuffle(code[0], code[1], 1, 3, 5, 7),
      wasm_i32x4_shuffle(code[2], code[3], 0, 2, 4, 6), wasm_i32x4_shuffle(code[2], code[3], 1, 3, 5, 7)};
  // The fast table (f16_util.h's prescaled rounding) needs every nonzero product p in
  // [2^-14, 65536) in magnitude, where p * 2^-112 is exact: |code| <= 1, and the smallest nonzero
  // |code| is NF4's 0.0796 and FP4's 1/192; these bounds keep a margin over 2^-14 / that.
  const float low = fp4 ? 0.0118f : 7.7e-4f;
  const v128_t prescale = wasm_f32x4_splat(1.925929944387236e-34f);  // 2^-112
  alignas(16) float products[16];
  alignas(16) uint16_t halves[16];
  for (size_t b = 0; b < n; ++b) {
    const float am = bnb4_unit_absmax(w, ctx.first_block + b);
    const v128_t a = wasm_f32x4_splat(am);
    const float mag = am < 0 ? -am : am;
    NibbleTable t;
    if (mag >= low && mag < 65536.0f) {
      v128_t p[4];
      for (int i = 0; i < 4; ++i) p[i] = wasm_f32x4_mul(wasm_f32x4_mul(split[i], a), prescale);
      t = table_from_prescaled(p, c);
    } else {  // small, large, inf or NaN absmax: the exact conversion of the 16 products
      for (int i = 0; i < 4; ++i) wasm_v128_store(products + 4 * i, wasm_f32x4_mul(code[i], a));
      f32_to_f16_row(products, 16, halves);
      t = nibble_table(wasm_v128_load(halves), wasm_v128_load(halves + 8), c);
    }
    const uint8_t* q = src + b * bytes;
    uint16_t* y = dst + b * g;
    uint32_t j = 0;
    for (; j + 16 <= bytes; j += 16) {
      v128_t first, second;
      nibbles_in_order(wasm_v128_load(q + j), &first, &second, c);
      store_codes(y + 2 * j, t, first);
      store_codes(y + 2 * j + 16, t, second);
    }
    if (j < bytes) {  // units under 32 values: the table's halves one at a time
      wasm_v128_store(halves, store_table_halves(t, 0));
      wasm_v128_store(halves + 8, store_table_halves(t, 1));
      for (; j < bytes; ++j) {
        y[2 * j] = halves[q[j] >> 4];
        y[2 * j + 1] = halves[q[j] & 0x0F];
      }
    }
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
