// Whole-table checks on large tables: duplicate names and offset holes among thousands of tensors
// listed out of data order, under arenas from "just enough" to roomy (the duplicate check may take
// a different path when space is short), and near-identical names that must not be confused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "expect_table.h"
#include "harness.h"

namespace wstest {
namespace {

// n U8[4] tensors named t<i>, tensor i at data [4i, 4i+4), listed in reverse data order.
// `edit(i, &name, &begin)` may rename or move one.
template <typename Edit>
std::string reversed_table(int n, Edit edit) {
  std::string h = "{";
  for (int i = n - 1; i >= 0; --i) {
    std::string name = "t" + std::to_string(i);
    uint64_t begin = 4 * uint64_t(i);
    edit(i, &name, &begin);
    if (h.size() > 1) h += ",";
    h += entry_json(name, "U8", "4", begin, begin + 4);
  }
  return h + "}";
}

// The verdict for every arena size from the least that lets parsing finish up to a roomy one.
void expect_under_every_arena(const std::vector<uint8_t>& f, const std::string& expected) {
  RunOptions tiny;
  tiny.arena_size = 64;
  RunResult counted = run_reader(f.data(), f.size(), Chunking::whole(), tiny);
  ASSERT_EQ(counted.status_name(), "ArenaExhausted");
  size_t need = (counted.arena_needed + 7) / 8 * 8;  // arena sizes are used in multiples of 8
  for (size_t size : {need, need + 8, need + 64, need + 1000, 2 * need, size_t(32) << 20}) {
    RunOptions o;
    o.arena_size = size;
    for (const Chunking& c : {Chunking::whole(), Chunking::random(7)}) {
      RunResult r = run_reader(f.data(), f.size(), c, o);
      EXPECT_EQ(r.summary(), expected) << "arena " << size << " (arena_needed() said "
                                       << counted.arena_needed << "), chunking " << c.name();
    }
  }
}

// Absolute offset of the k-th key `name` in a header.
uint64_t key_offset(const std::string& h, const std::string& name, int k = 1) {
  size_t pos = find_nth(h, "\"" + name + "\":", k);
  EXPECT_NE(pos, std::string::npos) << name;
  return 8 + pos;
}

TEST(TableChecks, DuplicateAmongThousands) {
  // Tensor 1234 is renamed t77: t77 then appears twice; in header order (reversed) the renamed
  // entry comes first, the original t77 second.
  std::string h = reversed_table(3000, [](int i, std::string* name, uint64_t*) {
    if (i == 1234) *name = "t77";
  });
  auto f = make_safetensors(h, pattern_bytes(4 * 3000));
  expect_under_every_arena(f, "DuplicateTensorName@" + std::to_string(key_offset(h, "t77", 2)) +
                                  "[\"t77\"]");
}

TEST(TableChecks, HoleAmongThousands) {
  // Tensors 1500.. move up by 4 bytes: a hole [6000, 6004) before t1500.
  std::string h = reversed_table(3000, [](int i, std::string*, uint64_t* begin) {
    if (i >= 1500) *begin += 4;
  });
  auto f = make_safetensors(h, pattern_bytes(4 * 3000 + 4));
  expect_under_every_arena(f, "DataOffsetGap@" + std::to_string(key_offset(h, "t1500")) +
                                  "[\"t1500\"]");
}

TEST(TableChecks, OverlapAmongThousands) {
  // t2000 starts 2 bytes early: it overlaps t1999.
  std::string h = reversed_table(3000, [](int i, std::string*, uint64_t* begin) {
    if (i == 2000) *begin -= 2;
  });
  auto f = make_safetensors(h, pattern_bytes(4 * 3000));
  expect_under_every_arena(f, "DataOffsetOverlap@" + std::to_string(key_offset(h, "t2000")) +
                                  "[\"t2000\"]");
}

TEST(TableChecks, NearIdenticalNamesAreDistinct) {
  // Long names differing only in their last byte, only in their first byte, by a NUL, and names
  // that are prefixes of one another: all distinct, so the file is valid.
  std::vector<std::string> names;
  std::string long_prefix(1000, '_');  // not a letter: the two families never meet
  for (char ch = 'a'; ch <= 'z'; ++ch) names.push_back(long_prefix + ch);
  for (char ch = 'a'; ch <= 'z'; ++ch) names.push_back(std::string(1, ch) + long_prefix);
  names.push_back("n\\u0000a");
  names.push_back("n\\u0000b");
  names.push_back("n");
  for (int len = 1; len <= 40; ++len) names.push_back(std::string(size_t(len), 'q'));
  std::string h = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) h += ",";
    h += entry_json(names[i], "U8", "1", i, i + 1);
  }
  h += "}";
  auto f = make_safetensors(h, pattern_bytes(names.size()));
  expect_under_every_arena(f, "Ok(End@" + std::to_string(f.size()) + ")");
}

}  // namespace
}  // namespace wstest
