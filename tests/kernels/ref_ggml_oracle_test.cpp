// The reference kernels against ggml itself, on inputs the shared vectors do not cover: blocks of
// uniformly random bytes (every fp16/f32 scale pattern: subnormals, inf, NaN of either sign) and
// blocks that address every index of every IQ grid. ggml is the compiled libggml-base of the
// node-llama-cpp package the benchmark installs (`npm ci --prefix bench`), loaded with dlopen; set
// WS_GGML_BASE to use another build. Without it these tests skip: the shared vectors
// (ref_ggml_vectors_test) remain the always-on check.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "kernel_api.h"
#include "kernel_test_util.h"
#include "weightstream/dequant.h"

namespace {

using RowFn = void (*)(const void* blocks, float* y, int64_t k);

// ggml.h's struct ggml_type_traits, the fields this test reads (their order is ggml's ABI).
struct GgmlTypeTraits {
  const char* type_name;
  int64_t blck_size;
  int64_t blck_size_interleave;
  size_t type_size;
  bool is_quantized;
};
using TraitsFn = const GgmlTypeTraits* (*)(int type);

void* ggml_library() {
  static void* lib = [] {
    const char* env = getenv("WS_GGML_BASE");
    std::string path = env && *env ? env
                                   : std::string(WS_SOURCE_DIR) +
                                         "/bench/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";
    return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }();
  return lib;
}

struct OracleCase {
  ws::QuantFormat format;
  uint32_t ggml_type;
  const char* row_fn;  // ggml's dequantize_row_<type>
};

void PrintTo(const OracleCase& c, std::ostream* os) { *os << ws::quant_format_name(c.format); }

const OracleCase kCases[] = {
    {ws::QuantFormat::Q4_0, 2, "dequantize_row_q4_0"},        {ws::QuantFormat::Q4_1, 3, "dequantize_row_q4_1"},
    {ws::QuantFormat::Q5_0, 6, "dequantize_row_q5_0"},        {ws::QuantFormat::Q5_1, 7, "dequantize_row_q5_1"},
    {ws::QuantFormat::Q8_0, 8, "dequantize_row_q8_0"},        {ws::QuantFormat::Q2_K, 10, "dequantize_row_q2_K"},
    {ws::QuantFormat::Q3_K, 11, "dequantize_row_q3_K"},       {ws::QuantFormat::Q4_K, 12, "dequantize_row_q4_K"},
    {ws::QuantFormat::Q5_K, 13, "dequantize_row_q5_K"},       {ws::QuantFormat::Q6_K, 14, "dequantize_row_q6_K"},
    {ws::QuantFormat::Q8_K, 15, "dequantize_row_q8_K"},       {ws::QuantFormat::IQ2_XXS, 16, "dequantize_row_iq2_xxs"},
    {ws::QuantFormat::IQ2_XS, 17, "dequantize_row_iq2_xs"},   {ws::QuantFormat::IQ3_XXS, 18, "dequantize_row_iq3_xxs"},
    {ws::QuantFormat::IQ1_S, 19, "dequantize_row_iq1_s"},     {ws::QuantFormat::IQ4_NL, 20, "dequantize_row_iq4_nl"},
    {ws::QuantFormat::IQ3_S, 21, "dequantize_row_iq3_s"},     {ws::QuantFormat::IQ2_S, 22, "dequantize_row_iq2_s"},
    {ws::QuantFormat::IQ4_XS, 23, "dequantize_row_iq4_xs"},   {ws::QuantFormat::IQ1_M, 29, "dequantize_row_iq1_m"},
    {ws::QuantFormat::TQ1_0, 34, "dequantize_row_tq1_0"},     {ws::QuantFormat::TQ2_0, 35, "dequantize_row_tq2_0"},
    {ws::QuantFormat::MXFP4, 39, "dequantize_row_mxfp4"},     {ws::QuantFormat::NVFP4, 40, "dequantize_row_nvfp4"},
    {ws::QuantFormat::Q1_0, 41, "dequantize_row_q1_0"},       {ws::QuantFormat::Q2_0, 42, "dequantize_row_q2_0"},
};

class RefGgmlOracle : public ::testing::TestWithParam<OracleCase> {
 protected:
  void SetUp() override {
    void* lib = ggml_library();
    if (!lib) GTEST_SKIP() << "ggml not found (npm ci --prefix bench, or WS_GGML_BASE=path/to/libggml-base.so)";
    row_ = reinterpret_cast<RowFn>(dlsym(lib, GetParam().row_fn));
    ASSERT_NE(row_, nullptr) << GetParam().row_fn;
    info_ = ws::quant_format_info(GetParam().format);
  }

