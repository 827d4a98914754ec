// Duplicate detection: the hash path and the sort fallback give the same answer.
#include "weightstream/detail/duplicate_finder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using ws::StrView;
using ws::detail::find_duplicate;
using ws::detail::kNoDuplicate;

namespace {

uint32_t run(const std::vector<std::string>& names, uint64_t seed, uint64_t probes = 16) {
  std::vector<uint32_t> scratch(ws::detail::duplicate_table_slots(uint32_t(names.size())));
  auto name = [&](uint32_t i) {
    StrView s;
    s.data = names[i].data();
    s.size = names[i].size();
    return s;
  };
  return find_duplicate(uint32_t(names.size()), name, scratch.data(), seed, probes);
}

TEST(DuplicateFinder, FindsTheFirstRepeat) {
  EXPECT_EQ(run({"a", "b", "c"}, 1), kNoDuplicate);
  EXPECT_EQ(run({"a", "b", "a", "b"}, 1), 2u);
  EXPECT_EQ(run({"x", "", "y", ""}, 7), 3u);
  EXPECT_EQ(run({}, 1), kNoDuplicate);
  EXPECT_EQ(run({"same-prefix-long-name-1", "same-prefix-long-name-2"}, 3), kNoDuplicate);
}

TEST(DuplicateFinder, ManyNamesAcrossSeeds) {
  std::vector<std::string> names;
  for (int i = 0; i < 20000; ++i) names.push_back("model.layers." + std::to_string(i) + ".weight");
  for (uint64_t seed : {0ull, 1ull, 0xDEADBEEFull}) EXPECT_EQ(run(names, seed), kNoDuplicate);
  names.push_back("model.layers.123.weight");
  EXPECT_EQ(run(names, 5), 20000u);
}

}  // namespace

TEST(DuplicateFinder, SortFallbackAgrees) {
  const std::vector<std::vector<std::string>> cases = {
      {"a", "b", "c"}, {"a", "b", "a", "b"}, {"x", "", "y", ""}, {"q", "r", "r", "q", "r"}, {}};
  for (const auto& names : cases) EXPECT_EQ(run(names, 1, 0), run(names, 1)) << names.size();
}

// The sort fallback over many names: the smallest later index of any repeated name, as the hash
// pass reports it.
TEST(DuplicateFinder, SortFallbackManyNames) {
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("blk." + std::to_string((i * 7919) % 3000) + ".w");
  EXPECT_EQ(run(names, 1, 0), kNoDuplicate);
  names.push_back("blk.17.w");    // index 3000 repeats an earlier name
  names.push_back("blk.2999.w");  // index 3001 too
  names.push_back("blk.17.w");    // index 3002
  EXPECT_EQ(run(names, 1, 0), 3000u);
  EXPECT_EQ(run(names, 1), 3000u);
}
