// ws-make-samples — float32 to BF16 / F16 (see half_float.h).
#include "half_float.h"

#include <string.h>

namespace samplegen {
namespace {
uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
}  // namespace

uint16_t float_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

uint16_t float_to_f16(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t exp = (u >> 23) & 0xFFu;
  uint32_t mant = u & 0x7FFFFFu;

  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0u));
  // Unbiased exponent e; binary16 normals cover e in [-14, 15].
  const int32_t e = static_cast<int32_t>(exp) - 127;
  if (e > 15) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow to infinity
  if (e >= -14) {
    // Normal: keep 10 mantissa bits, round the 13 dropped ones to nearest even. A carry out of the
    // mantissa correctly bumps the exponent (and may reach infinity).
    uint32_t h = (static_cast<uint32_t>(e + 15) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  if (e < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // Subnormal: value = mant_with_implicit_one * 2^(e-23); in units of 2^-24 that is a right shift.
  mant |= 0x800000u;
  const uint32_t shift = static_cast<uint32_t>(-e - 1);  // 14..24
  uint32_t h = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

}  // namespace samplegen
