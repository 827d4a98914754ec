// weightstream — building blocks of the SIMD128 kernels with f16 output.
//
// An f16 kernel writes exactly f32_to_fp16 of what its f32 kernel computes (the reference's f32
// value rounded once more, to nearest even). Two ways to get there cheaply:
//
// - 4-bit formats: a block (or sub-block, or group) has at most 16 distinct outputs. They are
//   computed once, with the f32 formula, rounded to f16, and split into a table of low bytes and
//   one of high bytes; each code then costs a byte lookup per table (NibbleTable below).
// - 8- and 6-bit formats: each value goes through the f32 formula and a vector rounding fused
//   into the kernel.
//
// Both use "prescaled" values: an f32 x whose f16 rounding is wanted is computed as
// x' = x * 2^-112 (the kernels multiply the block's scales instead). For |x| in [2^-14, 65536)
// the bits of x' are the f16 bits of x scaled by 2^13: the f32 exponent field e' = e - 112 is the
// f16 one, and the mantissa's top ten bits are the f16 mantissa. So the f16 of x is bits(x') / 2^13
// rounded to nearest even, and values from 65520 up to 65536 round to exactly 0x7C00, inf. Zero
// stays zero. Below 2^-14, x' is an f32 subnormal, bits(x') = x' / 2^-149, and the same rounding
// gives the f16 subnormal, x / 2^-24 rounded; that needs x' to be exact, which holds when every
// operand of the formula, prescaled, sits on the 2^-149 grid: products and sums of values on a
// grid stay on it, and are exact there. Prescaled f16 scales sit on the 2^-136 grid (an f16's
// last bit is at least 2^-24). Above 2^-126 the prescaled arithmetic rounds as the reference's,
// scaled. (An f32 subnormal costs x86 a microcode assist; it happens only for values that are f16
// subnormals, which real weights almost never are.)
//
// So a fast path needs: finite scales whose prescaled values sit on the 2^-149 grid, and results
// below 65536 in magnitude. Each kernel checks that per block from its scales; blocks outside
// (inf/NaN scales, scales large enough for a value to pass 65536, bf16/f32 companions too small
// to sit on the grid) take decode_f16_via_f32 (f16_out.h).
//
// Rounding bits(x') / 2^13: when bits(x') has at most 24 significant bits it converts to f32
// exactly, and adding 2^36 rounds it to a multiple of 2^13 in one IEEE addition, to nearest even;
// the sum's low 16 bits are then the f16 (round_exact_bits). Products of small integers with an
// f16 or bf16 scale qualify (at most 20 significant bits, so bits(x') < 2^28 has its low four bits
// zero). Any other f32 takes an integer rounding: round_bits, five operations per four values,
// or halves_from_prescaled, about two per value with the sign and the narrowing to 16 bits.
#pragma once

#include "simd_util.h"

#if !defined(__wasm_simd128__) && defined(__SSSE3__)
#include <tmmintrin.h>
#endif

