// weightstream — GGUF metadata value types, as key-value events report them.
#pragma once

#include <stdint.h>

namespace ws {

enum class GgufType : uint8_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9,
  U64 = 10, I64 = 11, F64 = 12,
};
constexpr uint32_t kGgufTypeCount = 13;

// "UINT8" ... "FLOAT64" (gguf-py's names); "?" outside the enum.
const char* gguf_type_name(GgufType t);
// Bytes of one value of a fixed-size type; 0 for String and Array.
uint32_t gguf_type_size(GgufType t);

}  // namespace ws
