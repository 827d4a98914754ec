// The tests' oracle for quantized weights: FORMATS.md §2/§3 (float formats, LSB-first bit packing,
// FP4 E2M1 and FP8 E4M3 codes) written out element by element, independent of lib/'s kernels, so a
// test comparing lib's output with these values can fail. Header-only: shared by tests/conventions
// and tests/cli.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

namespace wsoracle {

inline float bits_to_f32(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
// Little-endian values at `p`.
inline float bf16(const uint8_t* p) { return bits_to_f32(uint32_t(p[0] | p[1] << 8) << 16); }
inline float f16(const uint8_t* p) {
  const uint16_t h = uint16_t(p[0] | p[1] << 8);
  const int e = (h >> 10) & 31, m = h & 1023;
  const float v = e == 0 ? ldexpf(float(m), -24) : ldexpf(float(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}
inline float f32(const uint8_t* p) {
  return bits_to_f32(uint32_t(p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24));
}

// Element i of a row's LSB-first bitstream of `bits`-bit codes.
inline uint32_t unpack(const uint8_t* row, uint64_t i, uint32_t bits) {
  uint32_t v = 0;
  for (uint32_t b = 0; b < bits; ++b) {
    const uint64_t bit = i * bits + b;
    v |= uint32_t((row[bit / 8] >> (bit % 8)) & 1) << b;
  }
  return v;
}
// FP4 E2M1 code (sign in bit 3).
inline float fp4(uint32_t n) {
  static const float k[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  return (n & 8) ? -k[n & 7] : k[n & 7];
}
// FP8 E4M3 as MLX and UQFF decode it: no NaN, so 0x7F/0xFF are +-480.
inline float e4m3(uint8_t x) {
  const int e = (x >> 3) & 15, m = x & 7;
  const float v = e == 0 ? ldexpf(float(m), -9) : ldexpf(float(8 + m), e - 10);
  return (x & 0x80) ? -v : v;
}

}  // namespace wsoracle
