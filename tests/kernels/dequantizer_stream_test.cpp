// The Dequantizer around the reference kernels (and the SIMD128 ones with f16 output): the output
// never depends on how the input is cut (whole, 1-byte pieces, random pieces) or on how small the
// output buffer is; f16 output is
// the round-to-nearest-even of the f32 output (ties, overflow, subnormals, NaN signs); BF16 ->
// F16; the validation policy for companion scales; init's checks of the spec.
#include <gtest/gtest.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include "weightstream/dequant.h"

namespace {

using ws::DType;
using ws::QuantFormat;
using ws::Status;

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

// --- an independent f32 -> f16 round-to-nearest-even, through doubles ---

// The half value nearest to |f| (ties to even) scaled by the unit of its last place, then
// re-encoded. Division by a power of two is exact in double and nearbyint rounds to even.
uint16_t half_rne(float f) {
  uint16_t sign = uint16_t((bits_of(f) >> 16) & 0x8000);
  if (isnan(f)) return uint16_t(sign | 0x7E00);
  double a = fabs(double(f));
  if (isinf(a)) return uint16_t(sign | 0x7C00);
  if (a == 0) return sign;
  int e;
  frexp(a, &e);  // a in [2^(e-1), 2^e)
  int exp = e - 1 < -14 ? -14 : e - 1;
  double ulp = ldexp(1.0, exp - 10);
  double v = nearbyint(a / ulp) * ulp;
  if (v >= 65536.0) return uint16_t(sign | 0x7C00);
  if (v < ldexp(1.0, -14)) return uint16_t(sign | uint16_t(v / ldexp(1.0, -24)));
  frexp(v, &e);
  int ex = e - 1;
  uint16_t mant = uint16_t(uint32_t(v / ldexp(1.0, ex - 10)) - 1024);
  return uint16_t(sign | ((ex + 15) << 10) | mant);
}

// Equal halves; NaNs by "is NaN", sign, and quiet bit (payloads are not specified).
::testing::AssertionResult same_half(uint16_t expected, uint16_t got) {
  auto is_nan = [](uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; };
  if (is_nan(expected) && is_nan(got) && (expected & 0x8000) == (got & 0x8000) && (got & 0x200))
    return ::testing::AssertionSuccess();
  if (expected == got) return ::testing::AssertionSuccess();
  char msg[64];
  snprintf(msg, sizeof msg, "expected 0x%04X, got 0x%04X", expected, got);
  return ::testing::AssertionFailure() << msg;
}

// --- decoding helpers ---

// One tensor: its spec and stored bytes (the companions live in the case, the spec points there).
struct Case {
  std::string name;
  ws::DequantSpec spec;
  std::vector<uint8_t> input, scales, biases;
};

// Decodes `in` fed in pieces whose sizes come from `next_piece`, into an output buffer of
// `out_cap` bytes; returns everything written, in order.
template <typename NextPiece>
std::vector<uint8_t> decode_pieces(const ws::DequantSpec& spec, const std::vector<uint8_t>& in, NextPiece next_piece,
                                   size_t out_cap, Status* status) {
  std::vector<uint8_t> all;
  ws::Dequantizer d;
  *status = d.init(spec);
  if (*status != Status::Ok) return all;
  std::vector<uint8_t> out(out_cap);
  size_t pos = 0;
  while (pos < in.size()) {
    size_t piece = next_piece();
    if (piece > in.size() - pos) piece = in.size() - pos;
    size_t used = 0;
    while (used < piece) {
      size_t in_used = 0, written = 0;
      *status = d.decode(in.data() + pos + used, piece - used, &in_used, out.data(), out.size(), &written);
      if (*status != Status::Ok) return all;
      all.insert(all.end(), out.begin(), out.begin() + written);
      if (in_used == 0 && written == 0) {
        ADD_FAILURE() << "decode made no progress";
        *status = Status::UsageError;
        return all;
      }
      used += in_used;
    }
    pos += piece;
  }
  if (!d.done()) {
    ADD_FAILURE() << "not done after the whole input: " << d.elements_done() << " of " << spec.elements;
    *status = Status::UsageError;
  }
  return all;
}

std::vector<uint8_t> decode_one_shot(const ws::DequantSpec& spec, const std::vector<uint8_t>& in, Status* status) {
  std::vector<uint8_t> out(spec.elements * (spec.out == ws::OutType::F16 ? 2 : 4));
  ws::Error err;
  *status = ws::dequantize(spec, in.data(), in.size(), out.data(), out.size(), &err);
  return out;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

std::vector<uint8_t> bf16_array(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<uint8_t> v;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = bits_of(dist(rng));
    v.push_back(uint8_t(u >> 16));
    v.push_back(uint8_t(u >> 24));
  }
  return v;
}

// The tensors every chunking test runs over: the element-wise and companion formats of the
// reference kernels, and GGML blocks when their kernels are linked (the largest blocks give the
// carried partial block the most to do).
std::vector<Case> cases() {
  std::vector<Case> cs;
  const std::string vec = std::string(WS_SHARED_DIR) + "/testdata/vectors/ggml/";
  auto add = [&](const char* name, QuantFormat f, std::vector<uint8_t> input, uint64_t elements) {
    Case c;
    c.name = name;
    c.spec.format = f;
    c.spec.impl = ws::KernelImpl::Reference;
    c.spec.elements = elements;
    c.input = std::move(input);
    cs.push_back(std::move(c));
    return &cs.back();
  };
  std::vector<uint8_t> f16 = read_file(vec + "F16.blocks.bin");
  add("F16", QuantFormat::F16, f16, f16.size() / 2);
  std::vector<uint8_t> bf16 = read_file(vec + "BF16_all.blocks.bin");
  add("BF16_all", QuantFormat::BF16, bf16, bf16.size() / 2);
  add("F32", QuantFormat::F32, random_bytes(4 * 999, 1), 999);
  add("F8_E4M3", QuantFormat::F8_E4M3, random_bytes(1000, 2), 1000);
  add("F8_E8M0", QuantFormat::F8_E8M0, random_bytes(1000, 3), 1000);
  add("F8Q8", QuantFormat::F8Q8, random_bytes(33 * 40, 4), 32 * 40);

  Case* c = add("MlxAffine 3-bit g64 F16", QuantFormat::MlxAffine, random_bytes(24 * 30, 5), 64 * 30);
  c->spec.bits = 3;
  c->spec.group = 64;
  c->spec.scale_dtype = DType::F16;
  for (int i = 0; i < 30; ++i) {
    c->scales.push_back(uint8_t(i * 7));
    c->scales.push_back(0x2C);  // 2^-4 .. : finite f16
    c->biases.push_back(uint8_t(i * 13));
    c->biases.push_back(uint8_t(0xB0 + i % 8));
  }
  c = add("MlxAffine 5-bit g32 BF16", QuantFormat::MlxAffine, random_bytes(20 * 50, 6), 32 * 50);
  c->spec.bits = 5;
  c->spec.group = 32;
  c->spec.scale_dtype = DType::BF16;
  c->scales = bf16_array(50, 7, 1e-3f, 1.0f);
  c->biases = bf16_array(50, 8, -1.0f, 1.0f);
  c = add("MlxAffine 8-bit g128 F32", QuantFormat::MlxAffine, random_bytes(128 * 9, 9), 128 * 9);
  c->spec.bits = 8;
  c->spec.group = 128;
  c->spec.scale_dtype = DType::F32;
  for (int i = 0; i < 9; ++i) {
    float s = 0.01f * float(i + 1), b = -0.5f + 0.1f * float(i);
    c->scales.insert(c->scales.end(), reinterpret_cast<uint8_t*>(&s), reinterpret_cast<uint8_t*>(&s) + 4);
    c->biases.insert(c->biases.end(), reinterpret_cast<uint8_t*>(&b), reinterpret_cast<uint8_t*>(&b) + 4);
  }
  c = add("MlxMxfp4", QuantFormat::MlxMxfp4, random_bytes(16 * 64, 10), 32 * 64);
  for (int i = 0; i < 64; ++i) c->scales.push_back(uint8_t(100 + i));
  c = add("MlxMxfp8", QuantFormat::MlxMxfp8, random_bytes(32 * 33, 11), 32 * 33);
  for (int i = 0; i < 33; ++i) c->scales.push_back(uint8_t(110 + i));
  c = add("MlxNvfp4 MLX global", QuantFormat::MlxNvfp4, random_bytes(8 * 100, 12), 16 * 100);
  for (int i = 0; i < 100; ++i) c->scales.push_back(uint8_t(i));
  c->spec.has_global_scale = true;
  c->spec.global_scale = 37.5f;

  c = add("MlxAffine 4-bit g32 BF16", QuantFormat::MlxAffine, random_bytes(16 * 40, 13), 32 * 40);
  c->spec.bits = 4;
  c->spec.group = 32;
  c->spec.scale_dtype = DType::BF16;
  c->scales = bf16_array(40, 14, 1e-3f, 1.0f);
  c->biases = bf16_array(40, 15, -1.0f, 1.0f);
  c = add("MlxNvfp4", QuantFormat::MlxNvfp4, random_bytes(8 * 41, 16), 16 * 41);
  for (int i = 0; i < 41; ++i) c->scales.push_back(uint8_t(0x20 + i));

  for (const char* g : {"Q8_K", "Q4_K", "Q8_0", "Q4_0", "Q4_1", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4", "NVFP4"}) {
    QuantFormat f;
    if (!ws::quant_format_from_name(g, &f)) continue;
    std::vector<uint8_t> blocks = read_file(vec + g + ".blocks.bin");
    ws::QuantFormatInfo info = ws::quant_format_info(f);
    add(g, f, blocks, blocks.size() / info.block_bytes * info.block_elems);
  }
  for (Case& k : cs) {
    k.spec.scales = k.scales.empty() ? nullptr : k.scales.data();
    k.spec.biases = k.biases.empty() ? nullptr : k.biases.data();
  }
  return cs;
}

// Every case, both output types: whole input, 1-byte pieces, random pieces, each with a roomy
// output buffer, one of exactly one block, and random sizes; all equal to the one-shot decode.
TEST(DequantizerStream, OutputDoesNotDependOnChunking) {
  size_t ran = 0;
  for (Case& c : cases()) {
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16}) {
      c.spec.out = out;
      ws::Dequantizer probe;
      Status st = probe.init(c.spec);
      if (st == Status::UnsupportedFormat) continue;  // a GGML kernel not written yet
      ASSERT_EQ(st, Status::Ok) << c.name;
      ASSERT_EQ(probe.input_bytes(), c.input.size()) << c.name;
      ++ran;
      std::string what = c.name + (out == ws::OutType::F16 ? " f16" : " f32");
      std::vector<uint8_t> expected = decode_one_shot(c.spec, c.input, &st);
      ASSERT_EQ(st, Status::Ok) << what;

      const size_t block_out = probe.block_output_bytes();
      std::mt19937 rng(42);
      const size_t block_bytes = c.input.size() / (c.spec.elements / (block_out / (out == ws::OutType::F16 ? 2 : 4)));
      struct Cut {
        const char* name;
        int kind;  // 0 whole, 1 one byte, 2 random
      } cuts[] = {{"whole", 0}, {"1-byte", 1}, {"random", 2}};
      for (const Cut& cut : cuts)
        for (int cap_kind = 0; cap_kind < 3; ++cap_kind) {
          size_t cap = cap_kind == 0 ? expected.size() + 64 : cap_kind == 1 ? block_out : block_out * (1 + rng() % 5) + rng() % block_out;
          auto next = [&]() -> size_t {
            if (cut.kind == 0) return c.input.size();
            if (cut.kind == 1) return 1;
            return 1 + rng() % (3 * block_bytes + 5);
          };
          std::vector<uint8_t> got = decode_pieces(c.spec, c.input, next, cap, &st);
          ASSERT_EQ(st, Status::Ok) << what << " " << cut.name << " cap " << cap;
          EXPECT_TRUE(got == expected) << what << " " << cut.name << " pieces, output buffer " << cap << " bytes";
        }
    }
  }
  EXPECT_GE(ran, 2u * 12);  // the 12 cases of the reference kernels in this change, both outputs
}

