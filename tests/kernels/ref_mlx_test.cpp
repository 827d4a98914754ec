// Reference kernels of MLX's quantization modes: affine for every bits x group x scale dtype,
// mxfp4, mxfp8 and nvfp4 (with and without a global scale), against values computed here from
// unpacked integers and scales (own packer, own small-float decoders from the bit layouts).
#include <gtest/gtest.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <random>
#include <vector>

#include "kernel_api.h"
#include "weightstream/dequant.h"

namespace {

using ws::DType;
using ws::QuantFormat;
using ws::kernels::KernelContext;

uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

::testing::AssertionResult same_value(float expected, float got) {
  uint32_t e = bits_of(expected), g = bits_of(got);
  if (isnan(expected) && isnan(got) && (e >> 31) == (g >> 31)) return ::testing::AssertionSuccess();
  if (e == g) return ::testing::AssertionSuccess();
  char msg[128];
  snprintf(msg, sizeof msg, "expected 0x%08X (%.9g), got 0x%08X (%.9g)", e, double(expected), g, double(got));
  return ::testing::AssertionFailure() << msg;
}

// Compares whole outputs; reports the first few differences.
void expect_same(const std::vector<float>& expected, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(expected.size(), got.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    ::testing::AssertionResult r = same_value(expected[i], got[i]);
    if (!r && ++bad <= 4) ADD_FAILURE() << what << " [" << i << "]: " << r.message();
  }
  EXPECT_EQ(bad, 0u) << what;
}

// Rounds through a volatile so no compiler can fuse the multiply into the add that follows.
float mul(float a, float b) {
  volatile float p = a * b;
  return p;
}
// The f32 quotient, rounded once (through a volatile, as mul()).
float quot(float a, float b) {
  volatile float q = a / b;
  return q;
}

// --- own decoders, from the bit layouts ---

float fp16_value(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return float(sign ? -v : v);
}
float bf16_value(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
// MLX's E8M0 scale: 2^(s-127), 0 -> 2^-127, 0xFF -> +inf.
float e8m0_value(uint8_t s) { return s == 0xFF ? INFINITY : float(ldexp(1.0, int(s) - 127)); }
// MLX's E4M3: bias 7, subnormals; 0x7F/0xFF read as the number the pattern would be (±480).
float e4m3_mlx_value(uint8_t b) {
  int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
  double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
  return float(sign ? -v : v);
}
// FP4 E2M1: sign bit 3, exponent bits 2-1 (bias 1), mantissa bit 0.
float e2m1_value(uint8_t n) {
  int sign = n >> 3, e = (n >> 1) & 3, m = n & 1;
  double v = e == 0 ? m * 0.5 : ldexp(2 + m, e - 2);
  return float(sign ? -v : v);
}

// --- own packer: element i is bits [i*bits, (i+1)*bits) of a stream of little-endian u32 words ---

std::vector<uint32_t> pack_words(const std::vector<uint32_t>& q, uint32_t bits) {
  std::vector<uint32_t> words(q.size() * bits / 32, 0);
  for (size_t i = 0; i < q.size(); ++i)
    for (uint32_t k = 0; k < bits; ++k)
      if ((q[i] >> k) & 1) {
        size_t pos = i * bits + k;
        words[pos / 32] |= 1u << (pos % 32);
      }
  return words;
}

std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words)
    for (int k = 0; k < 4; ++k) out.push_back(uint8_t(w >> (8 * k)));
  return out;
}

