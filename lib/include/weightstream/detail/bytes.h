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
// The n < 8 bytes at p as a little-endian word (zero above): what memcpy(&w, p, n) into a zeroed
// w gives, from overlapping fixed-size loads — a memcpy of a variable size is a call under wasm.
inline uint64_t load_tail(const char* p, size_t n) {
#if defined(__OPTIMIZE_SIZE__)
  uint64_t w = 0;  // -Os (the microcontroller build): the call is the smaller code
  if (n) memcpy(&w, p, n);
  return w;
#else
  if (n >= 4) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + n - 4, 4);
    return uint64_t(lo) | uint64_t(hi) << (8 * (n - 4));
  }
  if (n == 0) return 0;
  const uint8_t* b = reinterpret_cast<const uint8_t*>(p);
  return uint64_t(b[0]) | uint64_t(b[n / 2]) << (8 * (n / 2)) | uint64_t(b[n - 1]) << (8 * (n - 1));
#endif
}

inline void store_u32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
inline void store_u64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }
// memcpy for short runs (names): fixed-size words, the last one overlapping, so nothing outside
// [d, d + n) is written. A memcpy of a variable size is a call under wasm (92k of them were 10 %
// of validating a DeepSeek-V3 header in node).
inline void copy_short(uint8_t* d, const uint8_t* s, size_t n) {
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) store_u64(d + i, load_u64(s + i));
    store_u64(d + n - 8, load_u64(s + n - 8));
  } else if (n >= 4) {
    uint32_t a = load_u32(s), b = load_u32(s + n - 4);
    store_u32(d, a);
    store_u32(d + n - 4, b);
  } else {
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

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
