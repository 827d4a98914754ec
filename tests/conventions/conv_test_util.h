// Helpers for the conventions tests: feeding a JSON reader in pieces of a given split.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace convtest {

// Piece sizes to test every reader with: whole, 1 byte, and a seeded random split.
enum class Split { Whole, OneByte, Random };
constexpr Split kSplits[] = {Split::Whole, Split::OneByte, Split::Random};

// Cuts `size` bytes into pieces per `split` (the random split is seeded, so it is reproducible).
std::vector<size_t> pieces(size_t size, Split split, uint32_t seed = 1);

// Feeds `text` to `reader` (feed/finish API) in pieces; returns the first non-Ok status.
template <class R>
auto feed_all(R& reader, const std::string& text, Split split) -> decltype(reader.finish()) {
  size_t at = 0;
  for (size_t n : pieces(text.size(), split)) {
    auto s = reader.feed(text.data() + at, n);
    if (s != decltype(s)::Ok) return s;
    at += n;
  }
  return reader.finish();
}

}  // namespace convtest