  // Both implementations on the same blocks; bit-exact, NaN by sign.
  void compare(const std::vector<uint8_t>& blocks) {
    const size_t n_blocks = blocks.size() / info_.block_bytes;
    const size_t n = n_blocks * info_.block_elems;
    std::vector<float> want(n), got(n);
    row_(blocks.data(), want.data(), int64_t(n));
    ws::DequantSpec spec;
    spec.format = GetParam().format;
    ws::kernels::KernelContext ctx{&spec, 0};
    ws::kernels::BlockKernel k = ws::kernels::format_entry(GetParam().format).reference;
    ASSERT_NE(k, nullptr);
    k(blocks.data(), n_blocks, got.data(), ctx);
    EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), n));
  }

  RowFn row_ = nullptr;
  ws::QuantFormatInfo info_;
};

TEST_P(RefGgmlOracle, GeometryMatchesGgmlsTypeTraits) {
  auto traits_fn = reinterpret_cast<TraitsFn>(dlsym(ggml_library(), "ggml_get_type_traits"));
  ASSERT_NE(traits_fn, nullptr);
  const GgmlTypeTraits* t = traits_fn(int(GetParam().ggml_type));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(uint64_t(t->blck_size), info_.block_elems);
  EXPECT_EQ(uint64_t(t->type_size), info_.block_bytes);
  EXPECT_TRUE(strcasecmp(t->type_name, ws::quant_format_name(GetParam().format)) == 0) << t->type_name;
  ws::QuantFormat f;
  ASSERT_TRUE(ws::quant_format_from_ggml(GetParam().ggml_type, ws::GgmlDialect::Upstream, &f));
  EXPECT_EQ(f, GetParam().format);
}

TEST_P(RefGgmlOracle, RandomBytes) {
  // Every byte random, scales included: about 3% of fp16 scales are inf/NaN, 3% subnormal.
  kernel_test::Rng rng(0x5EED0000u + GetParam().ggml_type);
  std::vector<uint8_t> blocks(size_t(info_.block_bytes) * 512);
  rng.fill(blocks.data(), blocks.size());
  compare(blocks);
}

TEST_P(RefGgmlOracle, SpecialScales) {
  // Every block's first two bytes (d, or MXFP4's E8M0 and a quant byte, or NVFP4's first two
  // sub-scales) run through patterns that stress rounding and special values.
  const uint16_t patterns[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF,
                               0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x3555, 0x00FF, 0xFF00, 0x7F7F, 0x0101};
  kernel_test::Rng rng(0xABCD0000u + GetParam().ggml_type);
  const size_t n = sizeof patterns / sizeof patterns[0];
  std::vector<uint8_t> blocks(size_t(info_.block_bytes) * n);
  rng.fill(blocks.data(), blocks.size());
  for (size_t i = 0; i < n; ++i) {
    blocks[i * info_.block_bytes] = uint8_t(patterns[i]);
    blocks[i * info_.block_bytes + 1] = uint8_t(patterns[i] >> 8);
  }
  compare(blocks);
}

INSTANTIATE_TEST_SUITE_P(Ggml, RefGgmlOracle, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<OracleCase>& i) {
                           return std::string(ws::quant_format_name(i.param.format));
                         });

// ---------------------------------------------------------------------------------------------
// Grid sweeps: blocks whose codes run through every grid index once, everything else random
// (scales, signs, deltas), so each entry of iq_grids.cpp is compared with ggml's table.

void put16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

struct Sweep {
  ws::QuantFormat format;
  const char* row_fn;
  uint32_t grid_size;
  uint32_t codes_per_block;
  // Writes code c into slot s (0..codes_per_block-1) of block b.
  void (*set)(uint8_t* b, uint32_t s, uint32_t c);
};

void PrintTo(const Sweep& c, std::ostream* os) { *os << ws::quant_format_name(c.format); }

