// Real files written by the reference implementation (tests/data/real/safetensors, see
// PROVENANCE.md): under every chunking the reader must produce exactly the table the reference
// crate read (<file>.expect.json), stream bytes with the recorded checksums, and agree with itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "expect_table.h"
#include "harness.h"
#include "json_reader.h"
#include "sha256.h"

namespace wstest {
namespace {

const std::string kRealDir = std::string(WS_TESTS_DIR) + "/data/real/safetensors";

// File names (not paths): they name the test cases.
std::vector<std::string> real_files() {
  std::vector<std::string> v;
  for (const std::string& path : list_files(kRealDir, ".safetensors"))
    v.push_back(std::filesystem::path(path).filename().string());
  return v;
}

class RealFileTest : public testing::TestWithParam<std::string> {};

TEST_P(RealFileTest, MatchesTheReferenceUnderEveryChunking) {
  const std::string& file = GetParam();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(read_file(kRealDir + "/" + file, &bytes));
  const Json expect = load_json_file(kRealDir + "/" + file + ".expect.json");
  // The copy is intact (a corrupted fixture would make every other check meaningless).
  ASSERT_EQ(bytes.size(), expect.at("size_bytes").u64());
  ASSERT_EQ(sha256_hex(bytes.data(), bytes.size()), expect.at("sha256").str());
  ASSERT_TRUE(expect.at("accepted").boolean);

  RunResult first;
  bool have_first = false;
  for (const Chunking& chunking : standard_chunkings()) {
    SCOPED_TRACE(file + ", chunking " + chunking.name());
    RunResult r = run_reader(bytes.data(), bytes.size(), chunking);
    for (const std::string& v : r.violations) ADD_FAILURE() << "stream protocol: " << v;
    ASSERT_TRUE(r.ended) << r.summary();
    EXPECT_EQ(r.position, bytes.size());
    expect_table_matches(expect, r, bytes);
    if (!have_first) {
      first = r;
      have_first = true;
      continue;
    }
    EXPECT_TRUE(r.events == first.events) << "events differ from the whole-input run";
    EXPECT_TRUE(r.tensor_bytes == first.tensor_bytes);
  }
}

TEST(RealFiles, AllNineArePresent) { EXPECT_EQ(real_files().size(), 9u); }

std::string file_test_name(const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.find('.'));
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Safetensors, RealFileTest, testing::ValuesIn(real_files()),
                         file_test_name);

}  // namespace
}  // namespace wstest