// The SIMD128 kernels with f16 output (FormatEntry::simd128_f16 where a format has one, the
// rounded f32 tile where not): any chunking and output room gives the reference's one-shot f16
// output.
TEST(DequantizerStream, Simd128F16OutputIsTheReferencesInAnyChunking) {
  size_t ran = 0;
  for (Case& c : cases()) {
    c.spec.out = ws::OutType::F16;
    c.spec.impl = ws::KernelImpl::Reference;
    Status st;
    const std::vector<uint8_t> expected = decode_one_shot(c.spec, c.input, &st);
    ASSERT_EQ(st, Status::Ok) << c.name;
    c.spec.impl = ws::KernelImpl::Simd128;
    ws::Dequantizer probe;
    ASSERT_EQ(probe.init(c.spec), Status::Ok) << c.name;
    ++ran;
    const size_t block_out = probe.block_output_bytes();
    const size_t block_bytes = c.input.size() / (c.spec.elements / (block_out / 2));
    std::mt19937 rng(7);
    for (int cut = 0; cut < 3; ++cut)
      for (int cap_kind = 0; cap_kind < 3; ++cap_kind) {
        const size_t cap = cap_kind == 0   ? expected.size() + 64
                           : cap_kind == 1 ? block_out
                                           : block_out * (1 + rng() % 5) + rng() % block_out;
        auto next = [&]() -> size_t { return cut == 0 ? c.input.size() : cut == 1 ? 1 : 1 + rng() % (3 * block_bytes + 5); };
        std::vector<uint8_t> got = decode_pieces(c.spec, c.input, next, cap, &st);
        ASSERT_EQ(st, Status::Ok) << c.name << " cut " << cut << " cap " << cap;
        EXPECT_TRUE(got == expected) << c.name << " cut " << cut << " (0 whole, 1 bytes, 2 random), output buffer " << cap;
      }
  }
  EXPECT_EQ(ran, 25u);  // every case: 14 element-wise and companion, 11 GGML vector files
}

