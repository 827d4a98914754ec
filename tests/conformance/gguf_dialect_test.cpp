// The BitNet dialect as the reader reports it: Reader::gguf_dialect() and gguf_architecture()
// after HeaderReady, and what type ids 36..39 mean and weigh in each dialect (FORMATS.md §5:
// microsoft/BitNet's llama.cpp fork numbers them I2_S, I8_S, TL1, TL2 when general.architecture
// names bitnet; upstream 36..38 are retired and 39 is MXFP4). Files come from the tests' GGUF
// writer, whose own type table (not the library's) sizes their data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf_writer.h"
#include "harness.h"

namespace wstest {
namespace {

using namespace wsgguf;

Tensor tensor(const std::string& name, uint32_t type, std::vector<uint64_t> ne) {
  Tensor t;
  t.name = name;
  t.type = type;
  t.ne = std::move(ne);
  return t;
}

RunResult read_all(const Built& b) {
  RunResult r = run_reader(reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size(),
                           Chunking::whole());
  for (const std::string& v : r.violations) ADD_FAILURE() << "stream protocol: " << v;
  return r;
}

TEST(GgufDialect, BitnetArchitectureSelectsTheBitnetTypes) {
  Spec s;
  s.bitnet = true;
  s.kvs = {kv_str("general.architecture", "bitnet")};
  s.tensors = {tensor("q", 36, {128, 2}), tensor("a", 37, {5}), tensor("b", 38, {7}),
               tensor("c", 39, {48})};
  Built b = build(s);
  RunResult r = read_all(b);
  ASSERT_TRUE(r.ended) << r.summary();
  EXPECT_EQ(r.gguf_dialect, ws::GgmlDialect::BitNet);
  EXPECT_EQ(r.gguf_architecture, "bitnet");
  ASSERT_EQ(r.tensors.size(), 4u);
  const char* names[] = {"I2_S", "I8_S", "TL1", "TL2"};
  // I2_S: 256 elements / 4 + a 32-byte tail; the others one byte per element.
  const uint64_t sizes[] = {256 / 4 + 32, 5, 7, 48};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.tensors[i].type_id, 36 + i);
    EXPECT_EQ(r.tensors[i].dtype, names[i]);
    EXPECT_EQ(r.tensors[i].end - r.tensors[i].begin, sizes[i]) << names[i];
    EXPECT_EQ(r.tensors[i].begin, b.tensor_begin[i]);
  }
}

TEST(GgufDialect, ArchitectureNamedAfterOtherKeysAndWithASuffix) {
  Spec s;
  s.bitnet = true;
  s.kvs = {kv_uint("general.quantization_version", kU32, 2), kv_str("general.name", "x"),
           kv_str("general.architecture", "bitnet-b1.58")};
  s.tensors = {tensor("q", 36, {64})};
  RunResult r = read_all(build(s));
  ASSERT_TRUE(r.ended) << r.summary();
  EXPECT_EQ(r.gguf_dialect, ws::GgmlDialect::BitNet);
  EXPECT_EQ(r.gguf_architecture, "bitnet-b1.58");
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].end - r.tensors[0].begin, 64u / 4 + 32);
}

TEST(GgufDialect, OtherArchitecturesAreUpstream) {
  Spec s;
  s.kvs = {kv_str("general.architecture", "llama")};
  s.tensors = {tensor("m", 39, {64})};  // MXFP4: 2 blocks of 32 elements, 17 bytes each
  RunResult r = read_all(build(s));
  ASSERT_TRUE(r.ended) << r.summary();
  EXPECT_EQ(r.gguf_dialect, ws::GgmlDialect::Upstream);
  EXPECT_EQ(r.gguf_architecture, "llama");
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].dtype, "MXFP4");
  EXPECT_EQ(r.tensors[0].end - r.tensors[0].begin, 34u);

  // The same I2_S tensor is retired upstream.
  s.tensors = {tensor("q", 36, {128})};
  Built b = build(s);
  RunResult u = read_all(b);
  EXPECT_EQ(u.summary(), "GgufRetiredType@" + std::to_string(b.field(Field::Type, 0).begin) + "[\"q\"]");
}

TEST(GgufDialect, NoArchitectureIsUpstreamWithAnEmptyName) {
  Spec s;
  s.kvs = {kv_str("general.name", "bitnet")};  // not the architecture key
  s.tensors = {tensor("f", 0, {4})};
  RunResult r = read_all(build(s));
  ASSERT_TRUE(r.ended) << r.summary();
  EXPECT_EQ(r.gguf_dialect, ws::GgmlDialect::Upstream);
  EXPECT_EQ(r.gguf_architecture, "");
}

TEST(GgufDialect, TheDialectDoesNotDependOnTheChunking) {
  Spec s;
  s.bitnet = true;
  s.kvs = {kv_str("general.architecture", "bitnet-25")};
  s.tensors = {tensor("q", 36, {128}), tensor("t", 39, {3})};
  Built b = build(s);
  for (const Chunking& c : standard_chunkings()) {
    SCOPED_TRACE(c.name());
    RunResult r = run_reader(reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size(), c);
    ASSERT_TRUE(r.ended) << r.summary();
    EXPECT_EQ(r.gguf_dialect, ws::GgmlDialect::BitNet);
    EXPECT_EQ(r.gguf_architecture, "bitnet-25");
    ASSERT_EQ(r.tensors.size(), 2u);
    EXPECT_EQ(r.tensors[1].dtype, "TL2");
  }
}

}  // namespace
}  // namespace wstest
