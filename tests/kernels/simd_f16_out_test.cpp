// simd128::f32_to_f16_row gives exactly f32_to_fp16's bits: a strided sweep over all f32 bit
// patterns, every rounding boundary of every exponent, and the range edges by hand.
#include <gtest/gtest.h>
#include <string.h>

#include <vector>

#include "fp_convert.h"
#include "simd128/f16_out.h"

namespace {

using ws::kernels::bits_to_f32;
using ws::kernels::f32_to_fp16;

// Converts `bits` with the row function (odd length: the scalar tail runs too) and returns the
// index of the first disagreement with f32_to_fp16, or -1.
long long first_mismatch(const std::vector<uint32_t>& bits, std::vector<uint16_t>* got_out = nullptr) {
  std::vector<float> in(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) in[i] = bits_to_f32(bits[i]);
  std::vector<uint16_t> got(bits.size(), 0xDEAD);
  ws::kernels::simd128::f32_to_f16_row(in.data(), in.size(), got.data());
  if (got_out) *got_out = got;
  for (size_t i = 0; i < bits.size(); ++i)
    if (got[i] != f32_to_fp16(in[i])) return (long long)i;
  return -1;
}

TEST(SimdF16Out, HandPickedValues) {
  // 1.0, -2.0, 65504 (max half), 65519.99 (rounds down to 65504), 65520 (rounds to inf),
  // 65536, inf, -inf, quiet and signaling NaNs with payloads, 2^-14 (smallest normal half) and
  // its neighbours, 2^-24 (smallest subnormal), 2^-25 (ties to 0), just above 2^-25 (rounds to
  // 2^-24), an f32 subnormal, -0.
  const uint32_t v[] = {0x3F800000u, 0xC0000000u, 0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0x47800000u, 0x7F800000u,
                        0xFF800000u, 0x7FC00000u, 0xFFC12345u, 0x7F800001u, 0x7FBFFFFFu, 0x38800000u, 0x387FFFFFu,
                        0x38800001u, 0x33800000u, 0x33000000u, 0x33000001u, 0x00000001u, 0x80000000u, 0x00000000u};
  const uint16_t want[] = {0x3C00, 0xC000, 0x7BFF, 0x7BFF, 0x7C00, 0x7C00, 0x7C00, 0xFC00, 0x7E00, 0xFE09, 0x7E00,
                           0x7FFF, 0x0400, 0x0400, 0x0400, 0x0001, 0x0000, 0x0001, 0x0000, 0x8000, 0x0000};
  std::vector<uint32_t> bits(v, v + sizeof v / sizeof v[0]);
  std::vector<uint16_t> got;
  EXPECT_EQ(first_mismatch(bits, &got), -1);
  for (size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(got[i], want[i]) << "input 0x" << std::hex << bits[i];
}

TEST(SimdF16Out, StridedSweepOfAllPatterns) {
  // Every 97th pattern (44 million values), in rows of odd length.
  std::vector<uint32_t> bits;
  bits.reserve(1 << 20);
  uint64_t u = 0;
  while (u < (1ull << 32)) {
    bits.clear();
    for (; u < (1ull << 32) && bits.size() < (1u << 20) - 3; u += 97) bits.push_back(uint32_t(u));
    long long i = first_mismatch(bits);
    ASSERT_EQ(i, -1) << "input 0x" << std::hex << bits[size_t(i)];
  }
}

TEST(SimdF16Out, EveryRoundingBoundary) {
  // For every sign and exponent: the 13 dropped mantissa bits just below, at and above the
  // halfway point and at the ends, with the kept mantissa even and odd, under varied upper bits.
  const uint32_t low13[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF};
  std::vector<uint32_t> bits;
  for (uint32_t se = 0; se < 512; ++se)
    for (uint32_t lo : low13)
      for (uint32_t kept = 0; kept < 1024; kept += 73)
        for (uint32_t parity = 0; parity < 2; ++parity) bits.push_back((se << 23) | ((kept | parity) << 13) | lo);
  long long i = first_mismatch(bits);
  EXPECT_EQ(i, -1) << "input 0x" << std::hex << (i >= 0 ? bits[size_t(i)] : 0);
}

}  // namespace
