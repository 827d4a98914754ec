// weightstream — GGML tensor types as GGUF files number them.
//
// Ids, names, and block geometry (elements and bytes per block) of every type ggml knows, the
// retired ids it rejects, and the BitNet dialect: files whose general.architecture names bitnet
// (microsoft/BitNet's llama.cpp fork) reuse ids 36-39 for I2_S, I8_S, TL1 and TL2.
#pragma once

#include <stdint.h>

namespace ws {

enum class GgmlDialect : uint8_t { Upstream, BitNet };

enum class GgmlTypeKind : uint8_t {
  Unknown,  // no such id
  Retired,  // an id ggml no longer accepts
  Blocks,   // ne0 % block_elems == 0; bytes = elements / block_elems * block_bytes
  I2S,      // BitNet I2_S: a per-tensor format of elements/4 bytes of codes + a 32-byte tail
};

struct GgmlTypeInfo {
  const char* name = "?";
  GgmlTypeKind kind = GgmlTypeKind::Unknown;
  uint32_t block_elems = 0;
  uint32_t block_bytes = 0;
};

constexpr uint32_t kGgmlTypeI2S = 36;  // BitNet dialect only
constexpr uint32_t kGgmlTypeTL1 = 38;
constexpr uint32_t kGgmlTypeTL2 = 39;

GgmlTypeInfo ggml_type_info(uint32_t id, GgmlDialect dialect);

// Bytes of a tensor of `elements` elements (elements % block_elems == 0 is the caller's check);
// false on overflow or for Unknown/Retired.
bool ggml_tensor_bytes(const GgmlTypeInfo& t, uint64_t elements, uint64_t* bytes);

}  // namespace ws
