// weightstream — strings from the JSON lexer's pieces, for every JSON consumer (convention readers,
// the shard index, config.json facts, the safetensors header): short keys matched from a fixed
// buffer, longer strings stored in the arena as [u32 length][bytes]. One copy instead of one per
// reader. (Namespace conv_detail: the convention readers were its first users.)
#pragma once

#include <string.h>

#include "weightstream/detail/arena.h"
#include "weightstream/detail/bytes.h"
#include "weightstream/detail/json_lexer.h"
#include "weightstream/tensor_table.h"

namespace ws {
namespace conv_detail {

// Appends n bytes to a buffer of `cap` bytes holding *size; a string that does not fit only sets
// `overflow` (it then matches no known key).
template <class Size>
inline void append_small(const uint8_t* p, size_t n, char* buf, size_t cap, Size* size, bool* overflow) {
  if (*size + n > cap) {
    *overflow = true;
    return;
  }
  memcpy(buf + *size, p, n);
  *size += Size(n);
}

// Appends the lexer's current piece to a small buffer; returns true on the string's last piece.
// Strings longer than the buffer only set `overflow` (they then match no known key).
template <size_t N, class Size>
bool small_piece(const detail::JsonLexer& lx, char (&buf)[N], Size* size, bool* overflow) {
  if (lx.piece_first()) {
    *size = 0;
    *overflow = false;
  }
  append_small(lx.piece(), lx.piece_size(), buf, N, size, overflow);
  return lx.piece_last();
}

inline bool small_is(const char* buf, uint32_t size, bool overflow, const char* k) {
  size_t n = strlen(k);
  return !overflow && size == n && memcmp(buf, k, n) == 0;
}

// Stores the current piece in the arena; returns true on the last piece (the record is complete
// and starts at *off unless the arena is counting).
inline bool store_piece(const detail::JsonLexer& lx, detail::Arena* arena, uint32_t* off,
                        uint64_t* size) {
  if (lx.piece_first()) {
    *off = uint32_t(arena->low());
    *size = 0;
    arena->grow_low(4);
  }
  size_t n = lx.piece_size();
  uint8_t* dst = arena->grow_low(n);
  if (dst && n) memcpy(dst, lx.piece(), n);
  *size += n;
  if (lx.piece_last() && !arena->counting()) detail::store_u32(arena->base() + *off, uint32_t(*size));
  return lx.piece_last();
}

inline StrView arena_str(const detail::Arena& arena, uint32_t off) {
  StrView s;
  const uint8_t* p = arena.base() + off;
  s.size = detail::load_u32(p);
  s.data = reinterpret_cast<const char*>(p + 4);
  return s;
}

}  // namespace conv_detail
}  // namespace ws
