// Errors carry the values behind them (found / expected), so tools can say "header says N
// bytes; the limit is M" without re-parsing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "weightstream/reader.h"

namespace {

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = char(v >> (8 * i));
  return s;
}
std::string le32(uint32_t v) { return le64(v).substr(0, 4); }

std::string safetensors(const std::string& header, size_t data_bytes) {
  return le64(header.size()) + header + std::string(data_bytes, '\0');
}

ws::Error run(const std::string& bytes, ws::Limits limits = ws::Limits()) {
  alignas(8) static uint8_t arena[1 << 16];
  ws::Reader r(arena, sizeof arena, limits);
  bool fed = false;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (!fed) r.feed(bytes.data(), bytes.size()), fed = true;
      else r.finish();
    } else if (e.type == ws::EventType::End || e.type == ws::EventType::Error) {
      return r.error();
    }
  }
}

TEST(ErrorDetails, HeaderTooLargeSaysTheLengthAndTheLimit) {
  ws::Error e = run(le64(4294967296ull) + "{}");
  EXPECT_EQ(e.code, ws::Status::HeaderTooLarge);
  ASSERT_TRUE(e.has_found && e.has_expected);
  EXPECT_EQ(e.found, 4294967296ull);
  EXPECT_EQ(e.expected, 100000000u);
}

TEST(ErrorDetails, SizeMismatchSaysSpanAndByteSize) {
  ws::Error e = run(safetensors(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20));
  EXPECT_EQ(e.code, ws::Status::TensorSizeMismatch);
  EXPECT_EQ(e.found, 20u);
  EXPECT_EQ(e.expected, 24u);
}

TEST(ErrorDetails, GapSaysWhereTheTensorStartsAndWhereItShould) {
  ws::Error e = run(safetensors(
      R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}})", 8));
  EXPECT_EQ(e.code, ws::Status::DataOffsetGap);
  EXPECT_EQ(e.found, 6u);
  EXPECT_EQ(e.expected, 4u);
  EXPECT_EQ(std::string(e.tensor_name, e.tensor_name_size), "b");
}

TEST(ErrorDetails, NestingSaysTheLimit) {
  ws::Limits limits;
  limits.max_nesting = 5;
  ws::Error e = run(safetensors(R"({"a":{"x":[[[[1]]]]}})", 0), limits);
  EXPECT_EQ(e.code, ws::Status::NestingTooDeep);
  EXPECT_FALSE(e.has_found);
  EXPECT_EQ(e.expected, 5u);
}

TEST(ErrorDetails, GgufVersionAndTensorOffset) {
  ws::Error v = run("GGUF" + le32(0x03000000) + le64(0) + le64(0));
  EXPECT_EQ(v.code, ws::Status::GgufByteSwapped);
  EXPECT_EQ(v.found, 0x03000000u);
  EXPECT_FALSE(v.has_expected);

  // One F32 tensor of 3 elements at offset 64 instead of 0.
  std::string name = "t";
  std::string g = "GGUF" + le32(3) + le64(1) + le64(0) + le64(name.size()) + name + le32(1) + le64(3) +
                  le32(0) + le64(64);
  ws::Error o = run(g + std::string(32, '\0'));
  EXPECT_EQ(o.code, ws::Status::GgufInvalidTensorOffset);
  EXPECT_EQ(o.offset, g.size() - 8);
  EXPECT_EQ(o.found, 64u);
  EXPECT_EQ(o.expected, 0u);
  EXPECT_EQ(std::string(o.tensor_name, o.tensor_name_size), "t");
}

}  // namespace
