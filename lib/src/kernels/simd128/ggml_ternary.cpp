// SIMD128 kernels for the ternary formats: TQ1_0, TQ2_0 and BitNet's I2_S (operation order of
// reference/ggml_ternary_quants.cpp: y = float(q - 1) * d, one exact product).
#include "../kernel_api.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// TQ1_0 trit of each byte q (already multiplied by 3^n mod 256): ((q * 3) >> 8) - 1, i.e. -1
// below 86, 0 from 86, +1 from 171 (q*3 reaches 256 at q = 86 and 512 at q = 171).
inline v128_t trit_minus_one(v128_t q) {
  const v128_t ge86 = wasm_u8x16_ge(q, splat_u8(86)), ge171 = wasm_u8x16_ge(q, splat_u8(171));
  // The masks are -1 where true: -1 - (-1)·[q >= 86] - (-1)·[q >= 171].
  return wasm_i8x16_sub(wasm_i8x16_sub(wasm_i8x16_splat(-1), ge86), ge171);
}

// Each byte times p (3^k), mod 256. wasm SIMD has no byte multiply: the even and odd bytes are
// multiplied in u16 lanes, where the bits a byte's product spills upward fall away. (Written as
// q + q + q, LLVM would fold the adds into a byte multiply and its wasm backend would scalarize
// it.)
inline v128_t bytes_times(v128_t q, int16_t p) {
  const v128_t pv = wasm_i16x8_splat(p);
  const v128_t even = wasm_v128_and(wasm_i16x8_mul(q, pv), wasm_i16x8_splat(0x00FF));
  const v128_t odd = wasm_i16x8_mul(wasm_v128_and(q, wasm_i16x8_splat(int16_t(0xFF00))), pv);
  return wasm_v128_or(even, odd);
}

}  // namespace

namespace simd {

static void TQ1_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b, src += 54, dst += 256) {
    const v128_t d = scale24(wasm_f32x4_splat(f16_at(src + 52)));  // fp16 d: exact
    static const int16_t kPow3[5] = {1, 3, 9, 27, 81};
    // Bytes 0..31: trit k of byte m is value 32k + m.
    const v128_t q0 = wasm_v128_load(src), q1 = wasm_v128_load(src + 16);
    for (int k = 0; k < 5; ++k) {
      store_i8x16_scaled(dst + 32 * k, trit_minus_one(bytes_times(q0, kPow3[k])), d);
      store_i8x16_scaled(dst + 32 * k + 16, trit_minus_one(bytes_times(q1, kPow3[k])), d);
    }
    // Bytes 32..47: value 160 + 16k + m.
    const v128_t q2 = wasm_v128_load(src + 32);
    for (int k = 0; k < 5; ++k) store_i8x16_scaled(dst + 160 + 16 * k, trit_minus_one(bytes_times(q2, kPow3[k])), d);
    // qh (bytes 48..51), four trits each: value 240 + 4k + j is trit k of byte j. Lane k of
    // the vector holds the four bytes times 3^k.
    const v128_t v = wasm_i32x4_splat(int32_t(load_u32(src + 48)));
    const v128_t p1 = bytes_times(v, 3), p2 = bytes_times(v, 9), p3 = bytes_times(v, 27);
    const v128_t r = wasm_i32x4_shuffle(wasm_i32x4_shuffle(v, p1, 0, 5, 0, 5), wasm_i32x4_shuffle(p2, p3, 2, 7, 2, 7), 0, 1, 4, 5);
    store_i8x16_scaled(dst + 240, trit_minus_one(r), d);
  }
}

static void TQ2_0_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  const v128_t one = splat_u8(1);
  for (size_t b = 0; b < n; ++b, src += 66, dst += 256) {
    const v128_t d = scale24(wasm_f32x4_splat(f16_at(src + 64)));  // fp16 d: exact
    for (int h = 0; h < 2; ++h) {
      const v128_t q0 = wasm_v128_load(src + 32 * h), q1 = wasm_v128_load(src + 32 * h + 16);
      for (int l = 0; l < 4; ++l) {
        float* y = dst + 128 * h + 32 * l;
        store_i8x16_scaled(y, wasm_i8x16_sub(byte_shr_and(q0, 2 * l, 3), one), d);
        store_i8x16_scaled(y + 16, wasm_i8x16_sub(byte_shr_and(q1, 2 * l, 3), one), d);
      }
    }
  }
}

static void I2_S_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const v128_t one = splat_u8(1);
  // The tensor's f32 scale: the scaled conversion where 2^-24 times it is exact (always, for
  // real scales), else the shift-and-convert one.
  const float scale = ctx.spec->global_scale;
  const bool scaled = scale24_exact(scale);
  const v128_t s = scaled ? scale24(wasm_f32x4_splat(scale)) : wasm_f32x4_splat(scale);
  for (size_t b = 0; b < n; ++b, src += 32, dst += 128) {
    const v128_t q0 = wasm_v128_load(src), q1 = wasm_v128_load(src + 16);
    // Values 32k..32k+31 sit at shift 6 - 2k of the group's 32 bytes.
    for (int k = 0; k < 4; ++k) {
      const int shift = 6 - 2 * k;
      const v128_t v0 = wasm_i8x16_sub(byte_shr_and(q0, shift, 3), one);
      const v128_t v1 = wasm_i8x16_sub(byte_shr_and(q1, shift, 3), one);
      if (scaled) {
        store_i8x16_scaled(dst + 32 * k, v0, s);
        store_i8x16_scaled(dst + 32 * k + 16, v1, s);
      } else {
        store_i8x16_times(dst + 32 * k, v0, s);
        store_i8x16_times(dst + 32 * k + 16, v1, s);
      }
    }
  }
}


// The exported kernels: each body through run_kernel (block bytes, block values).
void TQ1_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(TQ1_0_body, src, n, dst, ctx, 54, 256);
}
void TQ2_0(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(TQ2_0_body, src, n, dst, ctx, 66, 256);
}
void I2_S(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(I2_S_body, src, n, dst, ctx, 32, 128);
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
