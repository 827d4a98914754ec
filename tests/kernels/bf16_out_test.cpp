// BF16 output (issue #29): ws::f32_to_bf16 against hand-worked values and an independent oracle
// (nearest of the two bf16 neighbours in double arithmetic, ties to the even one), and the
// SIMD128 row conversion bit-identical to it over every f32 exponent and sign with the low half
// patterns that decide rounding. The formats' BF16 output through the Dequantizer is
// simd_differential_test's (reference = SIMD128 = reference f32 rounded).
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <vector>

#include "simd128/f16_out.h"
#include "weightstream/dequant.h"

namespace {

uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// Independent oracle: the bf16 just below |x| (truncation) and the next one up, whichever is
// nearer in exact double arithmetic, the even one on a tie; 0x7F80 as the upper neighbour stands
// for 2^128 (round as if the exponent were unbounded, then overflow to inf). NaN: sign, top
// payload bits, quiet bit.
uint16_t oracle(uint32_t x) {
  const uint32_t sign = x & 0x80000000u, a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return uint16_t((x >> 16) | 0x40);
  if (a == 0x7F800000u) return uint16_t((sign >> 16) | 0x7F80);
  const uint32_t lo = a >> 16, hi = lo + 1;
  const double v = double(from_bits(a));
  const double vlo = double(from_bits(lo << 16));
  const double vhi = hi == 0x7F80 ? ldexp(1.0, 128) : double(from_bits(hi << 16));
  uint32_t r;
  if (v - vlo < vhi - v) r = lo;
  else if (v - vlo > vhi - v) r = hi;
  else r = (lo & 1) ? hi : lo;
  return uint16_t((sign >> 16) | r);
}

TEST(Bf16Out, HandWorkedValues) {
  struct V {
    uint32_t in;
    uint16_t out;
  } const v[] = {
      {0x3F800000u, 0x3F80},  // 1.0
      {0x3F808000u, 0x3F80},  // 1 + 2^-8: a tie, to the even 1.0
      {0x3F818000u, 0x3F82},  // a tie above an odd bf16: up
      {0x3F808001u, 0x3F81},  // just past the tie: up
      {0x3F807FFFu, 0x3F80},  // just below: down
      {0xBF818000u, 0xBF82},  // signs round the magnitude
      {0x7F7F7FFFu, 0x7F7F},  // below the largest finite bf16's half step
      {0x7F7F8000u, 0x7F80},  // a tie past bf16's largest finite (odd): inf
      {0x7F7FFFFFu, 0x7F80},  // f32's largest finite: inf
      {0x7F800000u, 0x7F80},  // inf
      {0xFF800000u, 0xFF80},  // -inf
      {0x00000000u, 0x0000},
      {0x80000000u, 0x8000},  // -0 keeps its sign
      {0x00008000u, 0x0000},  // subnormal tie to even 0
      {0x00018000u, 0x0002},  // subnormal tie up to even
      {0x007FFFFFu, 0x0080},  // the largest subnormal rounds up to the smallest normal
      {0x7FC00000u, 0x7FC0},  // quiet NaN
      {0x7F800001u, 0x7FC0},  // signalling NaN: quiet now; its low payload is gone
      {0xFF812345u, 0xFFC1},  // NaN keeps sign and top payload bits, gains the quiet bit
      {0x7FFFFFFFu, 0x7FFF},  // the all-ones NaN: no carry into the sign
  };
  for (const V& t : v) {
    EXPECT_EQ(ws::f32_to_bf16(from_bits(t.in)), t.out) << std::hex << t.in;
    EXPECT_EQ(oracle(t.in), t.out) << std::hex << t.in;
  }
}

// Every exponent, sign and top mantissa bits (the high 16 bits), with the low halves around the
// rounding points and a few others: the scalar rounding against the oracle, the SIMD128 row (at
// lengths with and without a tail) against the scalar.
TEST(Bf16Out, ScalarMatchesOracleAndSimdRowMatchesScalar) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234, 0xC0DE};
  std::vector<float> in;
  in.reserve(65536 * 8);
  for (uint32_t h = 0; h < 65536; ++h)
    for (uint32_t lo : lows) in.push_back(from_bits(h << 16 | lo));
  std::vector<uint16_t> row(in.size() + 16, 0xABCD);
  ws::kernels::simd128::f32_to_bf16_row(in.data(), in.size() - 3, row.data());  // a 5-value tail
  size_t bad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t s = ws::f32_to_bf16(in[i]);
    if (s != oracle(bits(in[i])) && ++bad < 10) ADD_FAILURE() << std::hex << bits(in[i]) << " scalar " << s;
    if (i < in.size() - 3 && row[i] != s && ++bad < 10)
      ADD_FAILURE() << std::hex << bits(in[i]) << " simd " << row[i] << " scalar " << s;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(row[in.size() - 3], 0xABCD);  // nothing written past n
}

// The Dequantizer's BF16 output through every path: BF16 stored in, out as stored (a signalling
// NaN stays one); F32 in, rounded; an F8Q8 tensor's padded last block.
TEST(Bf16Out, DequantizerPaths) {
  const uint16_t stored[8] = {0x3F80, 0x7F81, 0xFF80, 0x0001, 0x8000, 0x4049, 0xC2F7, 0x7FC0};
  uint16_t out[8];
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::BF16;
  spec.out = ws::OutType::BF16;
  spec.elements = 8;
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    spec.impl = impl;
    ASSERT_EQ(ws::dequantize(spec, stored, sizeof stored, out, sizeof out, nullptr), ws::Status::Ok);
    EXPECT_EQ(memcmp(out, stored, sizeof out), 0);
  }
  const float f[8] = {1.0f, from_bits(0x3F818000u), -0.0f, from_bits(0x7F7FFFFFu), from_bits(0xFF812345u), 3.14159f,
                      -123.456f, 1e-40f};
  spec.format = ws::QuantFormat::F32;
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    spec.impl = impl;
    ASSERT_EQ(ws::dequantize(spec, f, sizeof f, out, sizeof out, nullptr), ws::Status::Ok);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], oracle(bits(f[i]))) << i;
  }
  EXPECT_EQ(ws::out_type_bytes(ws::OutType::BF16), 2u);
  ws::OutType t;
  ASSERT_TRUE(ws::out_type_from_name("bf16", &t));
  EXPECT_EQ(t, ws::OutType::BF16);
  EXPECT_STREQ(ws::out_type_name(ws::OutType::F16), "f16");
  EXPECT_FALSE(ws::out_type_from_name("BF16", &t));
  spec.out = static_cast<ws::OutType>(3);
  ws::Dequantizer d;
  EXPECT_EQ(d.init(spec), ws::Status::InvalidQuantParams);
}

}  // namespace
