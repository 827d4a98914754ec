// weightstream — finds a repeated name among n names, in arena scratch, in linear expected time.
//
// Open addressing over a power-of-two table of u32 slots. Names come from the input, so a hostile
// file could aim for hash collisions: the probe count is bounded, and past the bound the same
// scratch is reused to sort the indices by name instead (heap sort: n log n, never quadratic).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "weightstream/detail/bytes.h"
#include "weightstream/tensor_table.h"

namespace ws {
namespace detail {

inline uint64_t hash_bytes(const char* p, size_t n, uint64_t seed) {
  uint64_t h = seed ^ (uint64_t(n) * 0x9E3779B97F4A7C15ull);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  h = (h ^ load_tail(p, n)) * 0x94D049BB133111EBull;
  h ^= h >> 29;
  return h;
}

// Slots for n names: a power of two with load factor <= 0.8.
inline size_t duplicate_table_slots(uint32_t n) {
  size_t want = size_t(n) + size_t(n) / 4 + 1;
  size_t slots = 1;
  while (slots < want) slots <<= 1;
  return slots;
}
inline size_t duplicate_table_bytes(uint32_t n) { return duplicate_table_slots(n) * sizeof(uint32_t); }

// `name(i)` returns the StrView of name i. `scratch` holds duplicate_table_bytes(n) bytes (4-byte
// aligned). Returns the index of a name equal to an earlier-indexed one — the smallest such later
// index when the hash pass finishes; kNoDuplicate when all are distinct.
constexpr uint32_t kNoDuplicate = 0xFFFFFFFFu;

// Name i as a StrView; `ctx` is the caller's state.
using NameAt = StrView (*)(const void* ctx, uint32_t i);

// `probes_per_name` bounds the hash pass's work; tests pass 0 to exercise the sort path.
// One out-of-line copy for every caller (lib/src/core/duplicate_finder.cpp): the names are reached
// through `name`, one indirect call per name, instead of a copy of the finder per kind of name.
uint32_t find_duplicate_at(uint32_t n, NameAt name, const void* ctx, uint32_t* scratch,
                           uint64_t seed, uint64_t probes_per_name = 16);

// The same with any callable `name(i)` -> StrView (a lambda over the caller's arrays).
template <class NameFn>
uint32_t find_duplicate(uint32_t n, const NameFn& name, uint32_t* scratch, uint64_t seed,
                        uint64_t probes_per_name = 16) {
  NameAt at = [](const void* ctx, uint32_t i) { return (*static_cast<const NameFn*>(ctx))(i); };
  return find_duplicate_at(n, at, &name, scratch, seed, probes_per_name);
}

}  // namespace detail
}  // namespace ws
