// Sharded models: model.safetensors.index.json read by ws::ShardIndex and cross-checked against
// three small shards built here. Every failure code of the index and of the cross-checks must
// come out, naming the right tensor, and feeding the index 1 byte at a time must not change it.
#include <gtest/gtest.h>

#include <string.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "weightstream/shard_index.h"

namespace wstest {
namespace {

const char* kShard1 = "model-00001-of-00003.safetensors";
const char* kShard2 = "model-00002-of-00003.safetensors";
const char* kShard3 = "model-00003-of-00003.safetensors";

struct Shard {
  std::string file;
  std::string header;
  std::vector<uint8_t> bytes;
};

Shard shard(const char* file, const std::string& header, size_t data) {
  return Shard{file, header, make_safetensors(header, pattern_bytes(data))};
}

// a F32[2] and b U8[3] | c BF16[4] | d I64 scalar and e U8[0]: 8 + 3 + 8 + 8 + 0 = 27 bytes.
std::vector<Shard> three_shards() {
  return {shard(kShard1,
                "{" + entry_json("a", "F32", "2", 0, 8) + "," + entry_json("b", "U8", "3", 8, 11) +
                    "}",
                11),
          shard(kShard2, "{" + entry_json("c", "BF16", "4", 0, 8) + "}", 8),
          shard(kShard3,
                "{\"__metadata__\":{\"format\":\"pt\"}," + entry_json("d", "I64", "", 0, 8) + "," +
                    entry_json("e", "U8", "0", 8, 8) + "}",
                8)};
}

// An index: `total_size` as raw JSON text (empty: no metadata), then name → shard pairs.
std::string index_json(const std::string& total_size,
                       const std::vector<std::pair<std::string, std::string>>& map) {
  std::string j = "{";
  if (!total_size.empty()) j += "\"metadata\":{\"format\":\"pt\",\"total_size\":" + total_size + "},";
  j += "\"weight_map\":{";
  for (size_t i = 0; i < map.size(); ++i)
    j += (i ? ",\"" : "\"") + map[i].first + "\":\"" + map[i].second + "\"";
  return j + "}}";
}

const std::vector<std::pair<std::string, std::string>> kMap = {
    {"a", kShard1}, {"b", kShard1}, {"c", kShard2}, {"d", kShard3}, {"e", kShard3}};

// Where checking stopped and why.
struct Outcome {
  std::string stage = "done";  // "index", "shard <file>", "finish_checks" or "done"
  ws::Status status = ws::Status::Ok;
  uint64_t offset = 0;
  std::string tensor;  // empty: no tensor named
  bool named = false;
  // "stage: Status@offset[tensor]"; the offset as "*" where the API leaves it unspecified.
  std::string str(bool with_offset = true) const {
    std::string s = stage + ": " + ws::status_name(status);
    if (status != ws::Status::Ok) s += "@" + (with_offset ? std::to_string(offset) : "*");
    if (named) s += "[" + printable(tensor) + "]";
    return s;
  }
};

struct Checker {
  std::vector<uint64_t> arena = std::vector<uint64_t>(1 << 14);
  std::unique_ptr<ws::ShardIndex> index;
  Checker() { index.reset(new ws::ShardIndex(arena.data(), arena.size() * 8)); }

  Outcome fail(const std::string& stage, ws::Status s) {
    Outcome o;
    o.stage = stage;
    o.status = s;
    const ws::Error& e = index->error();
    o.offset = e.offset;
    if (e.tensor_name) {
      o.named = true;
      o.tensor.assign(e.tensor_name, size_t(e.tensor_name_size));
    }
    return o;
  }