// A companion array (scales or biases) in `dtype`, and the f32 values it holds.
struct Companions {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

Companions make_companions(DType dtype, size_t n, std::mt19937& rng, bool biases) {
  Companions c;
  std::uniform_real_distribution<float> mag(biases ? -2.0f : 1e-4f, biases ? 2.0f : 0.5f);
  for (size_t i = 0; i < n; ++i) {
    float want = mag(rng);
    if (dtype == DType::F32) {
      uint32_t u = bits_of(want);
      for (int k = 0; k < 4; ++k) c.bytes.push_back(uint8_t(u >> (8 * k)));
      c.values.push_back(want);
    } else {
      // Any 16-bit pattern near `want` will do: truncate the f32 (BF16) or pick the nearby
      // fp16 by exponent and mantissa (F16); the value is decoded back independently.
      uint16_t h;
      if (dtype == DType::BF16) {
        h = uint16_t(bits_of(want) >> 16);
      } else {
        int e;
        double fr = frexp(fabs(double(want)), &e);  // want = fr * 2^e, fr in [0.5, 1)
        int he = e - 1 + 15;
        uint16_t sign = want < 0 ? 0x8000 : 0;
        if (he <= 0) h = uint16_t(sign | uint16_t(ldexp(fabs(double(want)), 24)));  // subnormal
        else h = uint16_t(sign | (he << 10) | (uint16_t(fr * 2048) & 1023));
      }
      c.bytes.push_back(uint8_t(h));
      c.bytes.push_back(uint8_t(h >> 8));
      c.values.push_back(dtype == DType::BF16 ? bf16_value(h) : fp16_value(h));
    }
  }
  return c;
}

std::vector<float> run_kernel(ws::kernels::BlockKernel k, const ws::DequantSpec& spec, const uint8_t* src,
                              size_t n_blocks, uint64_t first_block, size_t elems_per_block) {
  std::vector<float> out(n_blocks * elems_per_block, -12345.0f);
  if (!k) {
    ADD_FAILURE() << "kernel not linked";
    return out;
  }
  k(src, n_blocks, out.data(), KernelContext{&spec, first_block});
  return out;
}

std::vector<float> run_dequantizer(const ws::DequantSpec& spec, const std::vector<uint8_t>& in, ws::Status* status) {
  std::vector<float> out(spec.elements, -12345.0f);
  ws::Error err;
  *status = ws::dequantize(spec, in.data(), in.size(), out.data(), out.size() * 4, &err);
  return out;
}

// --- affine ---

const char* dtype_str(DType d) { return d == DType::F32 ? "F32" : d == DType::F16 ? "F16" : "BF16"; }

TEST(RefMlxAffine, EveryBitsGroupAndScaleDtype) {
  std::mt19937 rng(20250101);
  for (uint32_t bits : {2u, 3u, 4u, 5u, 6u, 8u})
    for (uint32_t group : {32u, 64u, 128u})
      for (DType dtype : {DType::BF16, DType::F16, DType::F32}) {
        const size_t groups = 7;
        std::vector<uint32_t> q(groups * group);
        for (auto& v : q) v = rng() & ((1u << bits) - 1);
        // Make sure the extremes appear in every group.
        for (size_t g = 0; g < groups; ++g) {
          q[g * group] = 0;
          q[g * group + group - 1] = (1u << bits) - 1;
        }
        std::vector<uint8_t> packed = words_to_bytes(pack_words(q, bits));
        Companions sc = make_companions(dtype, groups, rng, false);
        Companions bi = make_companions(dtype, groups, rng, true);
        std::vector<float> expected(q.size());
        for (size_t i = 0; i < q.size(); ++i)
          expected[i] = mul(sc.values[i / group], float(q[i])) + bi.values[i / group];

        ws::DequantSpec spec;
        spec.format = QuantFormat::MlxAffine;
        spec.impl = ws::KernelImpl::Reference;
        spec.elements = q.size();
        spec.bits = bits;
        spec.group = group;
        spec.scale_dtype = dtype;
        spec.scales = sc.bytes.data();
        spec.biases = bi.bytes.data();
        std::string what = "bits " + std::to_string(bits) + " group " + std::to_string(group) + " " + dtype_str(dtype);
        ASSERT_EQ(packed.size(), q.size() * bits / 8) << what;

        ws::Status st;
        std::vector<float> got = run_dequantizer(spec, packed, &st);
        ASSERT_EQ(st, ws::Status::Ok) << what;
        expect_same(expected, got, what);

        // The kernel on its own, from group 3 on: scales are found by ctx.first_block.
        const size_t block_bytes = group * bits / 8;
        std::vector<float> tail = run_kernel(ws::kernels::ref::MlxAffine, spec, packed.data() + 3 * block_bytes,
                                             groups - 3, 3, group);
        expect_same(std::vector<float>(expected.begin() + 3 * group, expected.end()), tail, what + " from group 3");
      }
}

// Hand-packed groups of 32 for the widths whose values cross word boundaries (FORMATS.md §2:
// 3-bit packs 8 values per 3 bytes, 5-bit 8 per 5, 6-bit 4 per 3). The words were written out by
// hand from the expected integers; a scale of 1 and bias 0 make the output the integers.
struct HandCase {
  uint32_t bits;
  std::vector<uint32_t> words;
  std::vector<uint32_t> ints;
};

const HandCase kHandCases[] = {
    // q[i] = (5i + 1) mod 8. Element 10 (= 3, bits 30-32): 0b11 at the top of word 0, 0 in bit 0
    // of word 1. Element 21 (= 2, bits 63-65): bit 31 of word 1 is 0, word 2 bits 0-1 = 0b01.
    {3,
     {0xF19D50F1u, 0x50F19D50u, 0x9D50F19Du},
     {1, 6, 3, 0, 5, 2, 7, 4, 1, 6, 3, 0, 5, 2, 7, 4, 1, 6, 3, 0, 5, 2, 7, 4, 1, 6, 3, 0, 5, 2, 7, 4}},
    // q[i] = (7i + 3) mod 32. Crossing: element 6 (= 13, bits 30-34), 12 (= 23, bits 60-64),
    // 19 (= 8, bits 95-99), 25 (= 18, bits 125-129).
    {5,
     {0x4DFC4543u, 0x78245BA3u, 0x0753617Du, 0x4B276CF4u, 0xE55C7066u},
     {3, 10, 17, 24, 31, 6, 13, 20, 27, 2, 9, 16, 23, 30, 5, 12,
      19, 26, 1, 8, 15, 22, 29, 4, 11, 18, 25, 0, 7, 14, 21, 28}},
    // q[i] = (13i + 5) mod 64. Crossing: element 5 (= 6, bits 30-35), 10 (= 7, bits 60-65),
    // 21 (= 22, bits 126-131), 26 (= 23, bits 156-161).
    {6,
     {0xB9B1F485u, 0x7EAD8131u, 0x23BBA150u, 0x89F2F895u, 0x72BDC235u, 0x60BFB191u},
     {5, 18, 31, 44, 57, 6, 19, 32, 45, 58, 7, 20, 33, 46, 59, 8,
      21, 34, 47, 60, 9, 22, 35, 48, 61, 10, 23, 36, 49, 62, 11, 24}},
};

TEST(RefMlxAffine, HandPackedWordsCrossingBoundaries) {
  for (const HandCase& c : kHandCases) {
    std::string what = std::to_string(c.bits) + "-bit";
    // The test's own packer agrees with the hand-written words (so the random test above packs
    // the way FORMATS.md says).
    EXPECT_EQ(pack_words(c.ints, c.bits), c.words) << what;

    std::vector<uint8_t> packed = words_to_bytes(c.words);
    const uint8_t one_bf16[2] = {0x80, 0x3F}, zero_bf16[2] = {0, 0};
    ws::DequantSpec spec;
    spec.format = QuantFormat::MlxAffine;
    spec.impl = ws::KernelImpl::Reference;
    spec.elements = 32;
    spec.bits = c.bits;
    spec.group = 32;
    spec.scale_dtype = DType::BF16;
    spec.scales = one_bf16;
    spec.biases = zero_bf16;
    ws::Status st;
    std::vector<float> got = run_dequantizer(spec, packed, &st);
    ASSERT_EQ(st, ws::Status::Ok) << what;
    for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], float(c.ints[i])) << what << " element " << i;

