// GGUF metadata value types: names (as gguf-py spells them) and sizes.
#include "weightstream/gguf.h"

namespace ws {

namespace {
const char* const kNames[kGgufTypeCount] = {"UINT8", "INT8",   "UINT16", "INT16", "UINT32", "INT32", "FLOAT32",
                                            "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64", "FLOAT64"};
const uint8_t kSizes[kGgufTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
}  // namespace

const char* gguf_type_name(GgufType t) {
  uint32_t i = static_cast<uint32_t>(t);
  return i < kGgufTypeCount ? kNames[i] : "?";
}

uint32_t gguf_type_size(GgufType t) {
  uint32_t i = static_cast<uint32_t>(t);
  return i < kGgufTypeCount ? kSizes[i] : 0;
}

}  // namespace ws