  // Feeds the index in pieces of `piece` bytes (0: whole), then checks `order` of shards.
  Outcome run(const std::string& json, size_t piece, const std::vector<Shard>& shards,
              const std::vector<int>& order) {
    for (size_t at = 0; at < json.size();) {
      size_t n = piece ? std::min(piece, json.size() - at) : json.size();
      ws::Status s = index->feed(json.data() + at, n);
      if (s != ws::Status::Ok) return fail("index", s);
      at += n;
    }
    ws::Status s = index->finish();
    if (s != ws::Status::Ok) return fail("index", s);
    for (int i : order) {
      const Shard& sh = shards[size_t(i)];
      std::vector<uint64_t> shard_arena(1 << 12);
      ws::Reader r(shard_arena.data(), shard_arena.size() * 8);
      r.feed(sh.bytes.data(), sh.bytes.size());
      ws::Event e;
      while ((e = r.next()).type != ws::EventType::HeaderReady) {
        EXPECT_NE(e.type, ws::EventType::Error) << "shard " << sh.file << " does not parse";
        if (e.type == ws::EventType::Error) return Outcome();
      }
      s = index->check_shard(sh.file.data(), sh.file.size(), r.tensors());
      if (s != ws::Status::Ok) return fail("shard " + sh.file, s);
    }
    s = index->finish_checks();
    if (s != ws::Status::Ok) return fail("finish_checks", s);
    return Outcome();
  }
};

// Runs a scenario with the index fed whole and 1 byte at a time; both must give `expected`
// (written with "@*" where the offset is not specified: an unknown shard file, an index entry
// that no shard held).
void expect_scenario(const std::string& json, const std::vector<Shard>& shards,
                     const std::vector<int>& order, const std::string& expected) {
  bool with_offset = expected.find("@*") == std::string::npos;
  for (size_t piece : {size_t(0), size_t(1)}) {
    Checker c;
    EXPECT_EQ(c.run(json, piece, shards, order).str(with_offset), expected)
        << "index fed " << (piece ? "1 byte at a time" : "whole");
  }
}

uint64_t offset_in(const std::string& text, const std::string& needle, int k = 1) {
  size_t pos = find_nth(text, needle, k);
  EXPECT_NE(pos, std::string::npos) << needle;
  return pos;
}

TEST(ShardIndex, ValidIndexAndShards) {
  std::vector<Shard> shards = three_shards();
  std::string json = index_json("27", kMap);
  for (size_t piece : {size_t(0), size_t(1), size_t(7)}) {
    Checker c;
    EXPECT_EQ(c.run(json, piece, shards, {0, 1, 2}).str(), "done: Ok");
    const ws::ShardIndex& idx = *c.index;
    EXPECT_EQ(idx.tensor_count(), 5u);
    EXPECT_EQ(idx.shard_count(), 3u);
    EXPECT_TRUE(idx.shard_name(0).equals(kShard1));
    EXPECT_TRUE(idx.shard_name(1).equals(kShard2));
    EXPECT_TRUE(idx.shard_name(2).equals(kShard3));
    EXPECT_TRUE(idx.tensor_name(3).equals("d"));
    EXPECT_EQ(idx.tensor_shard(3), 2u);
    EXPECT_EQ(idx.find_tensor("c", 1), 2u);
    EXPECT_EQ(idx.find_tensor("x", 1), ws::kNoTensor);
    EXPECT_EQ(idx.find_shard(kShard2, strlen(kShard2)), 1u);
    EXPECT_EQ(idx.find_shard("model.safetensors", 17), ws::kNoTensor);
    EXPECT_TRUE(idx.has_total_size());
    EXPECT_EQ(idx.total_size(), 27u);
    EXPECT_EQ(idx.checked_bytes(), 27u);
  }
  // Shards may be checked in any order; an index without metadata skips the size check.
  expect_scenario(json, shards, {2, 0, 1}, "done: Ok");
  expect_scenario(index_json("", kMap), shards, {0, 1, 2}, "done: Ok");
}

TEST(ShardIndex, MissingWeightMap) {
  // Known missing only when the input ends: reported at its end.
  std::string json = "{\"metadata\":{\"total_size\":27}}";
  expect_scenario(json, three_shards(), {},
                  "index: IndexMissingWeightMap@" + std::to_string(json.size()));
}

TEST(ShardIndex, InvalidWeightMap) {
  std::string arr = "{\"metadata\":{\"total_size\":27},\"weight_map\":[]}";
  expect_scenario(arr, three_shards(), {},
                  "index: IndexInvalidWeightMap@" + std::to_string(offset_in(arr, "[]")));
  std::string num = "{\"weight_map\":{\"a\":5}}";
  expect_scenario(num, three_shards(), {},
                  "index: IndexInvalidWeightMap@" + std::to_string(offset_in(num, "5")) +
                      "[\"a\"]");
}

TEST(ShardIndex, InvalidTotalSize) {
  for (const char* bad : {"\"27\"", "-1", "27.0", "null", "18446744073709551616"}) {
    std::string json = index_json(bad, kMap);
    expect_scenario(json, three_shards(), {},
                    "index: IndexInvalidTotalSize@" + std::to_string(offset_in(json, bad)));
  }
}

TEST(ShardIndex, DuplicateTensor) {
  auto map = kMap;
  map.push_back({"a", kShard2});
  std::string json = index_json("27", map);
  expect_scenario(json, three_shards(), {},
                  "index: IndexDuplicateTensor@" + std::to_string(offset_in(json, "\"a\"", 2)) +
                      "[\"a\"]");
}

TEST(ShardIndex, UnknownShard) {
  std::vector<Shard> shards = three_shards();
  shards[1].file = "model-00004-of-00003.safetensors";
  expect_scenario(index_json("27", kMap), shards, {0, 1, 2},
                  "shard model-00004-of-00003.safetensors: IndexUnknownShard@*");
}

TEST(ShardIndex, ShardTensorNotInIndex) {
  auto map = kMap;
  map.erase(map.begin() + 1);  // no "b"
  std::vector<Shard> shards = three_shards();
  expect_scenario(index_json("24", map), shards, {0, 1, 2},
                  std::string("shard ") + kShard1 + ": ShardTensorNotInIndex@" +
                      std::to_string(8 + offset_in(shards[0].header, "\"b\"")) + "[\"b\"]");
}

TEST(ShardIndex, ShardTensorWrongShard) {
  auto map = kMap;
  map[2].second = kShard1;  // the index places c in shard 1; shard 2 holds it
  map[3].second = kShard2;  // (and d in shard 2, so that shard 2 is still a file of the index)
  std::vector<Shard> shards = three_shards();
  expect_scenario(index_json("27", map), shards, {0, 1, 2},
                  std::string("shard ") + kShard2 + ": ShardTensorWrongShard@" +
                      std::to_string(8 + offset_in(shards[1].header, "\"c\"")) + "[\"c\"]");
}

TEST(ShardIndex, ShardTensorMissing) {
  auto map = kMap;
  map.push_back({"f", kShard3});  // listed, held by no shard
  expect_scenario(index_json("27", map), three_shards(), {0, 1, 2},
                  "finish_checks: ShardTensorMissing@*[\"f\"]");
}

TEST(ShardIndex, ShardTensorDuplicate) {
  // The same shard checked twice: its first tensor (file order) was already seen.
  std::vector<Shard> shards = three_shards();
  expect_scenario(index_json("27", kMap), shards, {0, 1, 0},
                  std::string("shard ") + kShard1 + ": ShardTensorDuplicate@" +
                      std::to_string(8 + offset_in(shards[0].header, "\"a\"")) + "[\"a\"]");
}

TEST(ShardIndex, TotalSizeMismatch) {
  // Reported at the total_size value.
  std::string json = index_json("28", kMap);
  expect_scenario(json, three_shards(), {0, 1, 2},
                  "finish_checks: IndexTotalSizeMismatch@" + std::to_string(offset_in(json, "28")));
}

}  // namespace
}  // namespace wstest