    // And with a scale and bias, w = s*q + b: s = -0.75 (BF16 0xBF40), b = 10 (0x4120).
    const uint8_t s_bf16[2] = {0x40, 0xBF}, b_bf16[2] = {0x20, 0x41};
    spec.scales = s_bf16;
    spec.biases = b_bf16;
    got = run_dequantizer(spec, packed, &st);
    ASSERT_EQ(st, ws::Status::Ok) << what;
    for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], 10.0f - 0.75f * float(c.ints[i])) << what << " element " << i;
  }
}

// The product is rounded before the bias is added (no fused multiply-add): with s = 1 + 2^-23,
// q = 3 and b = -3, s*q = 3 + 1.5 ulp (ulp 2^-22 in [2, 4)) ties to the even 3 + 2 ulp, so
// w = 2^-21; a fused multiply-add would give the exact 3 * 2^-23.
TEST(RefMlxAffine, MultiplyThenAddRoundsTwice) {
  const float s = 1.0f + ldexpf(1.0f, -23), b = -3.0f;
  uint8_t sc[4], bi[4];
  memcpy(sc, &s, 4);
  memcpy(bi, &b, 4);
  std::vector<uint32_t> q(32, 3);
  std::vector<uint8_t> packed = words_to_bytes(pack_words(q, 8));
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxAffine;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = 32;
  spec.bits = 8;
  spec.group = 32;
  spec.scale_dtype = DType::F32;
  spec.scales = sc;
  spec.biases = bi;
  ws::Status st;
  std::vector<float> got = run_dequantizer(spec, packed, &st);
  ASSERT_EQ(st, ws::Status::Ok);
  EXPECT_EQ(got[0], ldexpf(1.0f, -21));
  EXPECT_EQ(got[31], ldexpf(1.0f, -21));
}