// A buffer smaller than one block's output is refused, and says where.
TEST(DequantizerStream, OutputBufferSmallerThanABlock) {
  ws::DequantSpec spec;
  spec.format = QuantFormat::F8Q8;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = 64;
  spec.input_offset = 500;
  ws::Dequantizer d;
  ASSERT_EQ(d.init(spec), Status::Ok);
  EXPECT_EQ(d.block_output_bytes(), 128u);
  std::vector<uint8_t> in(66, 0), out(127);
  size_t used = 9, written = 9;
  EXPECT_EQ(d.decode(in.data(), in.size(), &used, out.data(), out.size(), &written), Status::OutputTooSmall);
  EXPECT_EQ(used, 0u);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(d.error().offset, 500u);
}

// --- f16 output ---

// Decodes f32 values through the Dequantizer with f16 output.
std::vector<uint16_t> to_f16(const std::vector<float>& values) {
  ws::DequantSpec spec;
  spec.format = QuantFormat::F32;
  spec.out = ws::OutType::F16;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = values.size();
  std::vector<uint16_t> out(values.size(), 0xDEAD);
  ws::Error err;
  EXPECT_EQ(ws::dequantize(spec, values.data(), values.size() * 4, out.data(), out.size() * 2, &err), Status::Ok);
  return out;
}

