// Findings of the fuzz targets (tests/corpus/fuzz/expected.json), replayed: each was a library
// bug, fixed; these keep them fixed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "weightstream/dequant.h"
#include "weightstream/reader.h"

namespace {

std::vector<uint8_t> load(const std::string& name) {
  std::ifstream f(std::string(WS_TESTS_DIR) + "/corpus/fuzz/" + name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Reads `in` whole with an arena of `arena_size` bytes; returns the verdict and arena_needed().
ws::Error run(const std::vector<uint8_t>& in, size_t arena_size, size_t* needed) {
  std::vector<uint64_t> arena((arena_size + 7) / 8 + 1);
  ws::Reader r(arena.data(), arena_size);
  bool fed = false;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (!fed) r.feed(in.data(), in.size()), fed = true;
      else r.finish();
    } else if (e.type == ws::EventType::End || e.type == ws::EventType::Error) {
      *needed = r.arena_needed();
      return r.error();
    }
  }
}

// fuzz_gguf: a GGUF sizing pass under-reported arena_needed() (the duplicate-key check's scratch
// was not counted), so retrying with the reported size ran out again.
TEST(FuzzRegressions, GgufArenaNeededSuffices) {
  std::vector<uint8_t> in = load("gguf_arena_needed_underreported.gguf");
  ASSERT_FALSE(in.empty());
  for (size_t start : {size_t(0), size_t(10), size_t(24), size_t(64)}) {
    size_t needed = 0;
    ws::Error e = run(in, start, &needed);
    if (e.code != ws::Status::ArenaExhausted) continue;
    size_t again = 0;
    ws::Error retry = run(in, needed, &again);
    EXPECT_EQ(retry.code, ws::Status::TrailingBytes) << "arena " << start << " said " << needed;
    EXPECT_EQ(retry.offset, 128u);
  }
}

// fuzz_dequant: a zero-element tensor decoded in one shot asked for output room it never needed.
TEST(FuzzRegressions, ZeroElementTensorDecodesToNothing) {
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::Q1_0;
  spec.elements = 0;
  ws::Error err;
  EXPECT_EQ(ws::dequantize(spec, nullptr, 0, nullptr, 0, &err), ws::Status::Ok);
  ws::Dequantizer d;
  ASSERT_EQ(d.init(spec), ws::Status::Ok);
  size_t used = 1, written = 1;
  EXPECT_EQ(d.decode(nullptr, 0, &used, nullptr, 0, &written), ws::Status::Ok);
  EXPECT_EQ(used, 0u);
  EXPECT_EQ(written, 0u);
  EXPECT_TRUE(d.done());
}

}  // namespace
