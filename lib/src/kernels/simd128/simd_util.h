// weightstream — building blocks shared by the SIMD128 kernels.
//
// Every helper here gives, lane by lane, exactly the bits of the scalar conversion in
// fp_convert.h that it replaces (the kernels must be bit-identical to the reference). Only
// intrinsics that both clang's wasm_simd128.h (Emscripten) and SIMDe 0.7 provide are used.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../fp_convert.h"
#include "../kernel_api.h"
#include "simd128.h"

// Natively on x86, outputs too large to stay in cache are written with non-temporal stores (see
// run_kernel). wasm has no such store; there every output goes through v128.store.
#if !defined(__wasm_simd128__) && defined(__SSE2__)
#define WS_SIMD128_STREAMING_STORES 1
#endif

namespace ws {
namespace kernels {
namespace simd128 {

inline v128_t splat_u32(uint32_t x) { return wasm_i32x4_splat(int32_t(x)); }
inline v128_t splat_u8(uint8_t x) { return wasm_i8x16_splat(int8_t(x)); }

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// Four IEEE halves (one per u32 lane, upper bits zero) -> f32, as fp16_to_f32. Normals and
// subnormals: shifting exponent and mantissa into an f32 gives value * 2^-112 exactly (a half
// subnormal becomes an f32 subnormal), and multiplying by 2^112 is exact. wasm SIMD and SSE
// without DAZ keep f32 subnormals, so nothing is flushed. Inf/NaN take an exponent of 0xFF; NaNs
// are quieted (bit 22 set) with their payload and sign, as the scalar conversion does.
inline v128_t f16x4_to_f32x4(v128_t h) {
  const v128_t em = wasm_v128_and(h, splat_u32(0x7FFF));
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, splat_u32(0x8000)), 16);
  const v128_t mag = wasm_f32x4_mul(wasm_i32x4_shl(em, 13), wasm_f32x4_splat(5.192296858534828e+33f));  // 2^112
  const v128_t special = wasm_i32x4_gt(em, splat_u32(0x7BFF));   // exponent 31: inf or NaN
  const v128_t nan = wasm_i32x4_gt(em, splat_u32(0x7C00));
  const v128_t inf_nan = wasm_v128_or(wasm_v128_or(splat_u32(0x7F800000u), wasm_i32x4_shl(wasm_v128_and(h, splat_u32(0x3FF)), 13)),
                                      wasm_v128_and(nan, splat_u32(0x400000u)));
  return wasm_v128_or(sign, wasm_v128_bitselect(inf_nan, mag, special));
}

// Four halves at byte stride `stride` (the d fields of four consecutive blocks) -> f32.
inline v128_t load_f16x4_strided(const uint8_t* p, size_t stride) {
  return f16x4_to_f32x4(wasm_i32x4_make(load_u16(p), load_u16(p + stride), load_u16(p + 2 * stride),
                                        load_u16(p + 3 * stride)));
}

// The value of one block's f16 field, converted. Scales are converted once per block; the
// vector conversion above is used for runs of blocks, this for the odd one.
inline float f16_at(const uint8_t* p) { return fp16_to_f32(load_u16(p)); }

template <int lane>
inline v128_t lane_splat(v128_t v) {
  return wasm_i32x4_shuffle(v, v, lane, lane, lane, lane);
}

// 16 signed bytes -> 16 f32 (exact), each multiplied by d, stored at dst[0..16).
inline void store_i8x16_times(float* dst, v128_t q, v128_t d) {
  const v128_t lo = wasm_i16x8_extend_low_i8x16(q), hi = wasm_i16x8_extend_high_i8x16(q);
  wasm_v128_store(dst + 0, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo)), d));
  wasm_v128_store(dst + 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo)), d));
  wasm_v128_store(dst + 8, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi)), d));
  wasm_v128_store(dst + 12, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi)), d));
}

// 16 signed bytes -> 16 f32 of (q * d + m): two roundings, multiply then add, like the scalar
// `x*d + m` compiled without contraction.
inline void store_i8x16_times_plus(float* dst, v128_t q, v128_t d, v128_t m) {
  const v128_t lo = wasm_i16x8_extend_low_i8x16(q), hi = wasm_i16x8_extend_high_i8x16(q);
  wasm_v128_store(dst + 0, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo)), d), m));
  wasm_v128_store(dst + 4, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo)), d), m));
  wasm_v128_store(dst + 8, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi)), d), m));
  wasm_v128_store(dst + 12, wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi)), d), m));
}

// 16 signed bytes -> 16 f32 of (q * d - m), the K-quant form `d1 * q - m1`.
inline void store_i8x16_times_minus(float* dst, v128_t q, v128_t d, v128_t m) {
  const v128_t lo = wasm_i16x8_extend_low_i8x16(q), hi = wasm_i16x8_extend_high_i8x16(q);
  wasm_v128_store(dst + 0, wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo))), m));
  wasm_v128_store(dst + 4, wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo))), m));
  wasm_v128_store(dst + 8, wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi))), m));
  wasm_v128_store(dst + 12, wasm_f32x4_sub(wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi))), m));
}