const Sweep kSweeps[] = {
    {ws::QuantFormat::IQ2_XXS, "dequantize_row_iq2_xxs", 256, 32,
     [](uint8_t* b, uint32_t s, uint32_t c) { b[2 + 8 * (s / 4) + s % 4] = uint8_t(c); }},
    {ws::QuantFormat::IQ2_XS, "dequantize_row_iq2_xs", 512, 32,
     [](uint8_t* b, uint32_t s, uint32_t c) {
       uint8_t* q = b + 2 + 2 * s;
       put16(q, uint16_t((q[0] | (q[1] << 8)) & ~511) | uint16_t(c));
     }},
    {ws::QuantFormat::IQ2_S, "dequantize_row_iq2_s", 1024, 32,
     [](uint8_t* b, uint32_t s, uint32_t c) {
       b[2 + s] = uint8_t(c);
       uint8_t& qh = b[66 + s / 4];
       qh = uint8_t((qh & ~(3u << (2 * (s % 4)))) | ((c >> 8) << (2 * (s % 4))));
     }},
    {ws::QuantFormat::IQ3_XXS, "dequantize_row_iq3_xxs", 256, 64,
     [](uint8_t* b, uint32_t s, uint32_t c) { b[2 + s] = uint8_t(c); }},
    {ws::QuantFormat::IQ3_S, "dequantize_row_iq3_s", 512, 64,
     [](uint8_t* b, uint32_t s, uint32_t c) {
       b[2 + s] = uint8_t(c);
       uint8_t& qh = b[66 + s / 8];
       qh = uint8_t((qh & ~(1u << (s % 8))) | ((c >> 8) << (s % 8)));
     }},
    {ws::QuantFormat::IQ1_S, "dequantize_row_iq1_s", 2048, 32,
     [](uint8_t* b, uint32_t s, uint32_t c) {
       b[2 + s] = uint8_t(c);
       uint8_t* q = b + 34 + 2 * (s / 4);
       uint16_t h = uint16_t(q[0] | (q[1] << 8));
       h = uint16_t((h & ~(7u << (3 * (s % 4)))) | ((c >> 8) << (3 * (s % 4))));
       put16(q, h);
     }},
    {ws::QuantFormat::IQ1_M, "dequantize_row_iq1_m", 2048, 32,
     [](uint8_t* b, uint32_t s, uint32_t c) {
       b[s] = uint8_t(c);
       uint8_t& qh = b[32 + s / 2];
       const uint32_t shift = 4 * (s % 2);
       qh = uint8_t((qh & ~(7u << shift)) | ((c >> 8) << shift));
     }},
};

class RefGgmlGridSweep : public ::testing::TestWithParam<Sweep> {};

TEST_P(RefGgmlGridSweep, EveryGridIndex) {
  void* lib = ggml_library();
  if (!lib) GTEST_SKIP() << "ggml not found";
  const Sweep& sw = GetParam();
  auto row = reinterpret_cast<RowFn>(dlsym(lib, sw.row_fn));
  ASSERT_NE(row, nullptr);
  const ws::QuantFormatInfo info = ws::quant_format_info(sw.format);
  const uint32_t n_blocks = sw.grid_size / sw.codes_per_block;
  std::vector<uint8_t> blocks(size_t(n_blocks) * info.block_bytes);
  kernel_test::Rng rng(sw.grid_size);
  rng.fill(blocks.data(), blocks.size());
  for (uint32_t b = 0; b < n_blocks; ++b) {
    uint8_t* blk = &blocks[size_t(b) * info.block_bytes];
    if (sw.format == ws::QuantFormat::IQ1_M) {
      // Keep the super-scale finite: its exponent nibble bits live in word 3's top nibble.
      blk[55] = uint8_t((blk[55] & 0x0F) | 0x30);
    } else {
      put16(blk, uint16_t(0x3000 + (rng.next() & 0x0FFF)));  // d in [2^-3, 2^0), random sign below
      if (rng.next() & 1) blk[1] |= 0x80;
    }
    for (uint32_t s = 0; s < sw.codes_per_block; ++s) sw.set(blk, s, b * sw.codes_per_block + s);
  }
  const size_t n = size_t(n_blocks) * info.block_elems;
  std::vector<float> want(n), got(n);
  row(blocks.data(), want.data(), int64_t(n));
  ws::DequantSpec spec;
  spec.format = sw.format;
  ws::kernels::KernelContext ctx{&spec, 0};
  ws::kernels::format_entry(sw.format).reference(blocks.data(), n_blocks, got.data(), ctx);
  EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), n));
}

INSTANTIATE_TEST_SUITE_P(Grids, RefGgmlGridSweep, ::testing::ValuesIn(kSweeps),
                         [](const ::testing::TestParamInfo<Sweep>& i) {
                           return std::string(ws::quant_format_name(i.param.format));
                         });

}  // namespace
