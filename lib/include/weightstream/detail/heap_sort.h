// weightstream — one sort routine for the whole library: heap sort over fixed-size items.
//
// Not a template, so every caller shares one copy of the code (a microcontroller build counts
// every std::sort instantiation, ~0.5-0.9 KB each). Heap sort because it is in place, needs no
// recursion or scratch, and is n log n on any input, hostile ones included. It is not stable:
// callers give it a strict total order (ties broken by an index), so the result is the one order
// that exists, whichever algorithm produced it.
#pragma once

#include <stddef.h>

namespace ws {
namespace detail {

// Strict weak order over two items (pointers into the array); `ctx` is the caller's state.
using ItemLess = bool (*)(const void* a, const void* b, const void* ctx);

// Sorts n items of `size` bytes each (a multiple of 4; items 4-byte aligned) ascending.
void heap_sort(void* items, size_t n, size_t size, ItemLess less, const void* ctx);

}  // namespace detail
}  // namespace ws
