// The malformed-input corpora (tests/corpus/safetensors and tests/corpus/gguf, written by
// ws-make-corpus and ws-make-gguf-corpus; tests/corpus/differential, found against ggml): every case, fed whole, 1 byte at a time and in random
// pieces for five seeds, must give exactly the status, offset and tensor of expected.json — and
// every chunking must give the same events and bytes. GGUF cases also say what a declared input
// size changes (status_with_size etc.), checked under every chunking too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "expect_table.h"
#include "gguf_expect.h"
#include "harness.h"
#include "json_reader.h"

namespace wstest {
namespace {

std::string corpus_dir(const std::string& format) {
  return std::string(WS_TESTS_DIR) + "/corpus/" + format;
}

struct Verdict {
  std::string status;
  uint64_t offset = 0;
  bool has_tensor = false;
  std::string tensor;
};

struct CorpusCase {
  std::string format;  // "safetensors", "gguf" or "differential": the corpus directory
  std::string file;
  Verdict plain;
  bool has_sized = false;  // GGUF: the verdict with a declared input size
  Verdict sized;
  std::string description;
  const Json* expect = nullptr;  // valid cases: the table (points into corpus_json())
  std::string path() const { return corpus_dir(format) + "/" + file; }
};

const Json& corpus_json(const std::string& format) {
  static std::map<std::string, Json> loaded;
  auto it = loaded.find(format);
  if (it == loaded.end())
    it = loaded.emplace(format, load_json_file(corpus_dir(format) + "/expected.json")).first;
  return it->second;
}

Verdict read_verdict(const Json& j, const std::string& suffix) {
  Verdict v;
  v.status = j.at("status" + suffix).str();
  v.offset = j.at("offset" + suffix).u64();
  v.has_tensor = !j.at("tensor" + suffix).is_null();
  if (v.has_tensor) v.tensor = j.at("tensor" + suffix).str();
  return v;
}

std::vector<CorpusCase> corpus_cases(const std::string& format) {
  std::vector<CorpusCase> v;
  for (const Json& j : corpus_json(format).at("cases").items) {
    CorpusCase c;
    c.format = format;
    c.file = j.at("file").str();
    c.plain = read_verdict(j, "");
    c.has_sized = j.find("status_with_size") != nullptr;
    if (c.has_sized) c.sized = read_verdict(j, "_with_size");
    c.description = j.at("description").str();
    c.expect = j.find("expect");
    v.push_back(c);
  }
  return v;
}

// What a run must summarize to (RunResult::summary()).
std::string expected_summary(const Verdict& v) {
  if (v.status == "Ok") return "Ok(End@" + std::to_string(v.offset) + ")";
  std::string s = v.status + "@" + std::to_string(v.offset);
  if (v.has_tensor) s += "[" + printable(v.tensor) + "]";
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
  ASSERT_TRUE(read_file(c.path(), &bytes));

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
      EXPECT_EQ(r.summary(), expected_summary(c.plain));
      if (c.plain.status == "Ok" && r.ended) {
        ASSERT_NE(c.expect, nullptr);
        if (c.format != "safetensors") expect_gguf_matches(*c.expect, r, bytes);
        else expect_table_matches(*c.expect, r, bytes);
      }
      first = r;
      have_first = true;
      continue;
    }
    // Chunking must not change anything: same events, bytes and error as the whole-input run.
    EXPECT_EQ(r.summary(), first.summary());
    EXPECT_TRUE(r.events == first.events) << first_difference(r.events, first.events);
    EXPECT_TRUE(r.tensor_bytes == first.tensor_bytes) << "streamed bytes differ";
    EXPECT_TRUE(r.kvs == first.kvs) << "GGUF key-values differ";
    EXPECT_EQ(r.error_tensor, first.error_tensor);
  }
}

// A caller that declares the input size up front (Reader::set_input_size) may be told of a short
// or over-long input earlier. Safetensors: at another offset, but never a different verdict (same
// status, same tensor, and for valid inputs the same events and bytes). GGUF: a count, string or
// array that the rest of the input cannot hold is rejected where it is read — exactly the
// expected.json's *_with_size verdict, under every chunking.
TEST_P(CorpusCaseTest, DeclaredInputSizeGivesTheExpectedVerdict) {
  const CorpusCase& c = GetParam();
  SCOPED_TRACE(c.file + " — " + c.description);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(read_file(c.path(), &bytes));
  RunOptions declared;
  declared.declare_input_size = true;
  // Compared chunking by chunking, so that only the declaration differs between the two runs.
  std::vector<Chunking> chunkings = {Chunking::whole(), Chunking::fixed(1)};
  if (c.has_sized) chunkings = standard_chunkings();
  for (const Chunking& chunking : chunkings) {
    SCOPED_TRACE("chunking " + chunking.name());
    RunResult plain = run_reader(bytes.data(), bytes.size(), chunking);
    RunResult r = run_reader(bytes.data(), bytes.size(), chunking, declared);
    EXPECT_TRUE(r.violations.empty()) << "stream protocol:" << join(r.violations);
    if (c.has_sized) {
      EXPECT_EQ(r.summary(), expected_summary(c.sized));
    } else {
      EXPECT_EQ(r.status_name(), plain.status_name());
      EXPECT_EQ(r.ended, c.plain.status == "Ok");
      EXPECT_EQ(printable(r.error_tensor_name), printable(plain.error_tensor_name));
    }
    if (c.plain.status == "Ok" && plain.ended) {
      EXPECT_TRUE(r.events == plain.events) << first_difference(r.events, plain.events);
      EXPECT_TRUE(r.tensor_bytes == plain.tensor_bytes);
      EXPECT_TRUE(r.kvs == plain.kvs);
    }
  }
}

