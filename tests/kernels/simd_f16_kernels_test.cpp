// The SIMD128 f16 kernels (FormatEntry::simd128_f16) give exactly f32_to_fp16 of the reference's
// f32 values, decoded through ws::Dequantizer with f16 output, for every scale pattern their fast
// paths branch on: every fp16 pattern of every fp16 scale field, every byte of E8M0 and E4M3
// scales, every bf16/f16 pattern of MLX's scales and biases and the f32 values around their
// limits, every F16/BF16 pattern. The fast paths are for scales whose values round to normal
// f16 numbers or subnormals without leaving their exact grid, and not past 65536; the sweeps
// cross every one of those borders (subnormal scales, the largest exponents, inf, NaN), and the
// random payloads give the roundings their ties. Values compare as bits, NaNs too for the
// element-wise formats; NaNs made by arithmetic as "NaN with the same sign" (any sign for formats
// that add two products that can both be NaN, as in simd_differential_test.cpp).
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fp_convert.h"
#include "kernel_api.h"
#include "kernel_test_util.h"
#include "weightstream/dequant.h"

namespace {

using kernel_test::Rng;
using ws::DType;
using ws::QuantFormat;

// The formats that have an f16 kernel: the list is the contract (a format dropped from it would
// silently fall back to rounding an f32 tile, slower but correct).
TEST(SimdF16Kernels, TheFormatsWithAnF16Kernel) {
  std::string have;
  for (uint32_t i = 0; i < ws::kQuantFormatCount; ++i) {
    const ws::kernels::FormatEntry& e = ws::kernels::format_entry(static_cast<QuantFormat>(i));
    if (e.simd128_f16) have += std::string(have.empty() ? "" : " ") + e.info.name;
  }
  EXPECT_EQ(have, "F32 F16 BF16 Q4_0 Q4_1 Q8_0 Q4_K Q5_K Q6_K IQ4_NL IQ4_XS MXFP4 NVFP4 MlxAffine MlxMxfp4 MlxNvfp4 Fp8Block CtPacked GptqPacked Bnb4 BnbInt8");
}

// Formats whose values add two products (NaN + NaN: the sign is the compiler's choice).
bool nan_sign_free(QuantFormat f) { return f == QuantFormat::Q4_1 || f == QuantFormat::MlxAffine; }

// Expected halves: the reference kernel's f32 values, rounded by f32_to_fp16.
std::vector<uint16_t> reference_halves(const ws::DequantSpec& spec, const std::vector<uint8_t>& data) {
  if (spec.format == QuantFormat::F16) {
    // F16 asked as f16 is the stored halves (dequant.h): signalling NaNs included.
    std::vector<uint16_t> h(data.size() / 2);
    if (!h.empty()) memcpy(h.data(), data.data(), 2 * h.size());
    return h;
  }
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(spec.format);
  uint32_t block_elems = e.info.block_elems;
  if (spec.format == QuantFormat::MlxAffine) block_elems = spec.group;
  const size_t blocks = size_t(spec.elements / block_elems);
  std::vector<float> f(spec.elements);
  const ws::kernels::KernelContext ctx{&spec, 0};
  e.reference(data.data(), blocks, f.data(), ctx);
  std::vector<uint16_t> h(f.size());
  for (size_t i = 0; i < f.size(); ++i) h[i] = ws::kernels::f32_to_fp16(f[i]);
  return h;
}

// The f16 kernel's halves, through the Dequantizer in random pieces (the kernel is what decodes
// every whole-block run; a carried block goes through it too).
std::vector<uint16_t> simd_halves(ws::DequantSpec spec, const std::vector<uint8_t>& data, uint64_t seed) {
  spec.impl = ws::KernelImpl::Simd128;
  spec.out = ws::OutType::F16;
  spec.validate = false;
  kernel_test::Pieces pieces;
  pieces.kind = kernel_test::Pieces::Random;
  pieces.max_size = 4096;
  pieces.seed = seed;
  const std::vector<uint8_t> bytes = kernel_test::decode_in_pieces(spec, data.data(), data.size(), pieces);
  std::vector<uint16_t> h(bytes.size() / 2);
  if (!h.empty()) memcpy(h.data(), bytes.data(), bytes.size());
  return h;
}

// NaN handling of the comparison: exact bits (element-wise formats: the NaN is the input's,
// moved by bit operations), NaN with the same sign (arithmetic NaNs), or any NaN.
enum class Nan { Exact, SameSign, AnySign };

Nan nan_rule(QuantFormat f) {
  if (f == QuantFormat::F32 || f == QuantFormat::F16 || f == QuantFormat::BF16) return Nan::Exact;
  return nan_sign_free(f) ? Nan::AnySign : Nan::SameSign;
}

::testing::AssertionResult same_halves(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want, Nan nan,
                                       size_t values_per_block) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, want " << want.size();
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint16_t a = got[i], b = want[i];
    const bool an = (a & 0x7FFF) > 0x7C00, bn = (b & 0x7FFF) > 0x7C00;
    if (a == b || (nan != Nan::Exact && an && bn && (nan == Nan::AnySign || (a >> 15) == (b >> 15)))) continue;
    if (++bad <= 5) {
      char line[96];
      snprintf(line, sizeof line, "\n  [%zu] (block %zu) got 0x%04x, want 0x%04x", i, i / values_per_block, a, b);
      first += line;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " values differ" << first;
}

// Random blocks of a self-contained format, with `set_scales(block, index)` writing the swept
// scale fields of each block.
template <class SetScales>
void sweep_blocks(QuantFormat f, size_t n_blocks, uint64_t seed, SetScales set_scales) {
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(f);
  ASSERT_NE(e.simd128_f16, nullptr) << e.info.name;
  std::vector<uint8_t> data(n_blocks * e.info.block_bytes);
  Rng rng(seed);
  rng.fill(data.data(), data.size());
  for (size_t b = 0; b < n_blocks; ++b) set_scales(data.data() + b * e.info.block_bytes, b);
  ws::DequantSpec spec;
  spec.format = f;
  spec.elements = uint64_t(n_blocks) * e.info.block_elems;
  EXPECT_TRUE(same_halves(simd_halves(spec, data, seed), reference_halves(spec, data), nan_rule(f), e.info.block_elems))
      << e.info.name;
}

void put16(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

// Every fp16 pattern in the field at `off` (block b gets pattern b), and with `other` >= 0 a
// second fp16 field at that offset swept by an odd multiple of b (a permutation), so every
// pattern meets many others.
void sweep_f16_fields(QuantFormat f, size_t off, int other, uint64_t seed) {
  sweep_blocks(f, 65536, seed, [&](uint8_t* blk, size_t b) {
    put16(blk + off, uint32_t(b));
    if (other >= 0) put16(blk + other, uint32_t(b * 40503u));
  });
}

TEST(SimdF16Kernels, Q4_0EveryScale) { sweep_f16_fields(QuantFormat::Q4_0, 0, -1, 1); }
TEST(SimdF16Kernels, Q8_0EveryScale) { sweep_f16_fields(QuantFormat::Q8_0, 0, -1, 2); }
TEST(SimdF16Kernels, IQ4_NLEveryScale) { sweep_f16_fields(QuantFormat::IQ4_NL, 0, -1, 3); }
TEST(SimdF16Kernels, Q4_1EveryScaleAndMin) {
  sweep_f16_fields(QuantFormat::Q4_1, 0, 2, 4);
  sweep_f16_fields(QuantFormat::Q4_1, 2, 0, 5);
}
TEST(SimdF16Kernels, Q4_KEveryScaleAndMin) {
  sweep_f16_fields(QuantFormat::Q4_K, 0, 2, 6);
  sweep_f16_fields(QuantFormat::Q4_K, 2, 0, 7);
}
TEST(SimdF16Kernels, Q5_KEveryScaleAndMin) {
  sweep_f16_fields(QuantFormat::Q5_K, 0, 2, 8);
  sweep_f16_fields(QuantFormat::Q5_K, 2, 0, 9);
}
TEST(SimdF16Kernels, Q6_KEveryScale) { sweep_f16_fields(QuantFormat::Q6_K, 208, -1, 10); }
TEST(SimdF16Kernels, IQ4_XSEveryScale) { sweep_f16_fields(QuantFormat::IQ4_XS, 0, -1, 11); }

// Scales a typical checkpoint has (fp16 2^-10 .. 2^-4, either sign): the common case, in many
// blocks, where the fast paths must hold bit for bit on every rounding the payload gives.
void typical_f16_scales(QuantFormat f, std::initializer_list<size_t> offs, uint64_t seed) {
  Rng scales(seed * 77);
  sweep_blocks(f, 20000, seed, [&](uint8_t* blk, size_t) {
    for (size_t off : offs) {
      const uint64_t x = scales.next();
      put16(blk + off, uint32_t(((x & 1) << 15) | ((5 + (x >> 1) % 7) << 10) | ((x >> 8) & 0x3FF)));
    }
  });
}

TEST(SimdF16Kernels, TypicalScales) {
  typical_f16_scales(QuantFormat::Q4_0, {0}, 20);
  typical_f16_scales(QuantFormat::Q4_1, {0, 2}, 21);
  typical_f16_scales(QuantFormat::Q8_0, {0}, 22);
  typical_f16_scales(QuantFormat::IQ4_NL, {0}, 23);
  typical_f16_scales(QuantFormat::Q4_K, {0, 2}, 24);
  typical_f16_scales(QuantFormat::Q5_K, {0, 2}, 25);
  typical_f16_scales(QuantFormat::Q6_K, {208}, 26);
  typical_f16_scales(QuantFormat::IQ4_XS, {0}, 27);
}

TEST(SimdF16Kernels, MXFP4EveryScale) {
  sweep_blocks(QuantFormat::MXFP4, 256 * 16, 30, [](uint8_t* blk, size_t b) { blk[0] = uint8_t(b); });
}

TEST(SimdF16Kernels, NVFP4EveryScale) {
  // Each of the four sub-block scales takes every byte, beside varied others (zeros included).
  sweep_blocks(QuantFormat::NVFP4, 256 * 16, 31, [](uint8_t* blk, size_t b) {
    blk[0] = uint8_t(b);
    blk[1] = uint8_t(b * 7 + 3);
    blk[2] = uint8_t(b * 13 + 5);
    blk[3] = uint8_t(b / 16 * 37);
  });
}

// Companion formats: data and scales (and biases) given, one scale per group.
void check_companion(const ws::DequantSpec& spec_in, const std::vector<uint8_t>& data, uint64_t seed, const char* what) {
  ws::DequantSpec spec = spec_in;
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(spec.format);
  ASSERT_NE(e.simd128_f16, nullptr);
  EXPECT_TRUE(same_halves(simd_halves(spec, data, seed), reference_halves(spec, data), nan_rule(spec.format),
                          spec.format == QuantFormat::MlxAffine ? spec.group : e.info.block_elems))
      << what;
}

TEST(SimdF16Kernels, MlxMxfp4EveryScale) {
  const size_t groups = 256 * 8;
  std::vector<uint8_t> data(groups * 16), scales(groups);
  Rng(40).fill(data.data(), data.size());
  for (size_t g = 0; g < groups; ++g) scales[g] = uint8_t(g * 5);  // 5 is odd: every byte, in runs
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxMxfp4;
  spec.elements = groups * 32;
  spec.scales = scales.data();
  check_companion(spec, data, 40, "mxfp4");
}

TEST(SimdF16Kernels, MlxNvfp4EveryScaleAndGlobalScales) {
  const size_t groups = 256 * 8 + 3;  // groups in fours, and a remainder
  std::vector<uint8_t> data(groups * 8), scales(groups);
  Rng(41).fill(data.data(), data.size());
  for (size_t g = 0; g < groups; ++g) scales[g] = uint8_t(g * 5);
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxNvfp4;
  spec.elements = groups * 16;
  spec.scales = scales.data();
  check_companion(spec, data, 41, "nvfp4, no global scale");
  // Global scales: plain, tiny and huge ones (products leave the f16 range), negative, zero,
  // subnormal, inf and NaN, for MLX's, Ollama's and compressed-tensors' (dividing) conventions.
  const uint32_t globals[] = {0x3F800000u, 0x42280000u, 0x3A83126Fu, 0x45000000u, 0x4F000000u, 0x2F000000u,
                              0xC1200000u, 0x00000000u, 0x80000000u, 0x00000010u, 0x7F800000u, 0x7FC00000u};
  for (uint32_t gbits : globals)
    for (int rule : {0, 1, 2}) {  // MLX, Ollama, dividing
      spec.has_global_scale = true;
      spec.global_scale_is_ollama = rule == 1;
      spec.global_scale_divides = rule == 2;
      spec.global_scale = ws::kernels::bits_to_f32(gbits);
      char what[64];
      snprintf(what, sizeof what, "nvfp4, %s global 0x%08x", rule == 0 ? "MLX" : rule == 1 ? "Ollama" : "dividing", gbits);
      check_companion(spec, data, gbits + uint32_t(rule), what);
    }
}

// MLX affine 4 and 8 bits (the others decode through an f32 tile, covered by the differential
// test): per group size and scale dtype, (a) every bf16/f16 pattern as the scale, biases random,
// (b) every pattern as the bias, scales random; f32: values at the fast path's limits.
void affine_case(uint32_t bits, uint32_t group, DType dt, std::vector<uint8_t> scales, std::vector<uint8_t> biases,
                 uint64_t seed, const char* what) {
  const size_t sb = dt == DType::F32 ? 4 : 2;
  const size_t groups = scales.size() / sb;
  std::vector<uint8_t> data(groups * group * bits / 8);
  Rng(seed).fill(data.data(), data.size());
  ws::DequantSpec spec;
  spec.format = QuantFormat::MlxAffine;
  spec.bits = bits;
  spec.group = group;
  spec.scale_dtype = dt;
  spec.elements = groups * group;
  spec.scales = scales.data();
  spec.biases = biases.data();
  check_companion(spec, data, seed, what);
}

TEST(SimdF16Kernels, MlxAffineEveryScaleAndBias16) {
  for (uint32_t bits : {4u, 8u})
    for (uint32_t group : {32u, 64u, 128u})
      for (DType dt : {DType::BF16, DType::F16}) {
        std::vector<uint8_t> every(65536 * 2), random(65536 * 2);
        for (uint32_t i = 0; i < 65536; ++i) put16(&every[2 * i], i * 40503u);
        Rng(bits * 1000 + group).fill(random.data(), random.size());
        char what[64];
        snprintf(what, sizeof what, "%u bits, group %u, %s: every scale", bits, group, ws::dtype_name(dt));
        affine_case(bits, group, dt, every, random, bits + group, what);
        snprintf(what, sizeof what, "%u bits, group %u, %s: every bias", bits, group, ws::dtype_name(dt));
        affine_case(bits, group, dt, random, every, bits + group + 1, what);
      }
}

// The fast-path checks that read four blocks or groups at once (Q8_0 and IQ4_NL natively, MLX
// affine with f16 companions): every pattern shared by four consecutive blocks or groups, beside
// typical companions, so that each pattern meets the four-wide check itself and not only the
// one-by-one path a quad with an outside value takes.
TEST(SimdF16Kernels, EveryScaleInRunsOfFour) {
  for (QuantFormat f : {QuantFormat::Q8_0, QuantFormat::IQ4_NL})
    sweep_blocks(f, 4 * 65536, 30 + uint64_t(f), [&](uint8_t* blk, size_t b) { put16(blk, uint32_t(b / 4)); });
  const size_t groups = 4 * 65536;
  std::vector<uint8_t> every(groups * 2), typical(groups * 2);
  Rng rng(60);
  for (uint32_t i = 0; i < groups; ++i) {
    put16(&every[2 * i], i / 4);
    const uint64_t x = rng.next();  // fp16 2^-10 .. 2^-4, either sign
    put16(&typical[2 * i], uint32_t(((x & 1) << 15) | ((5 + (x >> 1) % 7) << 10) | ((x >> 8) & 0x3FF)));
  }
  for (uint32_t bits : {4u, 8u})
    for (uint32_t group : {32u, 64u}) {
      char what[80];
      snprintf(what, sizeof what, "%u bits, group %u, f16: every scale in runs of four", bits, group);
      affine_case(bits, group, DType::F16, every, typical, 70 + bits + group, what);
      snprintf(what, sizeof what, "%u bits, group %u, f16: every bias in runs of four", bits, group);
      affine_case(bits, group, DType::F16, typical, every, 71 + bits + group, what);
    }
}

TEST(SimdF16Kernels, MlxAffineF32Limits) {
  // Around the fast path's borders: 2^-14 (the grid), 128 and 2048 (8- and 4-bit scales), 32768
  // (biases), f32 subnormals, zeros, inf and NaN; with ordinary values between them.
  const uint32_t specials[] = {0x38800000u, 0x387FFFFFu, 0x38800001u, 0xB8800000u, 0x43000000u, 0x42FFFFFFu,
                               0x45000000u, 0x44FFFFFFu, 0x47000000u, 0x46FFFFFFu, 0xC6FFFFFFu, 0x00000001u,
                               0x807FFFFFu, 0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u,
                               0x3C23D70Au, 0xBD4CCCCDu, 0x3A000000u, 0x40490FDBu};
  const size_t n = sizeof specials / sizeof specials[0];
  std::vector<uint8_t> scales, biases;
  Rng rng(50);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      uint32_t s = specials[i], b = specials[j];
      // And a nearby random mantissa, to leave the exact powers of two.
      for (int k = 0; k < 2; ++k) {
        const uint32_t r = uint32_t(rng.next());
        const uint32_t s2 = k ? (s & 0xFF800000u) | (r & 0x7FFFFF) : s, b2 = k ? (b & 0xFF800000u) | ((r >> 8) & 0x7FFFFF) : b;
        for (int byte = 0; byte < 4; ++byte) {
          scales.push_back(uint8_t(s2 >> (8 * byte)));
          biases.push_back(uint8_t(b2 >> (8 * byte)));
        }
      }
    }
  for (uint32_t bits : {4u, 8u})
    for (uint32_t group : {32u, 64u, 128u}) {
      char what[64];
      snprintf(what, sizeof what, "%u bits, group %u, F32 limits", bits, group);
      affine_case(bits, group, DType::F32, scales, biases, bits * 7 + group, what);
    }
}

TEST(SimdF16Kernels, F16AndBf16EveryPattern) {
  for (QuantFormat f : {QuantFormat::F16, QuantFormat::BF16}) {
    sweep_blocks(f, 65536, 60, [](uint8_t* blk, size_t b) { put16(blk, uint32_t(b)); });
    sweep_blocks(f, 65536, 61, [](uint8_t* blk, size_t b) { put16(blk, uint32_t(b * 40503u)); });
  }
}

TEST(SimdF16Kernels, Bf16RunsWithOneValueOutsideTheFastPath) {
  // BF16 converts runs of 64 values by bit arithmetic and redoes a run holding a value it cannot
  // take (f16 subnormal, overflow, inf, NaN): one such value at every position of a run.
  // Each alone among values 2^-7 .. 2^13: outside (subnormal f16, overflow, inf, NaN) and just
  // inside the fast path (0x3880 is 2^-14, 0x477F 65280, 0x4780 65536 -> inf).
  const uint16_t odd[] = {0x0001, 0x3800, 0x387F, 0x3300, 0x8001, 0x3880, 0x477F, 0x4780,
                          0x4781, 0xC7FF, 0x7F7F, 0x7F80, 0xFFC1};
  std::vector<uint8_t> data;
  Rng rng(62);
  for (uint16_t o : odd)
    for (size_t pos = 0; pos < 64; ++pos)
      for (size_t i = 0; i < 64; ++i) {
        uint16_t v = uint16_t(0x3C00 + rng.next() % 0x0A00) | uint16_t(rng.next() & 0x8000);  // 2^-7 .. 2^13
        if (i == pos) v = o;
        data.push_back(uint8_t(v));
        data.push_back(uint8_t(v >> 8));
      }
  ws::DequantSpec spec;
  spec.format = QuantFormat::BF16;
  spec.elements = data.size() / 2;
  EXPECT_TRUE(same_halves(simd_halves(spec, data, 62), reference_halves(spec, data), Nan::Exact, 64));
}

TEST(SimdF16Kernels, F32Patterns) {
  // A strided sweep of all f32 patterns, unaligned (an F32 tensor's bytes need not be).
  std::vector<uint8_t> data(1 + 4 * 1000003);
  uint32_t u = 0;
  for (size_t i = 0; i < 1000003; ++i, u += 4294u) {
    for (int byte = 0; byte < 4; ++byte) data[1 + 4 * i + byte] = uint8_t(u >> (8 * byte));
  }
  std::vector<uint8_t> unaligned(data.begin() + 1, data.end());
  ws::DequantSpec spec;
  spec.format = QuantFormat::F32;
  spec.elements = 1000003;
  EXPECT_TRUE(same_halves(simd_halves(spec, unaligned, 63), reference_halves(spec, unaligned), Nan::Exact, 1));
  std::vector<uint16_t> h(1000003);
  const ws::kernels::KernelContext ctx{&spec, 0};
  ws::kernels::format_entry(QuantFormat::F32).simd128_f16(data.data() + 1, spec.elements, h.data(), ctx);
  EXPECT_TRUE(same_halves(h, reference_halves(spec, unaligned), Nan::Exact, 1)) << "odd source address";
}

}  // namespace
