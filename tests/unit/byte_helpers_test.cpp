// The word-at-a-time helpers that stand in for variable-size memcpy and 128-bit multiplies
// (detail/bytes.h, detail/checked_mul.h): each against the plain operation it replaces.
#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <vector>

#include "weightstream/detail/bytes.h"
#include "weightstream/detail/checked_mul.h"

namespace {

TEST(ByteHelpers, LoadTailIsMemcpyIntoZeroedWord) {
  const char src[8] = {'\x01', '\x82', '\x03', '\xF4', '\x05', '\x06', '\x77', '\x08'};
  for (size_t n = 0; n < 8; ++n) {
    uint64_t want = 0;
    memcpy(&want, src, n);
    EXPECT_EQ(ws::detail::load_tail(src, n), want) << "n=" << n;
  }
  EXPECT_EQ(ws::detail::load_tail(nullptr, 0), 0u);
}

TEST(ByteHelpers, CopyShortWritesExactlyTheRun) {
  std::vector<uint8_t> src(200);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 37 + 11);
  for (size_t n = 0; n <= 130; ++n) {
    std::vector<uint8_t> dst(n + 32, 0xAA);
    ws::detail::copy_short(dst.data() + 16, src.data() + 3, n);
    for (size_t i = 0; i < 16; ++i) ASSERT_EQ(dst[i], 0xAA) << "before, n=" << n;
    ASSERT_EQ(memcmp(dst.data() + 16, src.data() + 3, n), 0) << "n=" << n;
    for (size_t i = 16 + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xAA) << "after, n=" << n;
  }
}

TEST(ByteHelpers, MulOverflowMatchesTheBuiltin) {
  const uint64_t v[] = {0,
                        1,
                        2,
                        3,
                        0xFFFFFFFFull,
                        0x100000000ull,
                        0x100000001ull,
                        0xFFFFFFFFFFFFFFFFull,
                        0x8000000000000000ull,
                        129280ull * 7168,
                        1ull << 31,
                        (1ull << 31) + 1,
                        0x123456789ull};
  for (uint64_t a : v)
    for (uint64_t b : v) {
      uint64_t got = 7, want = 9;
      const bool o = ws::detail::mul_overflow_u64(a, b, &got);
      const bool w = __builtin_mul_overflow(a, b, &want);
      EXPECT_EQ(o, w) << a << " * " << b;
      if (!w) {
        EXPECT_EQ(got, want) << a << " * " << b;
      }
    }
}

}  // namespace
