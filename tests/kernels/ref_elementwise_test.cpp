// Reference kernels of the element-wise formats: F16/BF16 against ggml's vectors (bit-exact,
// NaNs by sign), and every byte value of the three 8-bit float dtypes against values derived here
// from the bit layouts (not through fp_convert.h).
#include <gtest/gtest.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "kernel_api.h"
#include "weightstream/dequant.h"

namespace {

using ws::kernels::KernelContext;

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> out;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return out;
}

std::string vectors_dir() { return std::string(WS_SHARED_DIR) + "/testdata/vectors/ggml/"; }

uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// Bit-exact, except that NaNs compare by "is NaN" and sign (payloads are not specified).
::testing::AssertionResult same_value(float expected, float got) {
  uint32_t e = bits_of(expected), g = bits_of(got);
  if (isnan(expected) && isnan(got) && (e >> 31) == (g >> 31)) return ::testing::AssertionSuccess();
  if (e == g) return ::testing::AssertionSuccess();
  char msg[128];
  snprintf(msg, sizeof msg, "expected 0x%08X (%.9g), got 0x%08X (%.9g)", e, double(expected), g, double(got));
  return ::testing::AssertionFailure() << msg;
}

// Runs a kernel over a whole element-wise vector file and compares with ggml's output.
void check_vector(const char* label, ws::kernels::BlockKernel kernel, size_t* nan_count) {
  ASSERT_NE(kernel, nullptr) << "kernel not linked";
  std::vector<uint8_t> in = read_file(vectors_dir() + label + ".blocks.bin");
  std::vector<uint8_t> ex = read_file(vectors_dir() + label + ".f32.bin");
  ASSERT_FALSE(in.empty()) << label;
  ASSERT_EQ(ex.size(), in.size() * 2) << label;
  size_t n = in.size() / 2;
  std::vector<float> out(n, 0.0f), expected(n);
  memcpy(expected.data(), ex.data(), ex.size());
  ws::DequantSpec spec;
  KernelContext ctx{&spec, 0};
  kernel(in.data(), n, out.data(), ctx);
  size_t bad = 0;
  *nan_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (isnan(expected[i])) ++*nan_count;
    if (!same_value(expected[i], out[i]) && ++bad <= 5) ADD_FAILURE() << label << "[" << i << "]: " << same_value(expected[i], out[i]).message();
  }
  EXPECT_EQ(bad, 0u) << label;
}

TEST(RefElementwise, F16VectorsMatchGgml) {
  size_t nans = 0;
  check_vector("F16", ws::kernels::ref::F16, &nans);
  check_vector("F16_all", ws::kernels::ref::F16, &nans);
  EXPECT_EQ(nans, 2u * 1023);  // every exponent-31 pattern with a mantissa, both signs
}

TEST(RefElementwise, BF16VectorsMatchGgml) {
  size_t nans = 0;
  check_vector("BF16", ws::kernels::ref::BF16, &nans);
  check_vector("BF16_all", ws::kernels::ref::BF16, &nans);
  EXPECT_EQ(nans, 2u * 127);
}

// F16_all's signaling NaNs (0x7C01-0x7DFF and the negatives) come out quiet, as ggml's F16C path
// gives them: the payload moves up 13 bits and the quiet bit is set.
TEST(RefElementwise, F16SignalingNaNComesOutQuiet) {
  const uint8_t in[4] = {0x01, 0x7C, 0xFF, 0xFD};  // 0x7C01, 0xFDFF
  float out[2];
  ws::DequantSpec spec;
  ws::kernels::ref::F16(in, 2, out, KernelContext{&spec, 0});
  EXPECT_EQ(bits_of(out[0]), 0x7FC02000u);
  EXPECT_EQ(bits_of(out[1]), 0xFFFFE000u);
}

// BF16 -> F32 is the top half of the f32: even a signaling NaN passes unchanged.
TEST(RefElementwise, BF16KeepsEveryPattern) {
  const uint8_t in[6] = {0x81, 0x7F, 0x01, 0x80, 0x80, 0xFF};  // sNaN, -denormal, -inf
  float out[3];
  ws::DequantSpec spec;
  ws::kernels::ref::BF16(in, 3, out, KernelContext{&spec, 0});
  EXPECT_EQ(bits_of(out[0]), 0x7F810000u);
  EXPECT_EQ(bits_of(out[1]), 0x80010000u);
  EXPECT_EQ(bits_of(out[2]), 0xFF800000u);
}

TEST(RefElementwise, F32IsACopyOfTheBits) {
  const uint32_t words[4] = {0x7F800001u /* sNaN */, 0x80000000u, 0x00000001u, 0x3F800000u};
  float out[4];
  ws::DequantSpec spec;
  ws::kernels::ref::F32(reinterpret_cast<const uint8_t*>(words), 4, out, KernelContext{&spec, 0});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bits_of(out[i]), words[i]) << i;
}

// --- 8-bit floats, from the bit layout ---

