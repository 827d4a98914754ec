// weightstream — safetensors dtypes.
//
// The 22 dtypes of the safetensors format, in the declaration order of the reference crate's
// enum, with their size in bits. Sub-byte dtypes (F4, F6_*) make byte sizes depend on the element
// count: count × bits must be a multiple of 8.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {

#define WS_DTYPE_LIST(X)                                                                           \
  X(BOOL, 8)                                                                                       \
  X(F4, 4)                                                                                         \
  X(F6_E2M3, 6)                                                                                    \
  X(F6_E3M2, 6)                                                                                    \
  X(U8, 8)                                                                                         \
  X(I8, 8)                                                                                         \
  X(F8_E5M2, 8)                                                                                    \
  X(F8_E4M3, 8)                                                                                    \
  X(F8_E8M0, 8)                                                                                    \
  X(F8_E4M3FNUZ, 8)                                                                                \
  X(F8_E5M2FNUZ, 8)                                                                                \
  X(I16, 16)                                                                                       \
  X(U16, 16)                                                                                       \
  X(F16, 16)                                                                                       \
  X(BF16, 16)                                                                                      \
  X(I32, 32)                                                                                       \
  X(U32, 32)                                                                                       \
  X(F32, 32)                                                                                       \
  X(C64, 64)                                                                                       \
  X(F64, 64)                                                                                       \
  X(I64, 64)                                                                                       \
  X(U64, 64)

enum class DType : uint8_t {
#define WS_DTYPE_ENUM(name, bits) name,
  WS_DTYPE_LIST(WS_DTYPE_ENUM)
#undef WS_DTYPE_ENUM
      Count_
};

constexpr uint32_t kDTypeCount = static_cast<uint32_t>(DType::Count_);

// "BF16" etc.; "?" outside the enum.
const char* dtype_name(DType t);
// Bits per element.
uint32_t dtype_bits(DType t);
// Exact, case-sensitive match of a dtype string. Returns false if it names no dtype.
bool dtype_from_name(const char* s, size_t n, DType* out);

}  // namespace ws