TEST(DequantizerF16Out, HandPickedRounding) {
  const struct {
    uint32_t f32;
    uint16_t f16;
    const char* why;
  } cases[] = {
      {0x3F800000u, 0x3C00, "1.0"},
      {0x3F801000u, 0x3C00, "1 + 2^-11: tie between 1 and 1 + 2^-10, to the even 1"},
      {0x3F803000u, 0x3C02, "1 + 3 * 2^-11: tie between 0x3C01 and 0x3C02, to the even 0x3C02"},
      {0x3F801001u, 0x3C01, "just above the tie rounds up"},
      {0x3F800FFFu, 0x3C00, "just below the tie rounds down"},
      {0xBF803000u, 0xBC02, "negative tie"},
      {0x477FE000u, 0x7BFF, "65504, the largest half"},
      {0x477FEFFFu, 0x7BFF, "just below 65520 stays finite"},
      {0x477FF000u, 0x7C00, "65520: ties to the even 65536, which is inf"},
      {0xC77FF000u, 0xFC00, "-65520 -> -inf"},
      {0x501502F9u, 0x7C00, "1e10 -> inf"},
      {0x7F800000u, 0x7C00, "inf"},
      {0xFF800000u, 0xFC00, "-inf"},
      {0x38800000u, 0x0400, "2^-14, the smallest normal half"},
      {0x387FC000u, 0x03FF, "2^-14 - 2^-24, the largest subnormal"},
      {0x387FE000u, 0x0400, "2^-14 - 2^-25: tie between 0x03FF and 0x0400, to the even 0x0400"},
      {0x33800000u, 0x0001, "2^-24, the smallest subnormal"},
      {0x33000000u, 0x0000, "2^-25: tie between 0 and 2^-24, to the even 0"},
      {0x33000001u, 0x0001, "just above 2^-25 rounds up"},
      {0x33C00000u, 0x0002, "3 * 2^-25: tie between 1 and 2 units, to the even 2"},
      {0x34200000u, 0x0002, "5 * 2^-25: tie between 2 and 3 units, to the even 2"},
      {0xB3800000u, 0x8001, "-2^-24"},
      {0x32800000u, 0x0000, "2^-26 -> +0"},
      {0xB2800000u, 0x8000, "-2^-26 -> -0"},
      {0x00000001u, 0x0000, "f32 subnormal -> +0"},
      {0x80000001u, 0x8000, "negative f32 subnormal -> -0"},
      {0x80000000u, 0x8000, "-0"},
  };
  std::vector<float> in;
  for (const auto& c : cases) in.push_back(float_of(c.f32));
  std::vector<uint16_t> got = to_f16(in);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(got[i], cases[i].f16) << cases[i].why;
    EXPECT_EQ(half_rne(in[i]), cases[i].f16) << "the test's own rounding: " << cases[i].why;
  }
}