// --- mxfp4 / mxfp8 ---

TEST(RefMlxMxfp4, EveryScaleByteAndNibble) {
  // 256 groups: group g has E8M0 scale g, and its 32 nibbles run through all 16 codes twice.
  std::mt19937 rng(7);
  std::vector<uint8_t> packed(256 * 16), scales(256);
  std::vector<float> expected(256 * 32);
  for (int g = 0; g < 256; ++g) {
    scales[g] = uint8_t(g);
    for (int j = 0; j < 16; ++j) {
      uint8_t lo = uint8_t((j + g) & 15), hi = uint8_t(rng() & 15);
      packed[g * 16 + j] = uint8_t(lo | (hi << 4));
      expected[g * 32 + 2 * j] = e2m1_value(lo) * e8m0_value(uint8_t(g));
      expected[g * 32 + 2 * j + 1] = e2m1_value(hi) * e8m0_value(uint8_t(g));
    }
  }
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxMxfp4;
  spec.scales = scales.data();
  spec.elements = 256 * 32;
  spec.validate = false;  // scale 0xFF (+inf) is invalid data; the kernel still has a value for it
  std::vector<float> got = run_kernel(ws::kernels::ref::MlxMxfp4, spec, packed.data(), 256, 0, 32);
  expect_same(expected, got, "mxfp4");
  // Landmarks: scale 0 is 2^-127 (not zero), so code 1 (0.5) gives 2^-128; 0x8 is -0.
  EXPECT_EQ(bits_of(got[2 * 0 + 0]), 0x00000000u);  // group 0, nibble code 0: +0
  EXPECT_EQ(got[127 * 32 + 2 * 7], 4.0f) << "group 127 (scale 1), low nibble (7 + 127) & 15 = 6 -> 4.0";
  EXPECT_EQ(bits_of(got[1 * 32 + 2 * 0]), 0x00400000u) << "group 1 (scale 2^-126), code 1 (0.5): 2^-127";
  EXPECT_EQ(bits_of(got[0 * 32 + 2 * 1]), 0x00200000u) << "group 0 (scale 2^-127), code 1 (0.5): 2^-128";
  EXPECT_TRUE(isinf(got[255 * 32 + 2 * 2])) << "group 255 (scale +inf), code (2 + 255) & 15 = 1";
}

