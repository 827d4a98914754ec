// The malformed-input corpus (tests/corpus/safetensors, written by ws-make-corpus): every case,
// fed whole, 1 byte at a time and in random pieces for five seeds, must give exactly the status,
// offset and tensor of expected.json — and every chunking must give the same events and bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "expect_table.h"
#include "harness.h"
#include "json_reader.h"

namespace wstest {
namespace {

const std::string kCorpusDir = std::string(WS_TESTS_DIR) + "/corpus/safetensors";

struct CorpusCase {
  std::string file;
  std::string status;
  uint64_t offset = 0;
  bool has_tensor = false;
  std::string tensor;
  std::string description;
  const Json* expect = nullptr;  // valid cases: the table (points into corpus_json())
};

const Json& corpus_json() {
  static const Json j = load_json_file(kCorpusDir + "/expected.json");
  return j;
}

std::vector<CorpusCase> corpus_cases() {
  std::vector<CorpusCase> v;
  for (const Json& j : corpus_json().at("cases").items) {
    CorpusCase c;
    c.file = j.at("file").str();
    c.status = j.at("status").str();
    c.offset = j.at("offset").u64();
    c.has_tensor = !j.at("tensor").is_null();
    if (c.has_tensor) c.tensor = j.at("tensor").str();
    c.description = j.at("description").str();
    c.expect = j.find("expect");
    v.push_back(c);
  }
  return v;
}

// What a run must summarize to (RunResult::summary()).
std::string expected_summary(const CorpusCase& c) {
  if (c.status == "Ok") return "Ok(End@" + std::to_string(c.offset) + ")";
  std::string s = c.status + "@" + std::to_string(c.offset);
  if (c.has_tensor) s += "[" + printable(c.tensor) + "]";
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "\n  " + x;
  return s;
}

// Index of the first differing event, for a readable message.
std::string first_difference(const std::vector<RecordedEvent>& a,
                             const std::vector<RecordedEvent>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return "event " + std::to_string(i) + ": " + (i < a.size() ? to_string(a[i]) : "(none)") +
         " vs " + (i < b.size() ? to_string(b[i]) : "(none)");
}

// GoogleTest prints the parameter of a failing case: the file name says it all.
void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.file; }

class CorpusCaseTest : public testing::TestWithParam<CorpusCase> {};

TEST_P(CorpusCaseTest, EveryChunkingGivesTheExpectedResult) {
  const CorpusCase& c = GetParam();
  SCOPED_TRACE(c.file + " — " + c.description);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(read_file(kCorpusDir + "/" + c.file, &bytes));

  // The whole-input run is checked against expected.json; every other chunking must then agree
  // with it exactly (one message per difference, not one per chunking).
  RunResult first;
  bool have_first = false;
  for (const Chunking& chunking : standard_chunkings()) {
    SCOPED_TRACE("chunking " + chunking.name());
    RunResult r = run_reader(bytes.data(), bytes.size(), chunking);
    EXPECT_TRUE(r.violations.empty()) << "stream protocol:" << join(r.violations);
    // An error after HeaderReady that names a tensor by index must name the same tensor by name.
    // (Before HeaderReady the table is not readable, so an index cannot be checked.)
    if (r.error_tensor != ws::kNoTensor && r.header_ready) {
      ASSERT_LT(r.error_tensor, r.tensors.size()) << "error names a tensor index outside the table";
      EXPECT_TRUE(r.error_has_name);
      EXPECT_EQ(printable(r.tensors[r.error_tensor].name), printable(r.error_tensor_name));
    }
    if (!have_first) {
      EXPECT_EQ(r.summary(), expected_summary(c));
      if (c.status == "Ok" && r.ended) {
        ASSERT_NE(c.expect, nullptr);
        expect_table_matches(*c.expect, r, bytes);
      }
      first = r;
      have_first = true;
      continue;
    }
    // Chunking must not change anything: same events, bytes and error as the whole-input run.
    EXPECT_EQ(r.summary(), first.summary());
    EXPECT_TRUE(r.events == first.events) << first_difference(r.events, first.events);
    EXPECT_TRUE(r.tensor_bytes == first.tensor_bytes) << "streamed bytes differ";
    EXPECT_EQ(r.error_tensor, first.error_tensor);
  }
}

// A caller that declares the input size up front (Reader::set_input_size) may be told of a short
// or over-long input earlier — at another offset — but never a different verdict: same status,
// same tensor, and for valid inputs the same events and bytes.
TEST_P(CorpusCaseTest, DeclaredInputSizeGivesTheSameVerdict) {
  const CorpusCase& c = GetParam();
  SCOPED_TRACE(c.file + " — " + c.description);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(read_file(kCorpusDir + "/" + c.file, &bytes));
  RunOptions declared;
  declared.declare_input_size = true;
  // Compared chunking by chunking, so that only the declaration differs between the two runs.
  for (const Chunking& chunking : {Chunking::whole(), Chunking::fixed(1)}) {
    SCOPED_TRACE("chunking " + chunking.name());
    RunResult plain = run_reader(bytes.data(), bytes.size(), chunking);
    RunResult r = run_reader(bytes.data(), bytes.size(), chunking, declared);
    EXPECT_TRUE(r.violations.empty()) << "stream protocol:" << join(r.violations);
    EXPECT_EQ(r.status_name(), plain.status_name());
    EXPECT_EQ(r.ended, c.status == "Ok");
    EXPECT_EQ(printable(r.error_tensor_name), printable(plain.error_tensor_name));
    if (c.status == "Ok") {
      EXPECT_TRUE(r.events == plain.events) << first_difference(r.events, plain.events);
      EXPECT_TRUE(r.tensor_bytes == plain.tensor_bytes);
    }
  }
}

std::string case_name(const testing::TestParamInfo<CorpusCase>& info) {
  std::string n = info.param.file.substr(0, info.param.file.find('.'));
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Safetensors, CorpusCaseTest, testing::ValuesIn(corpus_cases()),
                         case_name);

// The corpus itself: big enough, well-formed, complete, and covering every safetensors code.
TEST(CorpusIndex, CasesAreWellFormedAndCoverEveryCode) {
  std::vector<CorpusCase> cases = corpus_cases();
  EXPECT_GE(cases.size(), 70u);

  std::set<std::string> listed = {"expected.json"};
  std::set<ws::Status> seen;
  size_t valid = 0;
  for (const CorpusCase& c : cases) {
    ws::Status s;
    EXPECT_TRUE(ws::status_from_name(c.status.c_str(), &s)) << c.file << ": " << c.status;
    seen.insert(s);
    EXPECT_TRUE(listed.insert(c.file).second) << "listed twice: " << c.file;
    EXPECT_EQ(c.expect != nullptr, c.status == "Ok") << c.file;
    valid += c.status == "Ok";
  }
  EXPECT_GE(valid, 10u);

  std::set<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(kCorpusDir))
    on_disk.insert(e.path().filename().string());
  EXPECT_EQ(on_disk, listed) << "files in the corpus directory and expected.json differ";

  // Every code from the framing, JSON and schema groups of status.h (HeaderTooSmall ..
  // DuplicateMetadata) has at least one case — except TruncatedHeader, which only GGUF input
  // produces (a short safetensors header is InvalidHeaderLength). The limit codes, which need
  // lowered Limits, are covered by limits_test.cpp.
  for (int s = int(ws::Status::HeaderTooSmall); s <= int(ws::Status::DuplicateMetadata); ++s) {
    if (ws::Status(s) == ws::Status::TruncatedHeader) continue;
    EXPECT_TRUE(seen.count(ws::Status(s))) << "no corpus case for " << ws::status_name(ws::Status(s));
  }
  EXPECT_TRUE(seen.count(ws::Status::Ok));
}

}  // namespace
}  // namespace wstest
