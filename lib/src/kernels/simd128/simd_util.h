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

// Low and high nibbles of 16 bytes.
inline v128_t lo_nibbles(v128_t q) { return wasm_v128_and(q, splat_u8(0x0F)); }
inline v128_t hi_nibbles(v128_t q) { return wasm_v128_and(wasm_u16x8_shr(q, 4), splat_u8(0x0F)); }

// (q >> s) & mask and (q << s) & mask in every byte, through a 16-bit shift. wasm has no byte
// shift (V8 emulates i8x16.shr_u with a 16-bit shift and a mask it rebuilds every time); the
// mask is wanted anyway, and it also drops the bits that cross from the neighbouring byte
// (mask must fit in 8 - s bits, resp. above bit s).
inline v128_t byte_shr_and(v128_t q, int s, uint8_t mask) { return wasm_v128_and(wasm_u16x8_shr(q, s), splat_u8(mask)); }
inline v128_t byte_shl_and(v128_t q, int s, uint8_t mask) { return wasm_v128_and(wasm_i16x8_shl(q, s), splat_u8(mask)); }

// ---- Widening ----
//
// Bytes and u16s are widened into i32 lanes with one byte shuffle each (zero bytes from indices
// >= 16: one pshufb on x86). Two reasons not to use the extend intrinsics: sign or zero
// extension to i32 takes two shuffles per output vector (8->16->32 bits), and LLVM folds an
// extend followed by an int->float conversion into a conversion from the narrow type, which its
// wasm backend (LLVM 14, Emscripten 3.1.6) then scalarizes lane by lane. A swizzle is opaque to
// that folding. Natively GCC folds SIMDe's index fix-up for constant indices away.

// Lane i = byte 4k+i of q, zero-extended.
template <int k>
inline v128_t u8_lanes(v128_t q) {
  return wasm_i8x16_swizzle(q, wasm_i8x16_const(4 * k, -1, -1, -1, 4 * k + 1, -1, -1, -1, 4 * k + 2, -1, -1, -1, 4 * k + 3,
                                                -1, -1, -1));
}
// Lane i = byte 4k+i of q, times 2^24 (in the top byte, zeros below).
template <int k>
inline v128_t top_byte_lanes(v128_t q) {
  return wasm_i8x16_swizzle(q, wasm_i8x16_const(-1, -1, -1, 4 * k, -1, -1, -1, 4 * k + 1, -1, -1, -1, 4 * k + 2, -1, -1,
                                                -1, 4 * k + 3));
}
// Lane i = byte 4k+i of q, sign-extended.
template <int k>
inline v128_t i8_lanes(v128_t q) {
  return wasm_i32x4_shr(top_byte_lanes<k>(q), 24);
}
// Lane i = u16 lane 4h+i of w, zero-extended.
template <int h>
inline v128_t u16_lanes(v128_t w) {
  return wasm_i8x16_swizzle(w, wasm_i8x16_const(8 * h, 8 * h + 1, -1, -1, 8 * h + 2, 8 * h + 3, -1, -1, 8 * h + 4, 8 * h + 5,
                                                -1, -1, 8 * h + 6, 8 * h + 7, -1, -1));
}

// ---- Small floats ----
//
// Exact conversions that never multiply a subnormal: x86 (and V8 on it) takes a microcode assist
// of ~150 cycles for a subnormal operand, so "shift the bits into an f32 and rescale" is out
// whenever the source has subnormals. Normal values are assembled by integer addition of the
// exponent bias; subnormal ones are man * 2^-k from an exact int->float conversion (normal
// operands, normal result).

// Four IEEE halves (one per u32 lane, upper bits zero) -> f32, as fp16_to_f32: NaNs are quieted
// (bit 22) with payload and sign.
// The lanes are classified with equality tests only: LLVM rewrites order compares of lanes it
// knows are non-negative (em here) into unsigned ones, which SIMD128 has but x86 lacks; V8 then
// emulates each with four instructions, where i32x4.eq is one pcmpeqd.
inline v128_t f16x4_to_f32x4(v128_t h) {
  const v128_t em = wasm_v128_and(h, splat_u32(0x7FFF));
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, splat_u32(0x8000)), 16);
  const v128_t exp = wasm_v128_and(h, splat_u32(0x7C00));
  const v128_t top = wasm_i32x4_eq(exp, splat_u32(0x7C00));                          // inf or NaN
  const v128_t nan = wasm_v128_andnot(top, wasm_i32x4_eq(em, splat_u32(0x7C00)));  // ... not inf
  // Exponent 1..30: rebias 15 -> 127. Exponent 31 (inf/NaN) gets the same again, reaching 255.
  v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(em, 13), splat_u32(112u << 23));
  normal = wasm_i32x4_add(normal, wasm_v128_and(top, splat_u32(112u << 23)));
  normal = wasm_v128_or(normal, wasm_v128_and(nan, splat_u32(0x400000u)));  // quiet
  // Exponent 0: man * 2^-24 (man = em here; 0 gives +0).
  const v128_t sub = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(em), wasm_f32x4_splat(5.9604644775390625e-08f));
  return wasm_v128_or(sign, wasm_v128_bitselect(sub, normal, wasm_i32x4_eq(exp, wasm_i32x4_splat(0))));
}

