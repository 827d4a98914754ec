// The sample models the firmware embeds, generated deterministically (host side):
//   a GGUF v3 with a Q4_0 and a Q8_0 tensor and two metadata keys, and
//   a safetensors file with a BF16 and an F32 tensor and __metadata__.
// Both are larger than one 256-byte flash read, so every tensor crosses read boundaries.
#pragma once

#include <stdint.h>

#include <vector>

namespace mcu {
std::vector<uint8_t> make_gguf();
std::vector<uint8_t> make_safetensors();
}  // namespace mcu
