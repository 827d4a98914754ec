// Worst cases a hostile or merely huge file can present: the largest header the format allows,
// packed with tiny tensors; nesting far beyond the limit; very long names and metadata. The reader
// must stay linear, bounded in memory (the arena) and exact in what it reports.
#include <gtest/gtest.h>

#include <stdio.h>

#include <string>
#include <vector>

#include "expect_table.h"
#include "harness.h"

namespace wstest {
namespace {

// The largest header allowed (exactly 100,000,000 bytes) full of one-byte U8 tensors named
// t0000000, t0000001, ...: about 1.6 million entries.
struct HugeHeader {
  std::vector<uint8_t> file;
  uint32_t tensors = 0;
  uint64_t name_bytes = 0;
};

HugeHeader build_huge_header() {
  HugeHeader h;
  const uint64_t cap = ws::kMaxSafetensorsHeader;
  std::string header;
  header.reserve(cap);
  header += "{";
  char entry[128];
  for (uint32_t i = 0;; ++i) {
    int n = snprintf(entry, sizeof entry,
                     "%s\"t%07u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%u,%u]}",
                     i ? "," : "", i, i, i + 1);
    if (header.size() + size_t(n) + 1 > cap) break;
    header.append(entry, size_t(n));
    h.tensors = i + 1;
    h.name_bytes += 8;
  }
  header += "}";
  header.resize(cap, ' ');  // padded to exactly the cap, which is still allowed
  h.file = make_safetensors(header, pattern_bytes(h.tensors));
  return h;
}

TEST(WorstCase, LargestHeaderWithTinyTensorsStreamsInBoundedArena) {
  const HugeHeader h = build_huge_header();
  ASSERT_EQ(h.file.size(), 8 + ws::kMaxSafetensorsHeader + h.tensors);
  ASSERT_GT(h.tensors, 800000u);

  const uint64_t bound = h.name_bytes + 48ull * h.tensors;
  std::vector<uint64_t> arena(bound / 8 + 1);
  ws::Reader r(arena.data(), arena.size() * 8);
  const uint8_t* data = h.file.data();
  const size_t size = h.file.size(), piece = 1 << 16;
  const uint64_t data_start = 8 + ws::kMaxSafetensorsHeader;

  size_t fed = 0;
  uint32_t begun = 0, ended = 0, wrong_bytes = 0, wrong_offsets = 0;
  bool header_ready = false, end = false;
  for (uint64_t budget = 100 * uint64_t(h.tensors); budget > 0; --budget) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (fed == size) {
        r.finish();
      } else {
        size_t n = size - fed < piece ? size - fed : piece;
        r.feed(data + fed, n);
        fed += n;
      }
    } else if (e.type == ws::EventType::HeaderReady) {
      header_ready = true;
      EXPECT_EQ(r.tensor_count(), h.tensors);
      EXPECT_EQ(r.data_start(), data_start);
    } else if (e.type == ws::EventType::TensorBegin) {
      wrong_offsets += e.tensor != begun || e.offset != data_start + begun;
      ++begun;
    } else if (e.type == ws::EventType::TensorBytes) {
      // Tensor i is the single byte at data offset i.
      wrong_bytes += e.size != 1 || e.offset != data_start + e.tensor || e.data[0] != data[e.offset];
    } else if (e.type == ws::EventType::TensorEnd) {
      ++ended;
    } else {
      end = e.type == ws::EventType::End;
      break;
    }
  }
  ASSERT_TRUE(end) << ws::status_name(r.error().code) << " at " << r.error().offset;
  EXPECT_TRUE(header_ready);
  EXPECT_EQ(begun, h.tensors);
  EXPECT_EQ(ended, h.tensors);
  EXPECT_EQ(wrong_bytes, 0u);
  EXPECT_EQ(wrong_offsets, 0u);
  EXPECT_EQ(r.position(), size);
  // Spot checks of the table.
  for (uint32_t i : {0u, 1u, 12345u, h.tensors - 1}) {
    ws::TensorInfo t = r.tensor(i);
    char name[16];
    snprintf(name, sizeof name, "t%07u", i);
    EXPECT_TRUE(t.name.equals(name)) << i;
    EXPECT_EQ(t.begin, i);
    EXPECT_EQ(t.end, i + 1u);
  }
  EXPECT_LE(r.arena_peak(), bound) << "arena use exceeds name bytes + 48 per tensor ("
                                   << h.tensors << " tensors)";
}

TEST(WorstCase, NestingFarBeyondTheLimit) {
  // 200,000 nested arrays in an unknown field: the reader must stop at the first container past
  // the limit — the 128th open container, i.e. the 126th '[' (root object and entry are depths 1
  // and 2; see tests/corpus/README.md) — without recursing.
  const std::string prefix = "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":";
  std::string header = prefix + std::string(200000, '[') + std::string(200000, ']') + "}}";
  auto f = make_safetensors(header, pattern_bytes(1));
  expect_outcome(f, RunOptions(),
                 "NestingTooDeep@" + std::to_string(8 + prefix.size() + 125) + "[\"t\"]");
}

TEST(WorstCase, LongNameAndLongMetadataValue) {
  // FORMATS.md: the default caps accept names of 100,000 bytes (the reference does).
  std::string name(100000, 'n');
  std::string value(1 << 20, 'v');
  std::string header = "{\"__metadata__\":{\"big\":\"" + value + "\"}," +
                       entry_json(name, "U8", "3", 0, 3) + "}";
  auto f = make_safetensors(header, pattern_bytes(3));
  RunOptions o;
  o.arena_size = 4u << 20;
  RunResult r = expect_outcome(f, o, "Ok(End@" + std::to_string(f.size()) + ")");
  ASSERT_EQ(r.tensors.size(), 1u);
  EXPECT_EQ(r.tensors[0].name, name);
  ASSERT_EQ(r.metadata.size(), 1u);
  EXPECT_EQ(r.metadata[0].second, value);
}

}  // namespace
}  // namespace wstest
