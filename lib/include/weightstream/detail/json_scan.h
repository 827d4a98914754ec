// weightstream — byte-class helpers shared by the JSON lexer and the header fast path.
#pragma once

#include <stdint.h>
#include <string.h>

namespace ws {
namespace detail {

inline bool json_is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline bool is_digit(uint8_t c) { return uint8_t(c - '0') < 10; }

// True when any of the 8 bytes needs a closer look inside a string: '"', '\\', a control
// character, or a non-ASCII byte (UTF-8 validation). Word-at-a-time, portable to every target.
inline bool word_needs_attention(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  uint64_t quote = w ^ (kOnes * 0x22);
  uint64_t slash = w ^ (kOnes * 0x5C);
  uint64_t special =
      ((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | ((w - kOnes * 0x20) & ~w) | w;
  return (special & kHighs) != 0;
}

// Advances p over plain printable ASCII (no '"', no '\\'), 8 bytes at a time while it can.
inline const uint8_t* skip_plain_words(const uint8_t* p, const uint8_t* end) {
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    if (word_needs_attention(w)) break;
    p += 8;
  }
  return p;
}

}  // namespace detail
}  // namespace ws
