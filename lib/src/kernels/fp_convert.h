// weightstream — exact conversions between the small float formats and f32.
//
// Header-only so every kernel (reference and SIMD128 tails) inlines the same code. Conventions
// are the references' (FORMATS.md §2, §6): ggml for fp16/bf16/E8M0 in GGUF blocks and UE4M3 in
// NVFP4, MLX for E4M3 (0x7F/0xFF decode to ±480, not NaN) and E8M0 (0 -> 2^-127, 0xFF -> +inf).
#pragma once

#include <stdint.h>
#include <string.h>

namespace ws {
namespace kernels {

inline float bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline uint32_t f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// IEEE binary16 -> binary32, exact. NaNs come out quiet with their sign (as ggml's F16C path).
inline float fp16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t man = h & 0x3FF;
  if (exp == 0x1F) return bits_to_f32(sign | 0x7F800000u | (man ? (0x400000u | (man << 13)) : 0));
  if (exp != 0) return bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return bits_to_f32(sign);
  // Subnormal: man * 2^-24, exact in f32.
  float v = float(man) * bits_to_f32(0x33800000u);  // 2^-24
  return sign ? -v : v;
}

// binary32 -> binary16, round to nearest even; overflow -> inf; NaN -> quiet NaN, sign kept.
inline uint16_t f32_to_fp16(float f) {
  uint32_t x = f32_to_bits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return uint16_t(sign | 0x7E00 | ((ax >> 13) & 0x3FF));  // NaN
  if (ax >= 0x477FF000u) return uint16_t(sign | 0x7C00);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (ax < 0x33000000u) return sign;  // < 2^-25 rounds to 0 (2^-25 itself ties to even 0)
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7FFFFF) | 0x800000;
    uint32_t shift = 126 - e;  // value = m * 2^(e-150); half subnormal unit 2^-24
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return uint16_t(sign | q);
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent 127 -> 15
  uint32_t q = r >> 13;
  uint32_t rem = r & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return uint16_t(sign | q);
}

inline float bf16_to_f32_bits(uint16_t b) { return bits_to_f32(uint32_t(b) << 16); }

// binary32 -> bfloat16, round to nearest even (torch c10/util/BFloat16.h round_to_nearest_even,
// ggml ggml-impl.h ggml_compute_fp32_to_bf16): the rounding bias 0x7FFF plus the lowest kept
// bit; a carry out of the mantissa moves the exponent up, from the largest finite to inf. NaN:
// the top 16 bits with the quiet bit set (ggml's; the sign and top payload bits kept).
inline uint16_t f32_to_bf16_rne(float f) {
  const uint32_t x = f32_to_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((x >> 16) | 0x0040u);
  return uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// OCP E4M3 as MLX decodes it: bias 7, subnormals, no inf; 0x7F/0xFF are ±480 (the mantissa
// pattern 111 at the top exponent reads as a number).
inline float e4m3_to_f32(uint8_t x) {
  uint32_t sign = x & 0x80;
  uint32_t exp = (x >> 3) & 0xF, man = x & 7;
  float v = exp == 0 ? float(man) * 0.001953125f                       // man * 2^-9
                     : bits_to_f32(((exp + 120) << 23) | (man << 20));  // (1+man/8) * 2^(exp-7)
  return sign ? -v : v;
}

// E4M3FN as a tensor dtype (safetensors F8_E4M3 = torch.float8_e4m3fn): as above, except that
// 0x7F/0xFF are NaN.
inline float e4m3fn_to_f32(uint8_t x) {
  if ((x & 0x7F) == 0x7F) return bits_to_f32((uint32_t(x & 0x80) << 24) | 0x7FC00000u);
  return e4m3_to_f32(x);
}

// E5M2: IEEE-like, bias 15 — the top byte of an fp16.
inline float e5m2_to_f32(uint8_t x) { return fp16_to_f32(uint16_t(uint16_t(x) << 8)); }

// E8M0 as a power of two, MLX's convention: 2^(s-127); s = 0 gives 2^-127; s = 0xFF gives +inf.
inline float e8m0_to_f32(uint8_t s) {
  if (s == 0xFF) return bits_to_f32(0x7F800000u);
  if (s == 0) return bits_to_f32(0x00400000u);  // 2^-127, an f32 subnormal
  return bits_to_f32(uint32_t(s) << 23);
}

// E8M0 as a tensor dtype (torch.float8_e8m0fnu): 2^(s-127), 0xFF is NaN.
inline float e8m0fnu_to_f32(uint8_t s) { return s == 0xFF ? bits_to_f32(0x7FC00000u) : e8m0_to_f32(s); }

// GGML's MXFP4 block scale: 2^(e-128) (the values table is 2x E2M1), e = 0 and 1 subnormal.
inline float e8m0_half_to_f32(uint8_t e) {
  if (e < 2) return bits_to_f32(0x00200000u << e);  // 2^-128, 2^-127
  return bits_to_f32(uint32_t(e - 1) << 23);
}

// GGML's NVFP4 sub-block scale (UE4M3, times 0.5): 0x00 and 0x7F give 0; bit 7 ignored
// otherwise (0xFF decodes as exp 15, man 7).
inline float ue4m3_half_to_f32(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  uint32_t exp = (x >> 3) & 0xF, man = x & 7;
  float v = exp == 0 ? float(man) * 0.001953125f : bits_to_f32(((exp + 120) << 23) | (man << 20));
  return v * 0.5f;
}

}  // namespace kernels
}  // namespace ws
