// SIMD128 kernels for the element-wise formats: F32, F16, BF16 and the three FP8 dtypes, and the
// f16 kernels of F32, F16 and BF16 (at the end).
// A "block" is one element here; the vector loops take 8 or 16 at a time and the rest go through
// the scalar conversions of fp_convert.h, which are the reference's own.
#include "../kernel_api.h"
#include "f16_out.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// 16 bytes, each widened into its own u32 lane, as four vectors (lanes in element order).
struct U8x16Wide {
  v128_t v[4];
};
inline U8x16Wide widen_u8x16(v128_t b) { return {{u8_lanes<0>(b), u8_lanes<1>(b), u8_lanes<2>(b), u8_lanes<3>(b)}}; }

// E8M0 as a tensor dtype (e8m0fnu_to_f32): 2^(s-127); 0 -> 2^-127 (subnormal), 0xFF -> NaN.
inline v128_t e8m0fnu_x4(v128_t s) {
  v128_t r = wasm_i32x4_shl(s, 23);
  r = wasm_v128_bitselect(splat_u32(0x00400000u), r, wasm_i32x4_eq(s, wasm_i32x4_splat(0)));
  return wasm_v128_bitselect(splat_u32(0x7FC00000u), r, wasm_i32x4_eq(s, splat_u32(0xFF)));
}

// Eight halves (u16 lanes) -> eight f32 at y. Most weights are normal numbers or zeros: for
// those the f32 is built in 16-bit halves, high = sign | (em >> 3) + (112 << 7) (exponent rebias,
// no carry possible), low = em << 13, then interleaved: ten operations for eight values. A vector
// holding a subnormal, inf or NaN takes the general conversion.
inline void store_f16x8(float* y, v128_t h) {
  const v128_t em = wasm_v128_and(h, wasm_i16x8_splat(0x7FFF));
  const v128_t exp = wasm_v128_and(h, wasm_i16x8_splat(0x7C00));
  const v128_t zero_exp = wasm_i16x8_eq(exp, wasm_i16x8_splat(0));
  const v128_t odd = wasm_v128_or(wasm_v128_andnot(zero_exp, wasm_i16x8_eq(em, wasm_i16x8_splat(0))),
                                  wasm_i16x8_eq(exp, wasm_i16x8_splat(0x7C00)));
  if (wasm_v128_any_true(odd)) {
    wasm_v128_store(y, f16x4_to_f32x4(u16_lanes<0>(h)));
    wasm_v128_store(y + 4, f16x4_to_f32x4(u16_lanes<1>(h)));
    return;
  }
  const v128_t hi = wasm_v128_or(wasm_v128_and(h, wasm_i16x8_splat(int16_t(0x8000))),
                                 wasm_v128_andnot(wasm_i16x8_add(wasm_u16x8_shr(em, 3), wasm_i16x8_splat(112 << 7)), zero_exp));
  const v128_t lo = wasm_i16x8_shl(em, 13);
  wasm_v128_store(y, wasm_i16x8_shuffle(lo, hi, 0, 8, 1, 9, 2, 10, 3, 11));
  wasm_v128_store(y + 4, wasm_i16x8_shuffle(lo, hi, 4, 12, 5, 13, 6, 14, 7, 15));
}

}  // namespace

namespace simd {

static void F32_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  // A copy of the bits, NaN payloads included, as the reference's. memcpy is the fastest copy
  // there is on every target (under Emscripten a large one is a native copyWithin).
  memcpy(dst, src, n * 4);
}

static void F16_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    store_f16x8(dst + i, wasm_v128_load(src + 2 * i));
  }
  for (; i < n; ++i) dst[i] = fp16_to_f32(load_u16(src + 2 * i));
}

static void BF16_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  // A bf16 is the top half of an f32: interleave zero halves below each value.
  const v128_t zero = wasm_i32x4_splat(0);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v128_t a = wasm_v128_load(src + 2 * i), b = wasm_v128_load(src + 2 * i + 16);
    wasm_v128_store(dst + i, wasm_i16x8_shuffle(zero, a, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(dst + i + 4, wasm_i16x8_shuffle(zero, a, 4, 12, 5, 13, 6, 14, 7, 15));
    wasm_v128_store(dst + i + 8, wasm_i16x8_shuffle(zero, b, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(dst + i + 12, wasm_i16x8_shuffle(zero, b, 4, 12, 5, 13, 6, 14, 7, 15));
  }
  for (; i < n; ++i) dst[i] = bf16_to_f32_bits(load_u16(src + 2 * i));
}

static void F8_E4M3_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v128_t f[4];
    e4m3x16_f32<true>(wasm_v128_load(src + i), f);
    for (int k = 0; k < 4; ++k) wasm_v128_store(dst + i + 4 * k, f[k]);
  }
  for (; i < n; ++i) dst[i] = e4m3fn_to_f32(src[i]);
}