TEST(RefMlxMxfp4, ThroughTheDequantizerWithScaleOffset) {
  // Random groups through the Dequantizer; the kernel run alone from group 5 agrees.
  std::mt19937 rng(11);
  const int groups = 12;
  std::vector<uint8_t> packed(groups * 16), scales(groups);
  std::vector<float> expected(groups * 32);
  for (int g = 0; g < groups; ++g) {
    scales[g] = uint8_t(100 + rng() % 60);
    for (int j = 0; j < 16; ++j) {
      packed[g * 16 + j] = uint8_t(rng());
      expected[g * 32 + 2 * j] = e2m1_value(packed[g * 16 + j] & 15) * e8m0_value(scales[g]);
      expected[g * 32 + 2 * j + 1] = e2m1_value(packed[g * 16 + j] >> 4) * e8m0_value(scales[g]);
    }
  }
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxMxfp4;
  spec.impl = ws::KernelImpl::Reference;
  spec.scales = scales.data();
  spec.elements = groups * 32;
  ws::Status st;
  expect_same(expected, run_dequantizer(spec, packed, &st), "mxfp4 dequantizer");
  EXPECT_EQ(st, ws::Status::Ok);
  std::vector<float> tail = run_kernel(ws::kernels::ref::MlxMxfp4, spec, packed.data() + 5 * 16, groups - 5, 5, 32);
  expect_same(std::vector<float>(expected.begin() + 5 * 32, expected.end()), tail, "mxfp4 from group 5");
}

TEST(RefMlxMxfp8, EveryValueByteAndScales) {
  // 8 groups x 32 bytes = all 256 E4M3 bytes, each group with its own scale (incl. 0 and 254).
  const uint8_t scale_bytes[8] = {0, 1, 100, 127, 128, 140, 200, 254};
  std::vector<uint8_t> packed(256), scales(scale_bytes, scale_bytes + 8);
  std::vector<float> expected(256);
  for (int i = 0; i < 256; ++i) {
    packed[i] = uint8_t(i);
    expected[i] = e4m3_mlx_value(uint8_t(i)) * e8m0_value(scale_bytes[i / 32]);
  }
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxMxfp8;
  spec.impl = ws::KernelImpl::Reference;
  spec.scales = scales.data();
  spec.elements = 256;
  ws::Status st;
  std::vector<float> got = run_dequantizer(spec, packed, &st);
  ASSERT_EQ(st, ws::Status::Ok);
  expect_same(expected, got, "mxfp8");
  // MLX reads E4M3 0x7F as 480 (not NaN): group 3 has scale 127 (= 1).
  EXPECT_EQ(got[0x7F], 480.0f * 1.0f);
  EXPECT_EQ(got[0xFF], -480.0f * ldexpf(1.0f, 127));
}

// --- nvfp4 ---

struct Nvfp4Data {
  std::vector<uint8_t> packed, scales;
};

// 256 groups of 16: group g has E4M3 scale byte g; nibbles random.
Nvfp4Data nvfp4_data() {
  std::mt19937 rng(3);
  Nvfp4Data d;
  d.packed.resize(256 * 8);
  d.scales.resize(256);
  for (int g = 0; g < 256; ++g) {
    d.scales[g] = uint8_t(g);
    for (int j = 0; j < 8; ++j) d.packed[g * 8 + j] = uint8_t(rng());
  }
  return d;
}