std::string case_name(const testing::TestParamInfo<CorpusCase>& info) {
  std::string n = info.param.file.substr(0, info.param.file.find('.'));
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Safetensors, CorpusCaseTest,
                         testing::ValuesIn(corpus_cases("safetensors")), case_name);
INSTANTIATE_TEST_SUITE_P(Gguf, CorpusCaseTest, testing::ValuesIn(corpus_cases("gguf")), case_name);
// Files the differential test against ggml found (tests/differential/README.md), with the verdict
// weightstream must give; the differential stage replays them against ggml too.
INSTANTIATE_TEST_SUITE_P(Differential, CorpusCaseTest, testing::ValuesIn(corpus_cases("differential")),
                         case_name);

// Checks shared by both corpora: every listed file exists and nothing else does, statuses are
// names of ws::Status, valid cases (and only they) carry an expectation. Returns the statuses seen
// (plain and, for GGUF, with a declared size) and the number of valid cases.
std::set<ws::Status> check_index(const std::string& format, size_t* valid) {
  std::set<std::string> listed = {"expected.json"};
  std::set<ws::Status> seen;
  *valid = 0;
  for (const CorpusCase& c : corpus_cases(format)) {
    for (const Verdict* v : {&c.plain, &c.sized}) {
      if (v == &c.sized && !c.has_sized) continue;
      ws::Status s;
      EXPECT_TRUE(ws::status_from_name(v->status.c_str(), &s)) << c.file << ": " << v->status;
      seen.insert(s);
    }
    EXPECT_TRUE(listed.insert(c.file).second) << "listed twice: " << c.file;
    EXPECT_EQ(c.expect != nullptr, c.plain.status == "Ok") << c.file;
    *valid += c.plain.status == "Ok";
  }
  std::set<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir(format)))
    on_disk.insert(e.path().filename().string());
  EXPECT_EQ(on_disk, listed) << "files in the corpus directory and expected.json differ";
  return seen;
}

// The corpus itself: big enough, well-formed, complete, and covering every safetensors code.
TEST(CorpusIndex, CasesAreWellFormedAndCoverEveryCode) {
  EXPECT_GE(corpus_cases("safetensors").size(), 70u);
  size_t valid = 0;
  std::set<ws::Status> seen = check_index("safetensors", &valid);
  EXPECT_GE(valid, 10u);
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

// The GGUF corpus: at least 60 cases, 8 valid ones, every GGUF code and every other code a GGUF
// input can produce.
TEST(CorpusIndex, GgufCasesAreWellFormedAndCoverEveryCode) {
  std::vector<CorpusCase> cases = corpus_cases("gguf");
  EXPECT_GE(cases.size(), 60u);
  for (const CorpusCase& c : cases) EXPECT_TRUE(c.has_sized) << c.file << ": no *_with_size";
  size_t valid = 0;
  std::set<ws::Status> seen = check_index("gguf", &valid);
  EXPECT_GE(valid, 8u);
  for (int s = int(ws::Status::GgufInvalidVersion); s <= int(ws::Status::GgufNulInArchitecture); ++s)
    EXPECT_TRUE(seen.count(ws::Status(s))) << "no GGUF case for " << ws::status_name(ws::Status(s));
  for (ws::Status s : {ws::Status::Ok, ws::Status::HeaderTooSmall, ws::Status::TruncatedHeader,
                       ws::Status::TruncatedData, ws::Status::TrailingBytes,
                       ws::Status::ShapeOverflow, ws::Status::DuplicateTensorName,
                       ws::Status::TooManyTensors})
    EXPECT_TRUE(seen.count(s)) << "no GGUF case for " << ws::status_name(s);
}

TEST(CorpusIndex, DifferentialCasesAreWellFormed) {
  EXPECT_GE(corpus_cases("differential").size(), 6u);
  size_t valid = 0;
  check_index("differential", &valid);
}

}  // namespace
}  // namespace wstest
