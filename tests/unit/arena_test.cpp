// The two-ended arena: both ends meet without overlap, and exhaustion turns into counting.
#include "weightstream/detail/arena.h"

#include <gtest/gtest.h>

using ws::detail::Arena;

TEST(Arena, BothEndsShareTheSpace) {
  alignas(8) uint8_t mem[64];
  Arena a;
  a.init(mem, sizeof mem);
  uint8_t* low = a.grow_low(10);
  ASSERT_EQ(low, mem);
  void* high = a.grow_high(24);
  ASSERT_EQ(high, mem + 40);
  EXPECT_EQ(a.used(), 34u);
  EXPECT_NE(a.grow_low(30), nullptr);  // exactly fills 64
  EXPECT_EQ(a.used(), 64u);
  EXPECT_FALSE(a.counting());
  EXPECT_EQ(a.grow_low(1), nullptr);
  EXPECT_TRUE(a.counting());
  EXPECT_EQ(a.grow_high(8), nullptr);
  EXPECT_EQ(a.needed(), 73u);
  EXPECT_EQ(a.peak(), 64u);
}

TEST(Arena, MisalignedBaseIsAligned) {
  alignas(8) uint8_t mem[40];
  Arena a;
  a.init(mem + 3, 37);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.base()) % 8, 0u);
  EXPECT_EQ(a.size(), 32u);
}

TEST(Arena, RewindReleases) {
  alignas(8) uint8_t mem[32];
  Arena a;
  a.init(mem, sizeof mem);
  a.grow_low(8);
  size_t mark = a.low(), need = a.need_low();
  a.grow_low(16);
  a.rewind_low(mark, need);
  EXPECT_EQ(a.low(), 8u);
  EXPECT_EQ(a.needed(), 8u);
  EXPECT_EQ(a.peak(), 24u);
  a.note_scratch(100);
  EXPECT_EQ(a.peak_needed(), 112u);  // 108, rounded up to the 8-byte granularity
}

TEST(Arena, ZeroSizeArenaCountsEverything) {
  Arena a;
  a.init(nullptr, 0);
  EXPECT_EQ(a.grow_low(5), nullptr);
  EXPECT_EQ(a.grow_high(8), nullptr);
  EXPECT_EQ(a.needed(), 13u);
}