// Expected output, with the operation order documented in mlx_quants.cpp.
std::vector<float> nvfp4_expected(const Nvfp4Data& d, int mode /*0 none, 1 MLX, 2 Ollama, 3 dividing*/, float gs) {
  std::vector<float> out(d.scales.size() * 16);
  const float g = gs / 2688.0f;
  for (size_t grp = 0; grp < d.scales.size(); ++grp) {
    float s = e4m3_mlx_value(d.scales[grp]);
    if (mode == 1) s = mul(s, g);
    if (mode == 3) s = quot(s, gs);
    for (int j = 0; j < 16; ++j) {
      uint8_t byte = d.packed[grp * 8 + j / 2];
      uint8_t nib = j % 2 ? byte >> 4 : byte & 15;
      float v = mul(e2m1_value(nib), s);
      if (mode == 2) v = mul(v, gs);
      out[grp * 16 + j] = v;
    }
  }
  return out;
}

TEST(RefMlxNvfp4, WithoutGlobalScale) {
  Nvfp4Data d = nvfp4_data();
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxNvfp4;
  spec.scales = d.scales.data();
  spec.elements = 256 * 16;
  std::vector<float> got = run_kernel(ws::kernels::ref::MlxNvfp4, spec, d.packed.data(), 256, 0, 16);
  expect_same(nvfp4_expected(d, 0, 1.0f), got, "nvfp4");
  // Scale 0x38 = 1.0: the output is the E2M1 values themselves.
  for (int j = 0; j < 16; ++j) {
    uint8_t byte = d.packed[0x38 * 8 + j / 2];
    EXPECT_EQ(got[0x38 * 16 + j], e2m1_value(j % 2 ? byte >> 4 : byte & 15));
  }
  // MLX reads scale 0x7F as 480 and 0xFF as -480 (not NaN): codes 2 (1.0) and 0xF (-6.0).
  const uint8_t one_group[8] = {0xF2, 0, 0, 0, 0, 0, 0, 0};
  std::vector<float> r = run_kernel(ws::kernels::ref::MlxNvfp4, spec, one_group, 1, 0x7F, 16);
  EXPECT_EQ(r[0], 480.0f);
  EXPECT_EQ(r[1], -2880.0f);
  r = run_kernel(ws::kernels::ref::MlxNvfp4, spec, one_group, 1, 0xFF, 16);
  EXPECT_EQ(r[0], -480.0f);
  EXPECT_EQ(r[1], 2880.0f);
}

TEST(RefMlxNvfp4, MlxGlobalScale) {
  Nvfp4Data d = nvfp4_data();
  for (float gs : {2688.0f, 1.0f, 1000.0f, 3.3e-3f}) {
    ws::DequantSpec spec;
    spec.format = QuantFormat::MlxNvfp4;
    spec.scales = d.scales.data();
    spec.elements = 256 * 16;
    spec.has_global_scale = true;
    spec.global_scale = gs;
    std::vector<float> got = run_kernel(ws::kernels::ref::MlxNvfp4, spec, d.packed.data(), 256, 0, 16);
    expect_same(nvfp4_expected(d, 1, gs), got, "nvfp4 MLX global " + std::to_string(gs));
    if (gs == 2688.0f) expect_same(nvfp4_expected(d, 0, 1.0f), got, "global 448*6 is the identity");
  }
}

