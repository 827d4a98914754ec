// weightstream — u64 multiplication that reports overflow, cheap where it matters.
#pragma once

#include <stdint.h>

namespace ws {
namespace detail {

// a * b into *out; true when it overflowed. __builtin_mul_overflow on u64 needs the high half of a
// 64 × 64 product, which wasm32 computes by a call (__multi3, a 128-bit multiply): it was 1.4 % of
// validating a 92k-tensor header in the browser. Two factors below 2^32 — nearly every dimension
// and element count — cannot overflow, so that case is one plain multiply.
#if defined(__OPTIMIZE_SIZE__)
// -Os (the microcontroller build): the builtin alone, and one copy of it (a 32-bit core spends
// ≈ 60 bytes of code on each inlined 64 × 64 overflow check).
__attribute__((noinline))
#endif
inline bool mul_overflow_u64(uint64_t a, uint64_t b, uint64_t* out) {
#if !defined(__OPTIMIZE_SIZE__)
  if (((a | b) >> 32) == 0) {
    *out = a * b;
    return false;
  }
#endif
  return __builtin_mul_overflow(a, b, out);
}

}  // namespace detail
}  // namespace ws