TEST(DequantizerF16Out, NaNKeepsItsSignAndIsQuiet) {
  std::vector<float> in = {float_of(0x7FC00000u), float_of(0xFFC00000u), float_of(0x7F800001u),
                           float_of(0xFF800001u), float_of(0x7FFFFFFFu)};
  std::vector<uint16_t> got = to_f16(in);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(got[i] & 0x7C00, 0x7C00) << i;
    EXPECT_NE(got[i] & 0x03FF, 0) << i;
    EXPECT_NE(got[i] & 0x0200, 0) << "quiet " << i;
    EXPECT_EQ(got[i] >> 15, bits_of(in[i]) >> 31) << "sign " << i;
  }
}

TEST(DequantizerF16Out, SweepAgainstOwnRounding) {
  std::mt19937 rng(99);
  std::vector<float> in;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = rng();
    // Half the values with an exponent in the half's range (and just around it), where the
    // rounding has work to do; half anywhere.
    if (i & 1) u = (u & 0x807FFFFFu) | (uint32_t(100 + rng() % 45) << 23);
    in.push_back(float_of(u));
  }
  std::vector<uint16_t> got = to_f16(in);
  size_t bad = 0;
  for (size_t i = 0; i < in.size(); ++i)
    if (!same_half(half_rne(in[i]), got[i]) && ++bad <= 5)
      ADD_FAILURE() << "f32 0x" << std::hex << bits_of(in[i]) << ": " << same_half(half_rne(in[i]), got[i]).message();
  EXPECT_EQ(bad, 0u);
}

// f16 output of a quantized format is the rounding of its f32 output, value by value.
TEST(DequantizerF16Out, QuantizedOutputIsTheRoundedF32) {
  for (Case& c : cases()) {
    c.spec.out = ws::OutType::F32;
    Status st;
    std::vector<uint8_t> f32 = decode_one_shot(c.spec, c.input, &st);
    if (st == Status::UnsupportedFormat) continue;
    ASSERT_EQ(st, Status::Ok) << c.name;
    c.spec.out = ws::OutType::F16;
    std::vector<uint8_t> f16 = decode_one_shot(c.spec, c.input, &st);
    ASSERT_EQ(st, Status::Ok) << c.name;
    size_t bad = 0;
    for (size_t i = 0; i < c.spec.elements; ++i) {
      float v;
      memcpy(&v, &f32[i * 4], 4);
      uint16_t h = uint16_t(f16[2 * i] | (f16[2 * i + 1] << 8));
      if (!same_half(half_rne(v), h) && ++bad <= 3) ADD_FAILURE() << c.name << " [" << i << "]";
    }
    EXPECT_EQ(bad, 0u) << c.name;
  }
}

// --- BF16 -> F16 ---

