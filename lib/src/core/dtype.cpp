// Safetensors dtype names and sizes, generated from the one list in dtype.h.
#include "weightstream/dtype.h"

#include <string.h>

namespace ws {

namespace {
const char* const kNames[] = {
#define WS_DTYPE_NAME(name, bits) #name,
    WS_DTYPE_LIST(WS_DTYPE_NAME)
#undef WS_DTYPE_NAME
};
const uint8_t kLengths[] = {
#define WS_DTYPE_LEN(name, bits) sizeof(#name) - 1,
    WS_DTYPE_LIST(WS_DTYPE_LEN)
#undef WS_DTYPE_LEN
};
const uint8_t kBits[] = {
#define WS_DTYPE_BITS(name, bits) bits,
    WS_DTYPE_LIST(WS_DTYPE_BITS)
#undef WS_DTYPE_BITS
};
}  // namespace

const char* dtype_name(DType t) {
  uint32_t i = static_cast<uint32_t>(t);
  return i < kDTypeCount ? kNames[i] : "?";
}

uint32_t dtype_bits(DType t) {
  uint32_t i = static_cast<uint32_t>(t);
  return i < kDTypeCount ? kBits[i] : 0;
}

bool dtype_from_name(const char* s, size_t n, DType* out) {
  // 22 short names: a linear scan with a length pre-check is as fast as anything fancier.
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    if (kLengths[i] == n && memcmp(kNames[i], s, n) == 0) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

}  // namespace ws
