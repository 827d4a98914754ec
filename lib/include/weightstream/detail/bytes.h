// weightstream — little-endian loads/stores and LEB128 varints, as the arena tables use them.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace ws {
namespace detail {

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
inline uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
inline void store_u32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
inline void store_u64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }

inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = uint8_t(v | 0x80);
    v >>= 7;
  }
  *p++ = uint8_t(v);
  return p;
}

// Reads a varint this library wrote (well formed, at most 10 bytes).
inline const uint8_t* get_varint(const uint8_t* p, uint64_t* v) {
  uint64_t r = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    b = *p++;
    r |= uint64_t(b & 0x7F) << shift;
    shift += 7;
  } while (b & 0x80);
  *v = r;
  return p;
}

// v rounded up to a multiple of a (a > 0); false on overflow.
inline bool align_up(uint64_t v, uint64_t a, uint64_t* out) {
  uint64_t r = v % a;
  if (r == 0) {
    *out = v;
    return true;
  }
  return !__builtin_add_overflow(v, a - r, out);
}

}  // namespace detail
}  // namespace ws
