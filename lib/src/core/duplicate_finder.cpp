// The duplicate-name finder: hash pass, and the sort fallback for colliding input. See
// detail/duplicate_finder.h.
#include "weightstream/detail/duplicate_finder.h"

#include "weightstream/detail/heap_sort.h"

namespace ws {
namespace detail {

namespace {

struct SortCtx {
  NameAt name;
  const void* ctx;
};

// (name, index): a total order, so the sorted array is the same whatever the sort algorithm.
bool name_index_less(const void* pa, const void* pb, const void* c) {
  const SortCtx* s = static_cast<const SortCtx*>(c);
  uint32_t a, b;
  memcpy(&a, pa, 4);
  memcpy(&b, pb, 4);
  StrView x = s->name(s->ctx, a), y = s->name(s->ctx, b);
  size_t m = x.size < y.size ? x.size : y.size;
  int cmp = m ? memcmp(x.data, y.data, m) : 0;
  if (cmp != 0) return cmp < 0;
  if (x.size != y.size) return x.size < y.size;
  return a < b;
}

bool same(StrView x, StrView y) {
  return x.size == y.size && (x.size == 0 || memcmp(x.data, y.data, x.size) == 0);
}

}  // namespace

uint32_t find_duplicate_at(uint32_t n, NameAt name, const void* ctx, uint32_t* scratch,
                           uint64_t seed, uint64_t probes_per_name) {
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
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    // M-profile (microcontrollers): names sit in on-chip SRAM with no data cache in front on
    // most cores, so prefetching hides nothing; no look-ahead is 80 bytes less code. Same table,
    // same answer.
    for (uint32_t i = 0; i < n; ++i) {
      StrView own = name(ctx, i);
      uint64_t hash = hash_bytes(own.data, own.size, seed);
#else
    // Hashes are computed a few names ahead so the table slot can be prefetched.
    constexpr uint32_t kAhead = 8;
    uint64_t ring[kAhead];
    for (uint32_t k = 0; k < kAhead && k < n; ++k) {
      StrView s = name(ctx, k);
      ring[k] = hash_bytes(s.data, s.size, seed);
      __builtin_prefetch(&scratch[size_t(ring[k]) & mask]);
    }
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t hash = ring[i % kAhead];
      if (i + kAhead < n) {
        StrView a = name(ctx, i + kAhead);
        uint64_t ha = hash_bytes(a.data, a.size, seed);
        ring[(i + kAhead) % kAhead] = ha;
        __builtin_prefetch(&scratch[size_t(ha) & mask]);
      }
#endif
      const uint32_t tag = uint32_t(hash >> 32) & ~index_mask;
      size_t h = size_t(hash) & mask;
      for (;;) {
        uint32_t slot = scratch[h];
        if (slot == 0) {
          scratch[h] = tag | (i + 1);
          break;
        }
        // Name i is read only when a fingerprint matches: rarely, for distinct names.
        if ((slot & ~index_mask) == tag && same(name(ctx, (slot & index_mask) - 1), name(ctx, i)))
          return i;
        h = (h + 1) & mask;
        if (++probes > probe_budget) goto sort_instead;
      }
    }
  }
  return kNoDuplicate;

sort_instead : {
  // Colliding input: sort indices by (name, index) and look at neighbours.
  for (uint32_t i = 0; i < n; ++i) scratch[i] = i;
  SortCtx sc = {name, ctx};
  heap_sort(scratch, n, sizeof(uint32_t), name_index_less, &sc);
  uint32_t best = kNoDuplicate;
  for (uint32_t k = 1; k < n; ++k)
    if (same(name(ctx, scratch[k - 1]), name(ctx, scratch[k])) && scratch[k] < best) best = scratch[k];
  return best;
}
}

}  // namespace detail
}  // namespace ws