// E4M3 magnitude (bias 7, subnormals, exponent 15 a number: MLX's e4m3_to_f32 without the sign)
// of em = x & 0x7F in u32 lanes, times 2^-extra (0 or 1: NVFP4's UE4M3 halves its scale).
template <int extra = 0>
inline v128_t e4m3_magnitude(v128_t em) {
  const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(em, 20), splat_u32(uint32_t(120 - extra) << 23));
  const v128_t sub = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(em), wasm_f32x4_splat(extra ? 9.765625e-04f : 1.953125e-03f));
  return wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(em, splat_u32(8)));
}

// 16 E4M3 bytes -> 16 f32, whose low 16 bits are all zero (3 mantissa bits): the high halves
// are built byte-wise, H = bits 24..31 and L = bits 16..23 of each value, then interleaved.
// Normal numbers: hi16 = (em << 4) + (120 << 7), i.e. H = (em >> 4) + 0x3C, L = (em << 4) & 0xF0.
// Subnormals man * 2^-9 (and 0) from two 8-entry tables indexed by em. kFn: 0x7F/0xFF are NaN
// (E4M3FN: 0x7FC00000 with the sign), else the number 480 (MLX). Branch-free: fp8 weights have
// subnormals often enough that a fast path with a fallback would mispredict.
template <bool kFn>
inline void e4m3x16_f32(v128_t x, v128_t out[4]) {
  const v128_t em = wasm_v128_and(x, splat_u8(0x7F));
  const v128_t hn = wasm_i8x16_add(byte_shr_and(em, 4, 0x07), splat_u8(0x3C));
  const v128_t ln = byte_shl_and(em, 4, 0xF0);
  const v128_t hs = wasm_i8x16_swizzle(wasm_i8x16_const(0, 0x3B, 0x3B, 0x3B, 0x3C, 0x3C, 0x3C, 0x3C, 0, 0, 0, 0, 0, 0, 0, 0), em);
  const v128_t ls =
      wasm_i8x16_swizzle(wasm_i8x16_const(0, 0, -0x80, -0x40, 0, 0x20, 0x40, 0x60, 0, 0, 0, 0, 0, 0, 0, 0), em);
  const v128_t sub = wasm_i8x16_lt(em, splat_u8(8));  // em <= 0x7F: a signed compare will do
  v128_t h = wasm_v128_bitselect(hs, hn, sub), l = wasm_v128_bitselect(ls, ln, sub);
  if (kFn) {
    const v128_t nan = wasm_i8x16_eq(em, splat_u8(0x7F));
    h = wasm_v128_bitselect(splat_u8(0x7F), h, nan);
    l = wasm_v128_bitselect(splat_u8(0xC0), l, nan);
  }
  h = wasm_v128_or(h, wasm_v128_and(x, splat_u8(0x80)));
  const v128_t w0 = wasm_i8x16_shuffle(l, h, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t w1 = wasm_i8x16_shuffle(l, h, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const v128_t z = wasm_i32x4_splat(0);
  out[0] = wasm_i16x8_shuffle(z, w0, 0, 8, 1, 9, 2, 10, 3, 11);
  out[1] = wasm_i16x8_shuffle(z, w0, 4, 12, 5, 13, 6, 14, 7, 15);
  out[2] = wasm_i16x8_shuffle(z, w1, 0, 8, 1, 9, 2, 10, 3, 11);
  out[3] = wasm_i16x8_shuffle(z, w1, 4, 12, 5, 13, 6, 14, 7, 15);
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

// 16 signed bytes -> 16 f32 (exact), each multiplied by d, stored at dst[0..16): for any d.
// Where d is known to be large enough, store_i8x16_scaled below saves the shift.
inline void store_i8x16_times(float* dst, v128_t q, v128_t d) {
  wasm_v128_store(dst + 0, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<0>(q)), d));
  wasm_v128_store(dst + 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<1>(q)), d));
  wasm_v128_store(dst + 8, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<2>(q)), d));
  wasm_v128_store(dst + 12, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<3>(q)), d));
}

// ---- Scaled conversions: the integer in the top byte ----
//
// Sign extension needs a shift after the byte shuffle (i8_lanes). The shuffle alone puts byte
// 4k+i of a vector into the top byte of lane i with zeros below: the lane is q * 2^24, exactly
// convertible to f32, sign included. Multiplying it by d24 = d * 2^-24 gives the exact
// real q*d rounded once: the same bits as the reference's float(q) * d, provided d24 is exactly
// d * 2^-24. That holds whenever |d| >= 2^-102, or d is 0, inf or NaN (d24 is then a normal
// f32, a zero or the same special). Every scale built from an fp16 field qualifies (the smallest
// nonzero fp16 is 2^-24); kernels with other scales check and fall back to store_i8x16_times.
constexpr float kTwoPowMinus24 = 5.9604644775390625e-08f;

inline v128_t scale24(v128_t d) { return wasm_f32x4_mul(d, wasm_f32x4_splat(kTwoPowMinus24)); }
inline bool scale24_exact(float d) {
  const float a = d < 0 ? -d : d;
  return !(a < 1.9721522630525295e-31f) || d == 0;  // 2^-102; NaN passes (d24 stays NaN)
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
