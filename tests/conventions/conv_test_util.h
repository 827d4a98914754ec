// Helpers for the conventions tests: feeding a JSON reader or a safetensors file in pieces of a
// given split.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "weightstream/conventions.h"
#include "weightstream/reader.h"

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

// A file parsed by the Reader in pieces, with every tensor's bytes collected (by tensor index).
struct Parsed {
  std::vector<uint8_t> arena = std::vector<uint8_t>(1 << 16);
  std::unique_ptr<ws::Reader> reader;
  std::vector<std::vector<uint8_t>> bytes;
  ws::Status status = ws::Status::Ok;  // the Reader's error code, Ok after End
};

// Streams `file` through a new Reader in `p`, in pieces per `split` (random pieces seeded with
// `seed`); `declare_size` tells the Reader the file's size first (set_input_size).
void parse(const std::vector<uint8_t>& file, Split split, uint32_t seed, bool declare_size, Parsed* p);

// The most bytes held at once when every multi-piece weight of `m` is read range by range in its
// plan_weight(m, i, chunk) schedule: companions whole, then the packed piece in `chunk`-byte
// ranges, each decoded as it comes. Measured by walking the schedule, for comparison with the
// plan's seekable_peak.
uint64_t measured_seekable_peak(const ws::LogicalModel& m, uint64_t chunk);

}  // namespace convtest
