// The library's one sort routine: exact order for indices and for 24-byte records, every size up
// to a few hundred (heap shapes), duplicates broken by the caller's tie-breaker.
#include "weightstream/detail/heap_sort.h"

#include <gtest/gtest.h>

#include <stdint.h>

#include <algorithm>
#include <random>
#include <vector>

#include "weightstream/tensor_table.h"

namespace {

bool u32_less(const void* a, const void* b, const void*) {
  return *static_cast<const uint32_t*>(a) < *static_cast<const uint32_t*>(b);
}

// Sorts by key[i], ties by index: the order the duplicate finder uses.
bool by_key_then_index(const void* pa, const void* pb, const void* ctx) {
  const uint32_t* key = static_cast<const uint32_t*>(ctx);
  uint32_t a = *static_cast<const uint32_t*>(pa), b = *static_cast<const uint32_t*>(pb);
  if (key[a] != key[b]) return key[a] < key[b];
  return a < b;
}

bool record_less(const void* pa, const void* pb, const void*) {
  const ws::TensorRecord& a = *static_cast<const ws::TensorRecord*>(pa);
  const ws::TensorRecord& b = *static_cast<const ws::TensorRecord*>(pb);
  if (a.begin != b.begin) return a.begin < b.begin;
  return a.blob < b.blob;
}

}  // namespace

TEST(HeapSort, EverySizeAgreesWithStdSort) {
  std::mt19937 rng(7);
  for (uint32_t n = 0; n <= 300; ++n) {
    std::vector<uint32_t> v(n);
    for (auto& x : v) x = rng() % 50;  // many equal values
    std::vector<uint32_t> want = v;
    std::sort(want.begin(), want.end());
    ws::detail::heap_sort(v.data(), n, sizeof(uint32_t), u32_less, nullptr);
    ASSERT_EQ(v, want) << n;
  }
}

TEST(HeapSort, IndicesByKeyThenIndex) {
  const uint32_t key[] = {5, 1, 5, 0, 1, 5};
  std::vector<uint32_t> idx = {0, 1, 2, 3, 4, 5};
  ws::detail::heap_sort(idx.data(), idx.size(), sizeof(uint32_t), by_key_then_index, key);
  EXPECT_EQ(idx, (std::vector<uint32_t>{3, 1, 4, 0, 2, 5}));
}

TEST(HeapSort, RecordsMoveWhole) {
  std::vector<ws::TensorRecord> r = {{30, 40, 3, 300}, {0, 10, 1, 100}, {10, 30, 2, 200}, {0, 0, 0, 7}};
  ws::detail::heap_sort(r.data(), r.size(), sizeof(ws::TensorRecord), record_less, nullptr);
  const uint64_t begin[] = {0, 0, 10, 30}, end[] = {0, 10, 30, 40};
  const uint32_t blob[] = {0, 1, 2, 3}, pos[] = {7, 100, 200, 300};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].begin, begin[i]) << i;
    EXPECT_EQ(r[i].end, end[i]) << i;
    EXPECT_EQ(r[i].blob, blob[i]) << i;
    EXPECT_EQ(r[i].header_pos, pos[i]) << i;
  }
}
