// The corpus generator's rules for two families of GGUF expectations that follow mechanically from
// a file's field map (gguf_writer.h), written down once instead of by hand for every case:
//
//  * a valid file cut after p bytes: HeaderTooSmall before byte 8, TruncatedHeader inside the
//    header, TruncatedData (naming the tensor whose data or leading padding is cut) after it, and
//    Ok inside the last tensor's optional end padding — always at p, the input's end;
//  * what a declared input size (Reader::set_input_size) changes: counts, lengths and array
//    sizes that the rest of the input cannot hold are rejected where they are read instead of at
//    the input's end (see with_declared_size()).
//
// Both are the tests' own model of FORMATS.md §5, never the library's code.
#pragma once

#include <stdint.h>

#include <string>

#include "gguf_writer.h"

namespace wsgguf {

struct Verdict {
  std::string status;  // a ws::Status name, "Ok" for valid inputs
  uint64_t offset = 0;
  bool has_tensor = false;
  std::string tensor;
};

Verdict verdict(const std::string& status, uint64_t offset);
Verdict verdict_tensor(const std::string& status, uint64_t offset, const std::string& tensor);

// The verdict for the first p bytes of the valid file `b` built from `spec`.
Verdict truncated_at(const Built& b, const Spec& spec, uint64_t p);

// The verdict when the input's size `size` is declared up front, for an input (whose field map is
// `b`, possibly cut to `size` bytes) whose verdict without the declaration is `plain`. Walking the
// complete fields before plain's offset in file order, the first that the rest of the input
// cannot hold decides:
//   - the counts (once both are read): tensor count × 24 bytes (the smallest tensor info) beyond
//     the rest → GgufCountTooLarge at the tensor count (8); else tensor infos plus KV count × 14
//     bytes (the smallest KV: 1-byte key, u8 value) beyond it → GgufCountTooLarge at the KV count
//     (16), the field where the input became impossible;
//   - a key, string value, string element or tensor name longer than the rest → GgufStringTooLong
//     at its length field (a tensor name is a GGUF string like any other);
//   - an array whose count × element size (8 bytes per string element) is beyond the rest →
//     GgufArrayTooLong at its count.
// Otherwise the verdict is plain's.
Verdict with_declared_size(const Built& b, uint64_t size, const Verdict& plain);

}  // namespace wsgguf
