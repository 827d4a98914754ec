// Real and reference-written GGUF files (tests/data/real/gguf, tests/data/synthetic/gguf, see
// their PROVENANCE.md): under every chunking the reader must report exactly what gguf-py and ggml
// read (<file>.expect.json) — version, counts, alignment, data offset, every KV's key, offset,
// type and value, every tensor's name, type, shape, sizes, offsets and the checksum of its
// streamed bytes — and agree with itself, with and without a declared input size.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gguf_expect.h"
#include "harness.h"
#include "json_reader.h"
#include "sha256.h"

namespace wstest {
namespace {

// Paths relative to tests/data: they name the test cases.
std::vector<std::string> gguf_files() {
  std::vector<std::string> v;
  for (const char* sub : {"real/gguf", "synthetic/gguf"})
    for (const std::string& path : list_files(std::string(WS_TESTS_DIR) + "/data/" + sub, ".gguf"))
      v.push_back(std::string(sub) + "/" + std::filesystem::path(path).filename().string());
  return v;
}

std::string path_of(const std::string& rel) { return std::string(WS_TESTS_DIR) + "/data/" + rel; }

class GgufFileTest : public testing::TestWithParam<std::string> {};

TEST_P(GgufFileTest, MatchesTheReferenceUnderEveryChunking) {
  const std::string& rel = GetParam();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(read_file(path_of(rel), &bytes));
  const Json expect = load_json_file(path_of(rel) + ".expect.json");
  // The copy is intact (a corrupted fixture would make every other check meaningless).
  ASSERT_EQ(bytes.size(), expect.at("size_bytes").u64());
  ASSERT_EQ(sha256_hex(bytes.data(), bytes.size()), expect.at("sha256").str());
  ASSERT_EQ(expect.at("magic").str(), "GGUF");

  RunResult first;
  bool have_first = false;
  for (const Chunking& chunking : standard_chunkings()) {
    SCOPED_TRACE(rel + ", chunking " + chunking.name());
    RunResult r = run_reader(bytes.data(), bytes.size(), chunking);
    for (const std::string& v : r.violations) ADD_FAILURE() << "stream protocol: " << v;
    ASSERT_TRUE(r.ended) << r.summary();
    EXPECT_EQ(r.position, bytes.size());
    expect_gguf_matches(expect, r, bytes);
    if (!have_first) {
      first = r;
      have_first = true;
      continue;
    }
    EXPECT_TRUE(r.events == first.events) << "events differ from the whole-input run";
    EXPECT_TRUE(r.tensor_bytes == first.tensor_bytes);
    EXPECT_TRUE(r.kvs == first.kvs) << "key-values differ from the whole-input run";
  }

  // A caller that knows the file size gets the same stream.
  RunOptions declared;
  declared.declare_input_size = true;
  for (const Chunking& chunking : {Chunking::whole(), Chunking::random(11)}) {
    SCOPED_TRACE(rel + ", declared size, chunking " + chunking.name());
    RunResult r = run_reader(bytes.data(), bytes.size(), chunking, declared);
    for (const std::string& v : r.violations) ADD_FAILURE() << "stream protocol: " << v;
    ASSERT_TRUE(r.ended) << r.summary();
    EXPECT_TRUE(r.events == first.events);
    EXPECT_TRUE(r.tensor_bytes == first.tensor_bytes);
    EXPECT_TRUE(r.kvs == first.kvs);
  }
}

// gguf-py's tensor_data_offset for a zero-tensor file is padded past the end of the file; the
// reader must report ggml's (the end of the KVs) and accept the file without that padding.
TEST(GgufFiles, ZeroTensorFilesEndRightAfterTheKvs) {
  int checked = 0;
  for (const std::string& rel : gguf_files()) {
    const Json expect = load_json_file(path_of(rel) + ".expect.json");
    if (expect.at("tensor_count").u64() != 0) continue;
    ++checked;
    EXPECT_EQ(expected_data_offset(expect), expect.at("size_bytes").u64()) << rel;
    EXPECT_GT(expect.at("tensor_data_offset").u64(), expect.at("size_bytes").u64()) << rel;
  }
  EXPECT_EQ(checked, 4);
}

TEST(GgufFiles, AllSevenArePresent) { EXPECT_EQ(gguf_files().size(), 7u); }

std::string file_test_name(const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.rfind('.'));
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Gguf, GgufFileTest, testing::ValuesIn(gguf_files()), file_test_name);

}  // namespace
}  // namespace wstest