// E4M3FN (torch.float8_e4m3fn): bias 7, 3 mantissa bits, subnormals at exponent 0, no inf;
// S.1111.111 is NaN; max 448.
float e4m3fn_expected(uint8_t b) {
  int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return sign ? -NAN : NAN;
  double v = e == 0 ? ldexp(m / 8.0, -6) : ldexp(1.0 + m / 8.0, e - 7);
  return float(sign ? -v : v);
}

// E5M2: bias 15, 2 mantissa bits, IEEE-like inf and NaN at exponent 31.
float e5m2_expected(uint8_t b) {
  int sign = b >> 7, e = (b >> 2) & 31, m = b & 3;
  double v;
  if (e == 31) v = m == 0 ? INFINITY : NAN;
  else v = e == 0 ? ldexp(m / 4.0, -14) : ldexp(1.0 + m / 4.0, e - 15);
  return float(sign ? -v : v);
}

// E8M0FNU (torch.float8_e8m0fnu): unsigned power of two 2^(b-127); 0xFF is NaN; no zero.
float e8m0fnu_expected(uint8_t b) { return b == 0xFF ? NAN : float(ldexp(1.0, int(b) - 127)); }

void check_all_bytes(ws::kernels::BlockKernel kernel, float (*expected)(uint8_t), const char* name) {
  ASSERT_NE(kernel, nullptr) << name << " kernel not linked";
  uint8_t in[256];
  for (int i = 0; i < 256; ++i) in[i] = uint8_t(i);
  float out[256];
  ws::DequantSpec spec;
  kernel(in, 256, out, KernelContext{&spec, 0});
  for (int i = 0; i < 256; ++i) EXPECT_TRUE(same_value(expected(uint8_t(i)), out[i])) << name << " byte 0x" << std::hex << i;
}

TEST(RefElementwise, F8E4M3AllBytes) {
  check_all_bytes(ws::kernels::ref::F8_E4M3, e4m3fn_expected, "F8_E4M3");
  // Landmarks, written out: the largest finite value, the smallest normal and subnormal.
  const uint8_t in[6] = {0x7E, 0xFE, 0x08, 0x01, 0x7F, 0xFF};
  float out[6];
  ws::DequantSpec spec;
  ws::kernels::ref::F8_E4M3(in, 6, out, KernelContext{&spec, 0});
  EXPECT_EQ(out[0], 448.0f);
  EXPECT_EQ(out[1], -448.0f);
  EXPECT_EQ(out[2], 0.015625f);       // 2^-6
  EXPECT_EQ(out[3], 0.001953125f);    // 2^-9
  EXPECT_TRUE(isnan(out[4]) && !signbit(out[4]));  // not MLX's 480: this is the tensor dtype
  EXPECT_TRUE(isnan(out[5]) && signbit(out[5]));
}

TEST(RefElementwise, F8E5M2AllBytes) {
  check_all_bytes(ws::kernels::ref::F8_E5M2, e5m2_expected, "F8_E5M2");
  const uint8_t in[4] = {0x7B, 0x7C, 0xFC, 0x01};
  float out[4];
  ws::DequantSpec spec;
  ws::kernels::ref::F8_E5M2(in, 4, out, KernelContext{&spec, 0});
  EXPECT_EQ(out[0], 57344.0f);
  EXPECT_EQ(out[1], INFINITY);
  EXPECT_EQ(out[2], -INFINITY);
  EXPECT_EQ(out[3], 1.52587890625e-05f);  // 2^-16
}

TEST(RefElementwise, F8E8M0AllBytes) {
  check_all_bytes(ws::kernels::ref::F8_E8M0, e8m0fnu_expected, "F8_E8M0");
  const uint8_t in[4] = {0x00, 0x7F, 0xFE, 0xFF};
  float out[4];
  ws::DequantSpec spec;
  ws::kernels::ref::F8_E8M0(in, 4, out, KernelContext{&spec, 0});
  EXPECT_EQ(bits_of(out[0]), 0x00400000u);  // 2^-127, an f32 subnormal (not zero)
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], float_of(0x7F000000u));  // 2^127
  EXPECT_TRUE(isnan(out[3]));
}

// The same formats through the Dequantizer (reference implementation), f32 out.
TEST(RefElementwise, ThroughTheDequantizer) {
  uint8_t in[256];
  for (int i = 0; i < 256; ++i) in[i] = uint8_t(i);
  const struct {
    ws::QuantFormat f;
    float (*expected)(uint8_t);
  } cases[] = {{ws::QuantFormat::F8_E4M3, e4m3fn_expected},
               {ws::QuantFormat::F8_E5M2, e5m2_expected},
               {ws::QuantFormat::F8_E8M0, e8m0fnu_expected}};
  for (const auto& c : cases) {
    ws::DequantSpec spec;
    spec.format = c.f;
    spec.elements = 256;
    spec.impl = ws::KernelImpl::Reference;
    float out[256];
    ws::Error err;
    ASSERT_EQ(ws::dequantize(spec, in, sizeof in, out, sizeof out, &err), ws::Status::Ok) << ws::quant_format_name(c.f);
    for (int i = 0; i < 256; ++i) EXPECT_TRUE(same_value(c.expected(uint8_t(i)), out[i])) << ws::quant_format_name(c.f) << " " << i;
  }
}

}  // namespace
