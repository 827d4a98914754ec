// The SIMD128 kernels reproduce ggml's own dequantization of the shared test vectors
// (/work/shared/testdata/vectors/ggml, produced by ggml's C reference) bit for bit, decoded
// through the Dequantizer whole and in odd-sized pieces; with f16 output, ggml's values rounded
// by f32_to_fp16 (round to nearest even), the same way.
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "fp_convert.h"
#include "kernel_api.h"
#include "weightstream/dequant.h"

namespace {

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

struct VectorCase {
  const char* label;  // file stem in the vector directory
  const char* format; // QuantFormat name
};

// Every entry of vectors/ggml/index.json that names a format we decode.
const VectorCase kCases[] = {
    {"F16", "F16"},         {"BF16", "BF16"},         {"Q4_0", "Q4_0"},       {"Q4_1", "Q4_1"},
    {"Q5_0", "Q5_0"},       {"Q5_1", "Q5_1"},         {"Q8_0", "Q8_0"},       {"Q2_K", "Q2_K"},
    {"Q3_K", "Q3_K"},       {"Q4_K", "Q4_K"},         {"Q5_K", "Q5_K"},       {"Q6_K", "Q6_K"},
    {"Q8_K", "Q8_K"},       {"IQ2_XXS", "IQ2_XXS"},   {"IQ2_XS", "IQ2_XS"},   {"IQ3_XXS", "IQ3_XXS"},
    {"IQ1_S", "IQ1_S"},     {"IQ4_NL", "IQ4_NL"},     {"IQ3_S", "IQ3_S"},     {"IQ2_S", "IQ2_S"},
    {"IQ4_XS", "IQ4_XS"},   {"IQ1_M", "IQ1_M"},       {"TQ1_0", "TQ1_0"},     {"TQ2_0", "TQ2_0"},
    {"MXFP4", "MXFP4"},     {"NVFP4", "NVFP4"},       {"Q1_0", "Q1_0"},       {"Q2_0", "Q2_0"},
    {"F16_all", "F16"},     {"BF16_all", "BF16"},     {"MXFP4_edge", "MXFP4"}, {"NVFP4_edge", "NVFP4"},
};

void PrintTo(const VectorCase& c, std::ostream* os) { *os << c.label; }

class SimdVectors : public ::testing::TestWithParam<VectorCase> {};

// Decodes `blocks` with the SIMD128 kernel, feeding pieces of `piece` bytes (0: whole), into
// an output buffer of out_cap bytes per call. T: uint32_t for f32 output, uint16_t for f16.
template <class T>
std::vector<T> decode_simd(ws::QuantFormat f, const std::vector<uint8_t>& blocks, size_t piece, size_t out_cap,
                           std::string* err) {
  const ws::QuantFormatInfo info = ws::quant_format_info(f);
  ws::DequantSpec spec;
  spec.format = f;
  spec.impl = ws::KernelImpl::Simd128;
  spec.out = sizeof(T) == 2 ? ws::OutType::F16 : ws::OutType::F32;
  spec.elements = uint64_t(blocks.size() / info.block_bytes) * info.block_elems;
  spec.validate = false;  // the vectors include inf/NaN scales (F16_all, MXFP4_edge)
  ws::Dequantizer d;
  std::vector<T> out(spec.elements, T(0xDEADBEEFu));
  if (d.init(spec) != ws::Status::Ok) {
    *err = "init failed";
    return out;
  }
  size_t used = 0, written = 0;
  while (used < blocks.size()) {
    size_t take = piece ? std::min(piece, blocks.size() - used) : blocks.size() - used;
    size_t in_used = 0;
    while (in_used < take) {
      size_t u = 0, w = 0;
      size_t cap = std::min(out_cap, out.size() * sizeof(T) - written);
      ws::Status s = d.decode(blocks.data() + used + in_used, take - in_used, &u,
                              reinterpret_cast<uint8_t*>(out.data()) + written, cap, &w);
      if (s != ws::Status::Ok) {
        *err = "decode failed";
        return out;
      }
      in_used += u;
      written += w;
      if (u == 0 && w == 0) break;
    }
    used += take;
  }
  if (!d.done()) *err = "not done";
  return out;
}

TEST_P(SimdVectors, BitExact) {
  const VectorCase& c = GetParam();
  ws::QuantFormat f;
  ASSERT_TRUE(ws::quant_format_from_name(c.format, &f));
  if (!ws::kernels::format_entry(f).simd128) GTEST_FAIL() << "no SIMD128 kernel for " << c.format;
  const std::string dir = std::string(WS_SHARED_DIR) + "/testdata/vectors/ggml/";
  const std::vector<uint8_t> blocks = read_file(dir + c.label + ".blocks.bin");
  const std::vector<uint8_t> expected_bytes = read_file(dir + c.label + ".f32.bin");
  ASSERT_FALSE(blocks.empty());
  ASSERT_EQ(expected_bytes.size() % 4, 0u);
  std::vector<uint32_t> expected(expected_bytes.size() / 4);
  memcpy(expected.data(), expected_bytes.data(), expected_bytes.size());

  const ws::QuantFormatInfo info = ws::quant_format_info(f);
  const size_t block_out = size_t(info.block_elems) * 4;
  struct Feed {
    size_t piece, out_cap;
  } feeds[] = {{0, SIZE_MAX}, {1, block_out}, {info.block_bytes * 3 + 1, block_out * 5}};
  for (const Feed& feed : feeds) {
    std::string err;
    std::vector<uint32_t> got = decode_simd<uint32_t>(f, blocks, feed.piece, feed.out_cap, &err);
    ASSERT_EQ(err, "") << c.label << " piece " << feed.piece;
    ASSERT_EQ(got.size(), expected.size());
    size_t bad = 0, first = SIZE_MAX;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected[i]) {
        if (first == SIZE_MAX) first = i;
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0u) << c.label << " piece " << feed.piece << ": first mismatch at element " << first
                       << " got 0x" << std::hex << (first < got.size() ? got[first] : 0) << " expected 0x"
                       << (first < got.size() ? expected[first] : 0);
  }
}