TEST(Bf16ToF16, HandPicked) {
  const struct {
    uint16_t bf16, f16;
    const char* why;
  } cases[] = {
      {0x3F80, 0x3C00, "1.0"},
      {0xC040, 0xC200, "-3.0"},
      {0x477F, 0x7BF8, "65280, exact in f16"},
      {0x4780, 0x7C00, "65536 overflows to inf"},
      {0x387F, 0x03FC, "6.09e-05: becomes an f16 subnormal, exactly (0x3FC units of 2^-24)"},
      {0x3380, 0x0001, "2^-24"},
      {0x3300, 0x0000, "2^-25: tie to even 0"},
      {0x33C0, 0x0002, "1.5 * 2^-24: tie between 1 and 2 units, to 2"},
      {0x3340, 0x0001, "0.75 * 2^-24 rounds to 1 unit"},
      {0x3FC1, 0x3E08, "1.5078125: exact (bf16 has 8 bits, f16 11)"},
      {0x0001, 0x0000, "a bf16 subnormal underflows to +0"},
      {0x8001, 0x8000, "... or -0"},
      {0x7F80, 0x7C00, "inf"},
      {0xFF80, 0xFC00, "-inf"},
  };
  std::vector<uint16_t> in, out(sizeof cases / sizeof cases[0]);
  for (const auto& c : cases) in.push_back(c.bf16);
  ws::bf16_to_f16(in.data(), in.size(), out.data());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], cases[i].f16) << cases[i].why;
}

TEST(Bf16ToF16, AllPatterns) {
  std::vector<uint16_t> in(65536), out(65536);
  for (uint32_t i = 0; i < 65536; ++i) in[i] = uint16_t(i);
  ws::bf16_to_f16(in.data(), in.size(), out.data());
  size_t bad = 0, nans = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    float v = float_of(i << 16);
    if (isnan(v)) ++nans;
    if (!same_half(half_rne(v), out[i]) && ++bad <= 5)
      ADD_FAILURE() << "bf16 0x" << std::hex << i << ": " << same_half(half_rne(v), out[i]).message();
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(nans, 254u);
}

// --- validation of companion scales ---

struct ValidationCase {
  const char* name;
  QuantFormat format;
  DType dtype;
  uint32_t scale_size;
  uint32_t bad_index;
  std::vector<uint8_t> bad_value;  // the invalid scale, little-endian
  std::vector<uint8_t> ok_value;   // a valid extreme
};

ws::DequantSpec validation_spec(const ValidationCase& v, std::vector<uint8_t>& scales, std::vector<uint8_t>& biases,
                                uint64_t groups) {
  ws::DequantSpec spec;
  spec.format = v.format;
  spec.impl = ws::KernelImpl::Reference;
  spec.scale_dtype = v.dtype;
  if (v.format == QuantFormat::MlxAffine) {
    spec.bits = 4;
    spec.group = 32;
  }
  spec.elements = groups * (v.format == QuantFormat::MlxNvfp4 ? 16 : 32);
  scales.assign(groups * v.scale_size, 0);
  for (uint64_t g = 0; g < groups; ++g)  // every scale 1.0 in its encoding
    if (v.format == QuantFormat::MlxAffine) {
      if (v.dtype == DType::F32) scales[g * 4 + 3] = 0x3F, scales[g * 4 + 2] = 0x80;
      else if (v.dtype == DType::F16) scales[g * 2 + 1] = 0x3C;
      else scales[g * 2 + 1] = 0x3F, scales[g * 2] = 0x80;
    } else {
      scales[g] = v.format == QuantFormat::MlxNvfp4 ? 0x38 : 127;
    }
  biases.assign(groups * v.scale_size, 0);
  spec.scales = scales.data();
  spec.biases = biases.data();
  spec.input_offset = 4096;
  spec.scales_offset = 1000;
  return spec;
}