// ---- Scaled conversions: the integer in the top byte ----
//
// Widening bytes to i32 lanes by sign extension costs two shuffles per output vector (i8->i16,
// i16->i32), and shuffles are the scarce port on x86 (and under V8). One byte shuffle can instead
// put byte 4k+i of a vector into the top byte of lane i with zeros below: the lane is q * 2^24,
// exactly convertible to f32, sign included. Multiplying it by d24 = d * 2^-24 gives the exact
// real q*d rounded once: the same bits as the reference's float(q) * d, provided d24 is exactly
// d * 2^-24. That holds whenever |d| >= 2^-102, or d is 0, inf or NaN (d24 is then a normal
// f32, a zero or the same special). Every scale built from an fp16 field qualifies (the smallest
// nonzero fp16 is 2^-24); kernels with other scales check and fall back to the widening path.
constexpr float kTwoPowMinus24 = 5.9604644775390625e-08f;

inline v128_t scale24(v128_t d) { return wasm_f32x4_mul(d, wasm_f32x4_splat(kTwoPowMinus24)); }
inline bool scale24_exact(float d) {
  const float a = d < 0 ? -d : d;
  return !(a < 1.9721522630525295e-31f) || d == 0;  // 2^-102; NaN passes (d24 stays NaN)
}

// Lanes i = byte 4k+i of q, times 2^24 (indices >= 16 select zero: one pshufb on x86).
template <int k>
inline v128_t top_byte_lanes(v128_t q) {
  return wasm_i8x16_swizzle(q, wasm_i8x16_const(-1, -1, -1, 4 * k, -1, -1, -1, 4 * k + 1, -1, -1, -1, 4 * k + 2, -1, -1,
                                                -1, 4 * k + 3));
}
template <int k>
inline v128_t top_byte_f32(v128_t q) {
  return wasm_f32x4_convert_i32x4(top_byte_lanes<k>(q));
}

// 16 signed bytes -> y[0..16) = q * d, given d24 = d * 2^-24 (exact, see above).
inline void store_i8x16_scaled(float* y, v128_t q, v128_t d24) {
  wasm_v128_store(y + 0, wasm_f32x4_mul(top_byte_f32<0>(q), d24));
  wasm_v128_store(y + 4, wasm_f32x4_mul(top_byte_f32<1>(q), d24));
  wasm_v128_store(y + 8, wasm_f32x4_mul(top_byte_f32<2>(q), d24));
  wasm_v128_store(y + 12, wasm_f32x4_mul(top_byte_f32<3>(q), d24));
}
// ... y = q * d + m (multiply, then add: two roundings).
inline void store_i8x16_scaled_plus(float* y, v128_t q, v128_t d24, v128_t m) {
  wasm_v128_store(y + 0, wasm_f32x4_add(wasm_f32x4_mul(top_byte_f32<0>(q), d24), m));
  wasm_v128_store(y + 4, wasm_f32x4_add(wasm_f32x4_mul(top_byte_f32<1>(q), d24), m));
  wasm_v128_store(y + 8, wasm_f32x4_add(wasm_f32x4_mul(top_byte_f32<2>(q), d24), m));
  wasm_v128_store(y + 12, wasm_f32x4_add(wasm_f32x4_mul(top_byte_f32<3>(q), d24), m));
}
// ... y = d * q - m, the K-quant form.
inline void store_i8x16_scaled_minus(float* y, v128_t q, v128_t d24, v128_t m) {
  wasm_v128_store(y + 0, wasm_f32x4_sub(wasm_f32x4_mul(d24, top_byte_f32<0>(q)), m));
  wasm_v128_store(y + 4, wasm_f32x4_sub(wasm_f32x4_mul(d24, top_byte_f32<1>(q)), m));
  wasm_v128_store(y + 8, wasm_f32x4_sub(wasm_f32x4_mul(d24, top_byte_f32<2>(q)), m));
  wasm_v128_store(y + 12, wasm_f32x4_sub(wasm_f32x4_mul(d24, top_byte_f32<3>(q)), m));
}

// Low and high nibbles of 16 bytes.
inline v128_t lo_nibbles(v128_t q) { return wasm_v128_and(q, splat_u8(0x0F)); }
inline v128_t hi_nibbles(v128_t q) { return wasm_u8x16_shr(q, 4); }

// ---- Running a kernel ----

using KernelBody = void (*)(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx);

// Outputs of at least this many bytes in one call are streamed (natively). Below it the output
// is likely read again soon (a Dequantizer chunk on its way to a GPU upload), and a regular store
// leaves it in cache. Above it, regular stores pay a read-for-ownership of every output line,
// about halving the bandwidth (measured: 3.6 vs 6.3 GB/s at 64 MiB on the benchmark machine);
// libc's memset makes the same switch. 8 MiB is where the two cross on that machine.
constexpr size_t kStreamingMinBytes = size_t(8) << 20;

// Decodes in tiles into an L1-resident buffer and copies each tile out with non-temporal stores
// (streaming.cpp); dst must be 16-byte aligned.
void decode_streaming(KernelBody body, const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx,
                      size_t block_bytes, size_t block_elems);

// Every exported SIMD128 kernel is this around its body: the body's stores, or, for a large
// aligned output natively, the streamed tiles. Same values either way.
inline void run_kernel(KernelBody body, const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx,
                       size_t block_bytes, size_t block_elems) {
#if defined(WS_SIMD128_STREAMING_STORES)
  if (n_blocks * block_elems * 4 >= kStreamingMinBytes && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
    decode_streaming(body, src, n_blocks, dst, ctx, block_bytes, block_elems);
    return;
  }
#else
  (void)block_bytes;
  (void)block_elems;
#endif
  body(src, n_blocks, dst, ctx);
}

}  // namespace simd128
}  // namespace kernels
}  // namespace ws