TEST(RefMlxNvfp4, OllamaGlobalScale) {
  Nvfp4Data d = nvfp4_data();
  for (float gs : {1.0f, 0.5f, 1.0f / 3.0f, 7.25e-4f}) {
    ws::DequantSpec spec;
    spec.format = QuantFormat::MlxNvfp4;
    spec.scales = d.scales.data();
    spec.elements = 256 * 16;
    spec.has_global_scale = true;
    spec.global_scale = gs;
    spec.global_scale_is_ollama = true;
    std::vector<float> got = run_kernel(ws::kernels::ref::MlxNvfp4, spec, d.packed.data(), 256, 0, 16);
    expect_same(nvfp4_expected(d, 2, gs), got, "nvfp4 Ollama global " + std::to_string(gs));
    if (gs == 1.0f) expect_same(nvfp4_expected(d, 0, 1.0f), got, "Ollama global 1 is the identity");
  }
  // The two conventions differ: MLX divides by 448*6 first.
  ws::DequantSpec a, b;
  a.format = b.format = QuantFormat::MlxNvfp4;
  a.scales = b.scales = d.scales.data();
  a.elements = b.elements = 16;
  a.has_global_scale = b.has_global_scale = true;
  a.global_scale = b.global_scale = 2688.0f;
  b.global_scale_is_ollama = true;
  const uint8_t one_group[8] = {0x22, 0, 0, 0, 0, 0, 0, 0};  // two 1.0 codes
  std::vector<float> ra = run_kernel(ws::kernels::ref::MlxNvfp4, a, one_group, 1, 0x38, 16);
  std::vector<float> rb = run_kernel(ws::kernels::ref::MlxNvfp4, b, one_group, 1, 0x38, 16);
  EXPECT_EQ(ra[0], 1.0f);
  EXPECT_EQ(rb[0], 2688.0f);
}

// compressed-tensors' nvfp4-pack-quantized (forward.py _dequantize): the stored scale divided by
// the global scale, then times the code's value; not MLX's product with g = gs / 2688 (which
// differs in the last bit for some scales).
TEST(RefMlxNvfp4, DividingGlobalScale) {
  Nvfp4Data d = nvfp4_data();
  for (float gs : {1.0f, 2688.0f, 3617.2f, 218536.6f, 7.25e-4f}) {
    ws::DequantSpec spec;
    spec.format = QuantFormat::MlxNvfp4;
    spec.scales = d.scales.data();
    spec.elements = 256 * 16;
    spec.has_global_scale = true;
    spec.global_scale = gs;
    spec.global_scale_divides = true;
    std::vector<float> got = run_kernel(ws::kernels::ref::MlxNvfp4, spec, d.packed.data(), 256, 0, 16);
    expect_same(nvfp4_expected(d, 3, gs), got, "nvfp4 dividing global " + std::to_string(gs));
    if (gs == 1.0f) expect_same(nvfp4_expected(d, 0, 1.0f), got, "dividing by 1 is the identity");
    if (gs == 3617.2f) {
      // Multiplying by the reciprocal (vLLM's alpha) gives other bits somewhere.
      size_t differ = 0;
      const float inv = 1.0f / gs;
      for (int g = 0; g < 256; ++g) differ += quot(e4m3_mlx_value(uint8_t(g)), gs) != mul(e4m3_mlx_value(uint8_t(g)), inv);
      EXPECT_GT(differ, 0u);
    }
  }
}

// The order of the roundings is what the tests above pin down: the data has elements where the
// other orders give other bits, so a kernel that multiplied differently would fail them.
TEST(RefMlxNvfp4, OtherOperationOrdersGiveOtherBits) {
  Nvfp4Data d = nvfp4_data();
  size_t mlx_differs = 0, ollama_differs = 0;
  for (size_t grp = 0; grp < d.scales.size(); ++grp) {
    const float s = e4m3_mlx_value(d.scales[grp]);
    for (int j = 0; j < 16; ++j) {
      uint8_t byte = d.packed[grp * 8 + j / 2];
      const float f = e2m1_value(j % 2 ? byte >> 4 : byte & 15);
      for (float gs : {1000.0f, 3.3e-3f}) {  // the MLX test's global scales
        const float g = gs / 2688.0f;
        if (bits_of(mul(f, mul(s, g))) != bits_of(mul(mul(f, s), g))) ++mlx_differs;
      }
      for (float gs : {1.0f / 3.0f, 7.25e-4f})  // the Ollama test's
        if (bits_of(mul(mul(f, s), gs)) != bits_of(mul(f, mul(s, gs)))) ++ollama_differs;
    }
  }
  EXPECT_GT(mlx_differs, 0u);
  EXPECT_GT(ollama_differs, 0u);
}

}  // namespace
