// Heap sort over fixed-size items through a comparison function: see detail/heap_sort.h.
#include "weightstream/detail/heap_sort.h"

#include <stdint.h>
#include <string.h>

namespace ws {
namespace detail {

namespace {

// Items are whole 32-bit words (indices, TensorRecords): swap word by word.
void swap_items(uint8_t* a, uint8_t* b, size_t size) {
  for (size_t k = 0; k < size; k += 4) {
    uint32_t x, y;
    memcpy(&x, a + k, 4);
    memcpy(&y, b + k, 4);
    memcpy(a + k, &y, 4);
    memcpy(b + k, &x, 4);
  }
}

// Restores the max-heap property below `root` in the first n items.
void sift_down(uint8_t* v, size_t root, size_t n, size_t size, ItemLess less, const void* ctx) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && less(v + child * size, v + (child + 1) * size, ctx)) ++child;
    if (!less(v + root * size, v + child * size, ctx)) return;
    swap_items(v + root * size, v + child * size, size);
    root = child;
  }
}

}  // namespace

void heap_sort(void* items, size_t n, size_t size, ItemLess less, const void* ctx) {
  uint8_t* v = static_cast<uint8_t*>(items);
  if (n < 2) return;
  for (size_t i = n / 2; i-- > 0;) sift_down(v, i, n, size, less, ctx);
  for (size_t end = n - 1; end > 0; --end) {
    swap_items(v, v + end * size, size);
    sift_down(v, 0, end, size, less, ctx);
  }
}

}  // namespace detail
}  // namespace ws