const std::vector<ValidationCase>& validation_cases() {
  static const std::vector<ValidationCase> v = {
      {"affine F16 inf", QuantFormat::MlxAffine, DType::F16, 2, 3, {0x00, 0x7C}, {0xFF, 0x7B}},
      {"affine F16 -NaN", QuantFormat::MlxAffine, DType::F16, 2, 5, {0x01, 0xFE}, {0xFF, 0xFB}},
      {"affine BF16 NaN", QuantFormat::MlxAffine, DType::BF16, 2, 2, {0xC1, 0xFF}, {0x7F, 0x7F}},
      {"affine BF16 -inf", QuantFormat::MlxAffine, DType::BF16, 2, 0, {0x80, 0xFF}, {0x7F, 0xFF}},
      {"affine F32 inf", QuantFormat::MlxAffine, DType::F32, 4, 4, {0, 0, 0x80, 0x7F}, {0xFF, 0xFF, 0x7F, 0x7F}},
      {"affine F32 NaN", QuantFormat::MlxAffine, DType::F32, 4, 1, {1, 0, 0xC0, 0xFF}, {0, 0, 0, 0}},
      {"mxfp4 E8M0 0xFF", QuantFormat::MlxMxfp4, DType::U8, 1, 5, {0xFF}, {0xFE}},
      {"mxfp8 E8M0 0xFF", QuantFormat::MlxMxfp8, DType::U8, 1, 7, {0xFF}, {0x00}},
      {"nvfp4 E4M3 0x7F", QuantFormat::MlxNvfp4, DType::U8, 1, 6, {0x7F}, {0x7E}},
      {"nvfp4 E4M3 0xFF", QuantFormat::MlxNvfp4, DType::U8, 1, 1, {0xFF}, {0xFE}},
  };
  return v;
}

TEST(DequantizerValidation, BadCompanionScaleIsInvalidBlockDataAtItsOffset) {
  for (const ValidationCase& v : validation_cases()) {
    std::vector<uint8_t> scales, biases;
    ws::DequantSpec spec = validation_spec(v, scales, biases, 8);
    ws::Dequantizer d;
    ASSERT_EQ(d.init(spec), Status::Ok) << v.name << ": all scales 1";
    memcpy(&scales[v.bad_index * v.scale_size], v.ok_value.data(), v.scale_size);
    EXPECT_EQ(d.init(spec), Status::Ok) << v.name << ": a finite extreme is valid";
    memcpy(&scales[v.bad_index * v.scale_size], v.bad_value.data(), v.scale_size);
    EXPECT_EQ(d.init(spec), Status::InvalidBlockData) << v.name;
    EXPECT_EQ(d.error().code, Status::InvalidBlockData) << v.name;
    EXPECT_EQ(d.error().offset, 1000u + v.bad_index * v.scale_size) << v.name;
    // A decoder whose init failed decodes nothing.
    uint8_t in[64] = {0};
    float out[64];
    size_t used = 1, written = 1;
    EXPECT_NE(d.decode(in, sizeof in, &used, out, sizeof out, &written), Status::Ok) << v.name;
    EXPECT_EQ(written, 0u) << v.name;
  }
}

// validate = false: the same data decodes, with the values the kernels give invalid scales.
TEST(DequantizerValidation, ValidateFalseDecodes) {
  for (const ValidationCase& v : validation_cases()) {
    std::vector<uint8_t> scales, biases;
    ws::DequantSpec spec = validation_spec(v, scales, biases, 8);
    memcpy(&scales[v.bad_index * v.scale_size], v.bad_value.data(), v.scale_size);
    spec.validate = false;
    ws::Dequantizer d;
    ASSERT_EQ(d.init(spec), Status::Ok) << v.name;
    std::vector<uint8_t> in(d.input_bytes(), 0x11);  // code 1 in every element
    std::vector<float> out(spec.elements);
    size_t used = 0, written = 0;
    ASSERT_EQ(d.decode(in.data(), in.size(), &used, out.data(), out.size() * 4, &written), Status::Ok) << v.name;
    EXPECT_EQ(written, out.size() * 4) << v.name;
    EXPECT_TRUE(d.done()) << v.name;
    const uint32_t per = uint32_t(spec.elements / 8);
    const float bad = out[v.bad_index * per];
    const float good = out[((v.bad_index + 1) % 8) * per];
    EXPECT_TRUE(isfinite(good)) << v.name;
    if (v.format == QuantFormat::MlxNvfp4) EXPECT_EQ(fabsf(bad), 0.5f * 480.0f) << v.name << ": MLX's E4M3 reads it as ±480";
    else if (v.format == QuantFormat::MlxMxfp4) EXPECT_EQ(bad, INFINITY) << v.name << ": 0.5 x +inf";
    else EXPECT_FALSE(isfinite(bad)) << v.name;
  }
}

// Biases are not scales: ggml-style validation covers the scales only, and a NaN bias decodes.
TEST(DequantizerValidation, BiasesAreNotChecked) {
  ValidationCase v = validation_cases()[0];
  std::vector<uint8_t> scales, biases;
  ws::DequantSpec spec = validation_spec(v, scales, biases, 4);
  biases[2] = 0x00;
  biases[3] = 0x7E;  // bias of group 1: f16 NaN
  ws::Dequantizer d;
  EXPECT_EQ(d.init(spec), Status::Ok);
}