namespace ws {
namespace kernels {
namespace simd128 {

// table[idx] per byte, for indices 0..15 or with bit 7 set (those give 0). wasm's swizzle and
// x86's pshufb agree on exactly these; natively SIMDe would add a saturating add to every
// swizzle to map wasm's other indices (16..127 give 0) onto pshufb, which these never need.
inline v128_t lookup16(v128_t table, v128_t idx) {
#if !defined(__wasm_simd128__) && defined(__SSSE3__)
  return simde_v128_from_m128i(_mm_shuffle_epi8(simde_v128_to_m128i(table), simde_v128_to_m128i(idx)));
#else
  return wasm_i8x16_swizzle(table, idx);
#endif
}

// A constant, hoisted: under wasm, through a volatile stack slot, which LLVM cannot re-emit as a
// v128.const at each use inside the loop. V8 materializes every v128.const where it is used,
// with up to four instructions (two 64-bit immediates); a kernel with a dozen constants in its
// loop spent as much on them as on its arithmetic. A value kept in a local costs nothing or a
// load. Natively the compiler keeps constants in registers or memory operands itself.
inline v128_t hoisted(v128_t v) {
#if defined(__wasm_simd128__)
  volatile v128_t slot = v;
  return slot;
#else
  return v;
#endif
}

// The constants of the helpers below, hoisted once per kernel call (f16_consts()).
struct F16Consts {
  v128_t nibble;           // 0x0F in every byte
  v128_t magic;            // 2^36 as f32 (round_exact_bits)
  v128_t one32, round32;   // 1, 0xFFF in u32 lanes (round_bits)
  v128_t one16, round16;   // 1, 0x0FFE in u16 lanes (halves_from_prescaled)
  v128_t sign16;           // 0x8000 in u16 lanes
  v128_t one_and_half;     // 1.5f
  v128_t zero;
  v128_t split;            // lookup16 index: even bytes, then odd bytes (nibble_table)
};
inline F16Consts f16_consts() {
  return {hoisted(splat_u8(0x0F)),         hoisted(wasm_f32x4_splat(68719476736.0f)),
          hoisted(splat_u32(1)),           hoisted(splat_u32(0xFFF)),
          hoisted(wasm_i16x8_splat(1)),    hoisted(wasm_i16x8_splat(0x0FFE)),
          hoisted(wasm_i16x8_splat(int16_t(0x8000))), hoisted(wasm_f32x4_splat(1.5f)),
          hoisted(wasm_i32x4_splat(0)),
          hoisted(wasm_i8x16_const(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15))};
}

// Low and high nibbles of 16 bytes (simd_util.h's, with the mask hoisted).
inline v128_t nibbles_lo(v128_t q, const F16Consts& c) { return wasm_v128_and(q, c.nibble); }
inline v128_t nibbles_hi(v128_t q, const F16Consts& c) { return wasm_v128_and(wasm_u16x8_shr(q, 4), c.nibble); }

// |h| * 2^-112 as f32 bits for a finite f16 h: the f16 exponent field is the prescaled f32 one
// (for a subnormal h, the f32 subnormal with h's mantissa, m * 2^-136). prescaled_f16 keeps the
// sign.
inline uint32_t prescaled_f16_magnitude(uint32_t h) { return (h & 0x7FFFu) << 13; }
inline uint32_t prescaled_f16(uint32_t h) { return ((h & 0x8000u) << 16) | ((h & 0x7FFFu) << 13); }

// An f16 magnitude field (h & 0x7FFF) whose exponent field is at most max_exp (finite, below
// 2^(max_exp - 14)): the check of the fast paths on their fp16 scales. Subnormal scales pass:
// prescaled they are f32 subnormals on the 2^-136 grid, exact, and so are their products.
inline bool f16_below(uint32_t mag, uint32_t max_exp) { return mag < ((max_exp + 1) << 10); }

// Lanes hold the bits n of nonnegative prescaled values, n < 2^28 with at most 24 significant
// bits (exact in f32). Returns lanes whose low 16 bits are round(n / 2^13), to nearest even: the
// f16 of the value (see the top of the file). The high 16 bits are 2^36's, 0x5180.
inline v128_t round_exact_bits(v128_t n, const F16Consts& c) { return wasm_f32x4_add(wasm_f32x4_convert_i32x4(n), c.magic); }

// Any nonnegative prescaled value's bits a < 2^28 (normal or zero): round(a / 2^13), to nearest
// even, in the lane (below 2^16).
inline v128_t round_bits(v128_t a, const F16Consts& c) {
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(a, 13), c.one32);
  return wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(a, c.round32), odd), 13);
}

// The low 16 bits of the lanes of a (elements 0, 2, 4, 6) and b (elements 1, 3, 5, 7) as eight
// u16 in element order: a shift and a blend.
inline v128_t low_halves_interleaved(v128_t a, v128_t b) {
  return wasm_i16x8_shuffle(a, wasm_i32x4_shl(b, 16), 0, 9, 2, 11, 4, 13, 6, 15);
}

// The f16 values of 16 codes as two byte tables: byte k of lo (hi) is the low (high) byte of
// code k's f16.
struct NibbleTable {
  v128_t lo, hi;
};

// Codes 0..7 in h0's eight u16, 8..15 in h1's. (A lookup with a hoisted index rather than a
// constant shuffle: V8 builds a constant shuffle's pshufb mask from two immediates each time.)
inline NibbleTable nibble_table(v128_t h0, v128_t h1, const F16Consts& c) {
  const v128_t a = lookup16(h0, c.split), b = lookup16(h1, c.split);
  return {wasm_i64x2_shuffle(a, b, 0, 2), wasm_i64x2_shuffle(a, b, 1, 3)};
}