static void F8_E5M2_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  // An E5M2 byte is the top byte of a half.
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t q = wasm_v128_load(src + i);
    store_f16x8(dst + i, wasm_i8x16_swizzle(q, wasm_i8x16_const(-1, 0, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6, -1, 7)));
    store_f16x8(dst + i + 8,
                wasm_i8x16_swizzle(q, wasm_i8x16_const(-1, 8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15)));
  }
  for (; i < n; ++i) dst[i] = e5m2_to_f32(src[i]);
}

static void F8_E8M0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    U8x16Wide w = widen_u8x16(wasm_v128_load(src + i));
    for (int k = 0; k < 4; ++k) wasm_v128_store(dst + i + 4 * k, e8m0fnu_x4(w.v[k]));
  }
  for (; i < n; ++i) dst[i] = e8m0fnu_to_f32(src[i]);
}


// The exported kernels: each body through run_kernel (block bytes, block values).
void F32(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(F32_body, src, n, dst, ctx, 4, 1);
}
void F16(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(F16_body, src, n, dst, ctx, 2, 1);
}
void BF16(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(BF16_body, src, n, dst, ctx, 2, 1);
}
void F8_E4M3(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(F8_E4M3_body, src, n, dst, ctx, 1, 1);
}
void F8_E5M2(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(F8_E5M2_body, src, n, dst, ctx, 1, 1);
}
void F8_E8M0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(F8_E8M0_body, src, n, dst, ctx, 1, 1);
}

// ---- f16 output ----

void F32_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext&) { f32_bytes_to_f16_row(src, n, dst); }

// F16 -> f16 is the stored bytes, NaN payloads and signalling bits included (the Dequantizer
// copies before it gets here; this entry is what a caller of the kernel table directly gets).
void F16_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext&) { memcpy(dst, src, 2 * n); }

// A bf16 is exact in f16 when its exponent field E is 113..142 (f16 normal numbers, below
// 65536) or it is zero: the f16 is then sign | (bf16 magnitude - (112 << 7)) << 3, a saturating
// subtraction (zero stays zero) and a shift. Runs of 64 values are converted so, and checked
// (smallest nonzero magnitude and largest, by u16 min and max); a run holding f16 subnormals
// (E <= 112), overflow (E >= 143), inf or NaN is converted again the exact way.
void BF16_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const v128_t abs_mask = wasm_i16x8_splat(0x7FFF), sign_mask = wasm_i16x8_splat(int16_t(0x8000));
  const v128_t bias = wasm_i16x8_splat(0x3800), one = wasm_i16x8_splat(1);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    v128_t lo = wasm_i16x8_splat(-1), hi = wasm_i16x8_splat(0);
    for (size_t k = 0; k < 64; k += 8) {
      const v128_t b = wasm_v128_load(src + 2 * (i + k));
      const v128_t m = wasm_v128_and(b, abs_mask);
      lo = wasm_u16x8_min(lo, wasm_i16x8_sub(m, one));  // zero wraps to 0xFFFF: never the minimum
      hi = wasm_u16x8_max(hi, m);
      const v128_t h = wasm_i16x8_shl(wasm_u16x8_sub_sat(m, bias), 3);
      wasm_v128_store(dst + i + k, wasm_v128_or(h, wasm_v128_and(b, sign_mask)));
    }
    const v128_t bad = wasm_v128_or(wasm_u16x8_lt(lo, wasm_i16x8_splat(0x387F)), wasm_u16x8_gt(hi, wasm_i16x8_splat(0x477F)));
    if (wasm_v128_any_true(bad)) decode_f16_via_f32(BF16, src + 2 * i, 64, 2, 1, dst + i, ctx);
  }
  if (i < n) decode_f16_via_f32(BF16, src + 2 * i, n - i, 2, 1, dst + i, ctx);
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