// --- init's checks of the spec ---

ws::DequantSpec affine_spec(const uint8_t* scales, const uint8_t* biases) {
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxAffine;
  spec.impl = ws::KernelImpl::Reference;
  spec.bits = 4;
  spec.group = 64;
  spec.elements = 256;
  spec.scales = scales;
  spec.biases = biases;
  spec.input_offset = 77;
  return spec;
}

TEST(DequantizerInit, AffineParameters) {
  const uint8_t comp[16] = {0};
  ws::Dequantizer d;
  ws::DequantSpec spec = affine_spec(comp, comp);
  ASSERT_EQ(d.init(spec), Status::Ok);
  EXPECT_EQ(d.input_bytes(), 128u);
  EXPECT_EQ(d.block_output_bytes(), 256u);
  for (uint32_t bits : {0u, 1u, 7u, 9u, 16u, 32u}) {
    spec = affine_spec(comp, comp);
    spec.bits = bits;
    EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << "bits " << bits;
    EXPECT_EQ(d.error().offset, 77u);
  }
  for (uint32_t group : {0u, 16u, 48u, 96u, 256u}) {
    spec = affine_spec(comp, comp);
    spec.group = group;
    spec.elements = 768;
    EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << "group " << group;
  }
  for (DType dt : {DType::U8, DType::F64, DType::F8_E4M3}) {
    spec = affine_spec(comp, comp);
    spec.scale_dtype = dt;
    EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << ws::dtype_name(dt);
  }
  spec = affine_spec(nullptr, comp);
  EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << "no scales";
  spec = affine_spec(comp, nullptr);
  EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << "no biases";
  spec = affine_spec(comp, comp);
  spec.elements = 256 + 32;  // half a group more
  EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << "elements not a multiple of the group";
  spec.elements = 0;
  EXPECT_EQ(d.init(spec), Status::Ok) << "an empty tensor";
  EXPECT_TRUE(d.done());
}

TEST(DequantizerInit, FloatingPointModes) {
  // Scale 1.0 in both encodings (127 would be a NaN E4M3 for nvfp4).
  const uint8_t e8m0_one[8] = {127, 127, 127, 127, 127, 127, 127, 127};
  const uint8_t e4m3_one[8] = {0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38};
  const struct {
    QuantFormat f;
    uint32_t group;
  } modes[] = {{QuantFormat::MlxMxfp4, 32}, {QuantFormat::MlxMxfp8, 32}, {QuantFormat::MlxNvfp4, 16}};
  for (const auto& m : modes) {
    const char* name = ws::quant_format_name(m.f);
    ws::DequantSpec spec;
    spec.format = m.f;
    spec.impl = ws::KernelImpl::Reference;
    spec.elements = 4 * m.group;
    const uint8_t* sc = m.f == QuantFormat::MlxNvfp4 ? e4m3_one : e8m0_one;
    spec.scales = sc;
    ws::Dequantizer d;
    EXPECT_EQ(d.init(spec), Status::Ok) << name << ": group 0 means the mode's own";
    spec.group = m.group;
    EXPECT_EQ(d.init(spec), Status::Ok) << name;
    spec.group = m.group * 2;
    EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << name << ": another group size";
    spec.group = 0;
    spec.scales = nullptr;
    EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << name << ": no scales";
    spec.scales = sc;
    spec.elements = 4 * m.group + 8;
    EXPECT_EQ(d.init(spec), Status::InvalidQuantParams) << name << ": not whole groups";
  }
}

TEST(DequantizerInit, OneShotChecksSizes) {
  const uint8_t in[66] = {0};
  float out[64];
  ws::DequantSpec spec;
  spec.format = QuantFormat::F8Q8;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = 64;
  ws::Error err;
  EXPECT_EQ(ws::dequantize(spec, in, 65, out, sizeof out, &err), Status::InvalidQuantParams) << "input short";
  EXPECT_EQ(ws::dequantize(spec, in, 66, out, sizeof out - 4, &err), Status::InvalidQuantParams) << "output short";
  EXPECT_EQ(ws::dequantize(spec, in, 66, out, sizeof out, &err), Status::Ok);
}

}  // namespace
