// Reference kernel of UQFF F8Q8 (33-byte blocks {E4M3FN d; i8 qs[32]}, value = qs * d / 448):
// mistral.rs's order, d = e4m3fn(byte) / 448 rounded once, then q * d rounded once; a NaN scale
// byte (0x7F, 0xFF) gives +NaN for the whole block, as the float8 crate's positive NaN does.
#include <gtest/gtest.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "kernel_api.h"
#include "weightstream/dequant.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// E4M3FN from the bit layout: bias 7, subnormals, S.1111.111 NaN.
float e4m3fn_value(uint8_t b) {
  int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
  return float(sign ? -v : v);
}

float expected_value(uint8_t d_byte, int8_t q) {
  if ((d_byte & 0x7F) == 0x7F) return NAN;  // positive
  volatile float d = e4m3fn_value(d_byte) / 448.0f;
  return float(q) * d;
}

std::vector<float> decode(const std::vector<uint8_t>& in, ws::Status* st) {
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::F8Q8;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = in.size() / 33 * 32;
  std::vector<float> out(spec.elements, -1.0f);
  ws::Error err;
  *st = ws::dequantize(spec, in.data(), in.size(), out.data(), out.size() * 4, &err);
  return out;
}

TEST(RefF8Q8, EveryScaleByteTimesEveryInt8) {
  // 256 x 8 blocks: scale byte b is followed by 8 blocks whose int8 values run from -128 to 127.
  std::vector<uint8_t> in(256 * 8 * 33);
  for (int b = 0; b < 256; ++b)
    for (int k = 0; k < 8; ++k) {
      uint8_t* blk = &in[(b * 8 + k) * 33];
      blk[0] = uint8_t(b);
      for (int j = 0; j < 32; ++j) blk[1 + j] = uint8_t(int8_t(k * 32 + j - 128));
    }
  ws::Status st;
  std::vector<float> got = decode(in, &st);
  ASSERT_EQ(st, ws::Status::Ok);
  size_t bad = 0;
  for (int b = 0; b < 256; ++b)
    for (int i = 0; i < 256; ++i) {
      float e = expected_value(uint8_t(b), int8_t(i - 128)), g = got[b * 256 + i];
      bool same = isnan(e) ? isnan(g) && !signbit(g) : bits_of(e) == bits_of(g);
      if (!same && ++bad <= 4) ADD_FAILURE() << "scale byte " << b << " q " << i - 128 << ": expected " << e << " got " << g;
    }
  EXPECT_EQ(bad, 0u);
}

TEST(RefF8Q8, HandComputedBlocks) {
  std::vector<uint8_t> in(3 * 33, 0);
  // Block 0: d = 0x7E = 448 -> d / 448 = 1: the values are the integers.
  in[0] = 0x7E;
  const int8_t qs[4] = {-128, -1, 1, 127};
  for (int j = 0; j < 4; ++j) in[1 + j] = uint8_t(qs[j]);
  // Block 1: d = 0xB8 = -1.0 -> -1/448 (rounded): q = 2 gives -2 * fl(1/448).
  in[33] = 0xB8;
  in[34] = 2;
  // Block 2: d = 0xFF (E4M3FN NaN, sign set): +NaN everywhere.
  in[66] = 0xFF;
  in[67] = 5;
  ws::Status st;
  std::vector<float> got = decode(in, &st);
  ASSERT_EQ(st, ws::Status::Ok);
  EXPECT_EQ(got[0], -128.0f);
  EXPECT_EQ(got[1], -1.0f);
  EXPECT_EQ(got[2], 1.0f);
  EXPECT_EQ(got[3], 127.0f);
  EXPECT_EQ(bits_of(got[4]), 0u);  // q = 0: +0 * 1
  volatile float inv448 = 1.0f / 448.0f;
  EXPECT_EQ(got[32], 2.0f * -inv448);
  EXPECT_EQ(bits_of(got[33]), 0x80000000u);  // q = 0 times a negative d: -0
  for (int j = 0; j < 32; ++j) EXPECT_EQ(bits_of(got[64 + j]), 0x7FC00000u) << j;
}

// q * (d / 448) is not (q * d) / 448: every (scale byte, int8) pair is in the first test, and some
// round differently in the other order, so that test would catch a kernel that divided last.
TEST(RefF8Q8, DividingLastGivesOtherBits) {
  size_t differs = 0;
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;
    for (int q = -128; q < 128; ++q) {
      volatile float prod = float(q) * e4m3fn_value(uint8_t(b));
      if (bits_of(expected_value(uint8_t(b), int8_t(q))) != bits_of(prod / 448.0f)) ++differs;
    }
  }
  EXPECT_GT(differs, 0u);
}

TEST(RefF8Q8, ElementsMustBeWholeBlocks) {
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::F8Q8;
  spec.elements = 48;
  ws::Dequantizer d;
  EXPECT_EQ(d.init(spec), ws::Status::InvalidQuantParams);
  spec.elements = 64;
  EXPECT_EQ(d.init(spec), ws::Status::Ok);
  EXPECT_EQ(d.input_bytes(), 66u);
}

}  // namespace
