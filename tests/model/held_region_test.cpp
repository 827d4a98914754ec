// The sequential stream's held region (lib/src/model/held_region.h) alone: blocks at the top in
// address order, rounding to 8, a freed top block given back at once, others at compaction, which
// moves live blocks down with their bytes and keeps the weight -> block map true; refusal when
// even compacted there is no room or no block entry.
#include <gtest/gtest.h>
#include <string.h>

#include <vector>

#include "../../lib/src/model/held_region.h"

namespace {

struct Fixture {
  alignas(8) uint8_t bytes[64] = {};
  ws::HeldBlock blocks[4] = {};
  uint32_t block_of[8] = {};
  ws::HeldRegion r;
  Fixture(uint32_t block_cap = 4) { r.init(bytes, sizeof bytes, blocks, block_cap, block_of); }
};

TEST(HeldRegion, AllocatesAtTheTopRoundedTo8) {
  Fixture f;
  EXPECT_FALSE(f.r.holds(1));
  uint8_t* a = f.r.hold(1, 5);
  ASSERT_EQ(a, f.bytes);
  uint8_t* b = f.r.hold(2, 16);
  ASSERT_EQ(b, f.bytes + 8);
  EXPECT_EQ(f.r.top(), 24u);
  EXPECT_EQ(f.r.blocks(), 2u);
  EXPECT_TRUE(f.r.holds(1));
  EXPECT_EQ(f.r.of(2), f.bytes + 8);
  EXPECT_EQ(f.block_of[2], 2u);
}

TEST(HeldRegion, FreedTopGoesAtOnceOthersAtCompaction) {
  Fixture f;
  f.r.hold(1, 8);
  f.r.hold(2, 8);
  f.r.hold(3, 8);
  f.r.release(2);  // not the top: its entry waits
  EXPECT_FALSE(f.r.holds(2));
  EXPECT_EQ(f.r.top(), 24u);
  EXPECT_EQ(f.r.blocks(), 3u);
  f.r.release(3);  // the top, and the freed 2 below it, go at once
  EXPECT_EQ(f.r.top(), 8u);
  EXPECT_EQ(f.r.blocks(), 1u);
}

TEST(HeldRegion, CompactionMovesLiveBytesDown) {
  Fixture f;
  memset(f.r.hold(1, 16), 0xA1, 16);
  memset(f.r.hold(2, 16), 0xB2, 16);
  memset(f.r.hold(3, 16), 0xC3, 16);
  f.r.release(1);
  f.r.release(2);
  EXPECT_EQ(f.r.top(), 48u);
  // 32 bytes: not at the top (16 left), so the region compacts: 3 moves to 0, the new block to 16.
  uint8_t* d = f.r.hold(4, 32);
  ASSERT_EQ(d, f.bytes + 16);
  ASSERT_EQ(f.r.of(3), f.bytes);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(f.r.of(3)[i], 0xC3) << i;
  EXPECT_EQ(f.block_of[3], 1u);
  EXPECT_EQ(f.block_of[4], 2u);
  EXPECT_EQ(f.r.top(), 48u);
}

TEST(HeldRegion, RefusesWhenNothingFits) {
  Fixture f;
  ASSERT_NE(f.r.hold(1, 40), nullptr);
  EXPECT_EQ(f.r.hold(2, 32), nullptr);  // 24 free, compacted or not
  EXPECT_FALSE(f.r.holds(2));
  EXPECT_NE(f.r.hold(2, 24), nullptr);
  EXPECT_EQ(f.r.top(), 64u);
  Fixture g(2);  // two block entries
  ASSERT_NE(g.r.hold(1, 8), nullptr);
  ASSERT_NE(g.r.hold(2, 8), nullptr);
  EXPECT_EQ(g.r.hold(3, 8), nullptr);  // no entry left, none freed
  g.r.release(1);
  EXPECT_NE(g.r.hold(3, 8), nullptr);  // compaction gives the freed entry back
  EXPECT_EQ(g.r.of(2), g.bytes);
  EXPECT_EQ(g.r.of(3), g.bytes + 8);
}

}  // namespace
