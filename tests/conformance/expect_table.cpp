// Table comparison for valid inputs (see expect_table.h).
#include "expect_table.h"

#include <gtest/gtest.h>

#include <string.h>

#include <algorithm>
#include <string>

#include "sha256.h"

namespace wstest {

void expect_table_matches(const Json& expect, const RunResult& run,
                          const std::vector<uint8_t>& file) {
  ASSERT_TRUE(run.ended) << "reader did not reach End: " << run.summary();
  ASSERT_TRUE(run.header_ready);
  EXPECT_EQ(run.header_size, expect.at("header_len").u64());
  EXPECT_EQ(run.data_start, expect.at("data_start").u64());
  const Json& tensors = expect.at("tensors");
  ASSERT_EQ(run.tensor_count, expect.at("n_tensors").u64());
  ASSERT_EQ(run.tensors.size(), tensors.items.size());
  ASSERT_EQ(run.tensor_bytes.size(), tensors.items.size());

  uint64_t data_end = 0;
  for (size_t i = 0; i < tensors.items.size(); ++i) {
    const Json& t = tensors.items[i];
    const TensorRow& got = run.tensors[i];
    SCOPED_TRACE("tensor " + std::to_string(i) + " " + printable(t.at("name").str()));
    EXPECT_EQ(printable(got.name), printable(t.at("name").str()));
    EXPECT_EQ(got.dtype, t.at("dtype").str());
    std::vector<uint64_t> shape;
    for (const Json& d : t.at("shape").items) shape.push_back(d.u64());
    EXPECT_EQ(got.shape, shape);
    const Json& offsets = t.at("data_offsets");
    ASSERT_EQ(offsets.items.size(), 2u);
    uint64_t begin = offsets.items[0].u64(), end = offsets.items[1].u64();
    EXPECT_EQ(got.begin, begin);
    EXPECT_EQ(got.end, end);
    data_end = std::max(data_end, end);

    const std::string& bytes = run.tensor_bytes[i];
    if (const Json* sha = t.find("data_sha256")) {
      EXPECT_EQ(sha256_hex(bytes.data(), bytes.size()), sha->str());
    }
    uint64_t abs_begin = run.data_start + begin, abs_end = run.data_start + end;
    ASSERT_LE(abs_end, file.size());
    EXPECT_TRUE(bytes.size() == abs_end - abs_begin &&
                memcmp(bytes.data(), file.data() + abs_begin, bytes.size()) == 0)
        << "streamed bytes differ from the file's bytes at [" << abs_begin << ", " << abs_end
        << ")";
  }
  EXPECT_EQ(run.data_size, data_end);

  // Metadata: compared as a map (the reference's key order is a hash map's).
  const Json& meta = expect.at("metadata");
  if (meta.is_null()) {
    EXPECT_FALSE(run.has_metadata);
    EXPECT_TRUE(run.metadata.empty());
  } else {
    EXPECT_TRUE(run.has_metadata);
    std::vector<std::pair<std::string, std::string>> want, got = run.metadata;
    for (const auto& m : meta.members) want.emplace_back(m.first, m.second.str());
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(printable(got[i].first), printable(want[i].first));
      EXPECT_EQ(printable(got[i].second), printable(want[i].second));
    }
  }
}

RunResult expect_outcome(const std::vector<uint8_t>& file, const RunOptions& options,
                         const std::string& expected) {
  RunResult first;
  bool have_first = false;
  for (const Chunking& chunking : standard_chunkings()) {
    RunResult r = run_reader(file.data(), file.size(), chunking, options);
    for (const std::string& v : r.violations)
      ADD_FAILURE() << "chunking " << chunking.name() << ": stream protocol: " << v;
    EXPECT_EQ(r.summary(), expected) << "chunking " << chunking.name();
    if (!have_first) {
      first = r;
      have_first = true;
    }
  }
  return first;
}

}  // namespace wstest