TEST_P(SimdVectors, F16BitExact) {
  const VectorCase& c = GetParam();
  ws::QuantFormat f;
  ASSERT_TRUE(ws::quant_format_from_name(c.format, &f));
  const std::string dir = std::string(WS_SHARED_DIR) + "/testdata/vectors/ggml/";
  const std::vector<uint8_t> blocks = read_file(dir + c.label + ".blocks.bin");
  const std::vector<uint8_t> expected_bytes = read_file(dir + c.label + ".f32.bin");
  ASSERT_FALSE(blocks.empty());
  std::vector<uint16_t> expected(expected_bytes.size() / 4);
  for (size_t i = 0; i < expected.size(); ++i) {
    float v;
    memcpy(&v, &expected_bytes[4 * i], 4);
    expected[i] = ws::kernels::f32_to_fp16(v);
  }
  // F16 asked as f16 is the stored halves (dequant.h), where ggml's f32 of a signalling NaN is
  // quiet: the blocks themselves are expected.
  if (f == ws::QuantFormat::F16) memcpy(expected.data(), blocks.data(), 2 * expected.size());
  const ws::QuantFormatInfo info = ws::quant_format_info(f);
  const size_t block_out = size_t(info.block_elems) * 2;
  struct Feed {
    size_t piece, out_cap;
  } feeds[] = {{0, SIZE_MAX}, {1, block_out}, {info.block_bytes * 3 + 1, block_out * 5}};
  for (const Feed& feed : feeds) {
    std::string err;
    std::vector<uint16_t> got = decode_simd<uint16_t>(f, blocks, feed.piece, feed.out_cap, &err);
    ASSERT_EQ(err, "") << c.label << " piece " << feed.piece;
    ASSERT_EQ(got.size(), expected.size());
    size_t bad = 0, first = SIZE_MAX;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected[i]) {
        if (first == SIZE_MAX) first = i;
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0u) << c.label << " f16, piece " << feed.piece << ": first mismatch at element " << first
                       << " got 0x" << std::hex << (first < got.size() ? got[first] : 0) << " expected 0x"
                       << (first < got.size() ? expected[first] : 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Ggml, SimdVectors, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<VectorCase>& i) { return std::string(i.param.label); });

}  // namespace