// Interleaves 16 low bytes and 16 high bytes into 16 halves at dst.
inline void store_byte_pairs(uint16_t* dst, v128_t lo, v128_t hi) {
  wasm_v128_store(dst, wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
  wasm_v128_store(dst + 8, wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
}

// Eight prescaled values (any signs; magnitudes below 65536 * 2^-112, and exact when below
// 2^-126: f16_util.h's top) -> their eight f16, in element order; a holds elements 0, 2, 4, 6
// and b elements 1, 3, 5, 7.
//
// The rounding works on 16-bit halves, eight values per operation: two blends put the values'
// high halves H (sign, exponent, top mantissa bits) in one vector and their low halves L in
// another, and bits / 2^13 rounded to nearest even is H * 8 + (L + 0xFFF + lsb) / 2^13, lsb
// being bit 13 of L; the 17-bit sum L + 0xFFF + lsb is halved by an average (pavgw) without
// losing its carry. H * 8 drops the sign bit, which is put back from H.
inline v128_t halves_from_prescaled(v128_t a, v128_t b, const F16Consts& c) {
  const v128_t lo = wasm_i16x8_shuffle(a, wasm_i32x4_shl(b, 16), 0, 9, 2, 11, 4, 13, 6, 15);
  const v128_t hi = wasm_i16x8_shuffle(wasm_u32x4_shr(a, 16), b, 0, 9, 2, 11, 4, 13, 6, 15);
  const v128_t lsb = wasm_v128_and(wasm_u16x8_shr(lo, 13), c.one16);
  const v128_t up = wasm_u16x8_shr(wasm_u16x8_avgr(lo, wasm_i16x8_add(lsb, c.round16)), 12);
  const v128_t mag = wasm_i16x8_add(wasm_i16x8_shl(hi, 3), up);
  return wasm_v128_or(mag, wasm_v128_and(hi, c.sign16));
}

// lookup16 indices putting bytes first, first + 2, first + 4, first + 6 into the low bytes of
// u32 lanes 0..3 (zero-extended): the even (first = 0, 8) or odd (1, 9) elements of a run of
// eight, for halves_from_prescaled.
inline v128_t even_bytes_lanes(int first) {
  return wasm_i8x16_make(int8_t(first), -1, -1, -1, int8_t(first + 2), -1, -1, -1, int8_t(first + 4), -1, -1, -1,
                         int8_t(first + 6), -1, -1, -1);
}

// lookup16 indices for u8_lanes<k> (simd_util.h): bytes 4k..4k+3 zero-extended into u32 lanes.
inline v128_t u8_lanes_index(int k) {
  return wasm_i8x16_make(int8_t(4 * k), -1, -1, -1, int8_t(4 * k + 1), -1, -1, -1, int8_t(4 * k + 2), -1, -1, -1,
                         int8_t(4 * k + 3), -1, -1, -1);
}

// Sixteen prescaled values of one table, under halves_from_prescaled's conditions -> their
// NibbleTable. t[0]: codes 0, 2, 4, 6; t[1]: 1, 3, 5, 7; t[2]: 8, 10, 12, 14; t[3]: 9, 11, 13, 15.
inline NibbleTable table_from_prescaled(const v128_t t[4], const F16Consts& c) {
  return nibble_table(halves_from_prescaled(t[0], t[1], c), halves_from_prescaled(t[2], t[3], c), c);
}

// FP4 tables by exponent arithmetic. E2M1 magnitudes are 2^k or 1.5 * 2^k, and a scale s with
// few significant bits times them is exact in f16: 2^k * s is f16(s) with k added to the
// exponent field, 1.5 * 2^k * s likewise from f16(1.5 s). Given f16(s) and f16(1.5 s) of four
// scales as u16 lanes 0..3 and 4..7 of f (fp4_scale_pairs), a code's low byte is a byte of f
// (lookup16 with a per-code index, + 2 per scale), its high byte that plus a per-code constant:
// the exponent step (4 per power of two) and the sign (0x80). No carry can cross bytes: the
// added low byte is zero, and the high bytes stay below 0x80 before the sign.
//
// s: four prescaled nonzero scale magnitudes whose f16, and that of 1.5 s, are normal numbers.
inline v128_t fp4_scale_pairs(v128_t s, const F16Consts& c) {
  return wasm_u16x8_narrow_i32x4(wasm_u32x4_shr(s, 13), wasm_u32x4_shr(wasm_f32x4_mul(s, c.one_and_half), 13));
}

// 16 codes (one per byte, 0..15) -> their 16 halves at dst.
inline void store_codes(uint16_t* dst, const NibbleTable& t, v128_t codes) {
  store_byte_pairs(dst, lookup16(t.lo, codes), lookup16(t.hi, codes));
}

// The same for tables whose low bytes are all zero (values with at most 3 significant bits).
inline void store_codes_hi(uint16_t* dst, v128_t hi_table, v128_t codes, const F16Consts& c) {
  store_byte_pairs(dst, c.zero, lookup16(hi_table, codes));
}

}  // namespace simd128
}  // namespace kernels
}  // namespace ws
