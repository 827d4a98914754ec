// weightstream — finds a repeated name among n names, in arena scratch, in linear expected time.
//
// Open addressing over a power-of-two table of u32 slots. Names come from the input, so a hostile
// file could aim for hash collisions: the probe count is bounded, and past the bound the same
// scratch is reused to sort the indices by name instead (n log n, never quadratic).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>

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
  uint64_t w = 0;
  memcpy(&w, p, n);
  h = (h ^ w) * 0x94D049BB133111EBull;
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

// `probes_per_name` bounds the hash pass's work; tests pass 0 to exercise the sort path.
template <class NameFn>
uint32_t find_duplicate(uint32_t n, NameFn name, uint32_t* scratch, uint64_t seed,
                        uint64_t probes_per_name = 16) {
  size_t slots = duplicate_table_slots(n);
  size_t mask = slots - 1;
  memset(scratch, 0, slots * sizeof(uint32_t));
  // A slot holds index + 1 in its low bits and, in the bits the index does not need, a
  // fingerprint of the hash: most collisions are told apart without reading the other name.
  unsigned index_bits = 1;
  while (index_bits < 32 && (uint64_t(1) << index_bits) <= n) ++index_bits;
  const uint32_t index_mask = index_bits >= 32 ? 0xFFFFFFFFu : (uint32_t(1) << index_bits) - 1;
  uint64_t probes = 0;
  const uint64_t probe_budget = probes_per_name ? uint64_t(n) * probes_per_name + 1024 : 0;
  if (probe_budget == 0) goto sort_instead;
  {
    // Hashes are computed a few names ahead so the table slot can be prefetched.
    constexpr uint32_t kAhead = 8;
    uint64_t ring[kAhead];
    for (uint32_t k = 0; k < kAhead && k < n; ++k) {
      StrView s = name(k);
      ring[k] = hash_bytes(s.data, s.size, seed);
      __builtin_prefetch(&scratch[size_t(ring[k]) & mask]);
    }
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t hash = ring[i % kAhead];
      if (i + kAhead < n) {
        StrView a = name(i + kAhead);
        uint64_t ha = hash_bytes(a.data, a.size, seed);
        ring[(i + kAhead) % kAhead] = ha;
        __builtin_prefetch(&scratch[size_t(ha) & mask]);
      }
      const uint32_t tag = uint32_t(hash >> 32) & ~index_mask;
      size_t h = size_t(hash) & mask;
      StrView s = name(i);
      for (;;) {
        uint32_t slot = scratch[h];
        if (slot == 0) {
          scratch[h] = tag | (i + 1);
          break;
        }
        if ((slot & ~index_mask) == tag) {
          StrView o = name((slot & index_mask) - 1);
          if (o.size == s.size && (s.size == 0 || memcmp(o.data, s.data, s.size) == 0)) return i;
        }
        h = (h + 1) & mask;
        if (++probes > probe_budget) goto sort_instead;
      }
    }
  }
  return kNoDuplicate;

sort_instead : {
  // Colliding input: sort indices by (name, index) and look at neighbours.
  for (uint32_t i = 0; i < n; ++i) scratch[i] = i;
  std::sort(scratch, scratch + n, [&](uint32_t a, uint32_t b) {
    StrView x = name(a), y = name(b);
    size_t m = x.size < y.size ? x.size : y.size;
    int c = m ? memcmp(x.data, y.data, m) : 0;
    if (c != 0) return c < 0;
    if (x.size != y.size) return x.size < y.size;
    return a < b;
  });
  uint32_t best = kNoDuplicate;
  for (uint32_t k = 1; k < n; ++k) {
    StrView x = name(scratch[k - 1]), y = name(scratch[k]);
    if (x.size == y.size && (x.size == 0 || memcmp(x.data, y.data, x.size) == 0) && scratch[k] < best)
      best = scratch[k];
  }
  return best;
}
}

}  // namespace detail
}  // namespace ws
