// weightstream — input limits.
//
// Defaults accept every file the reference implementations accept. A caller with little memory
// (a microcontroller) lowers them; a file over a limit is rejected with its own status code, never
// truncated. The safetensors header cap can be lowered but never raised above 100,000,000.
#pragma once

#include <stdint.h>

namespace ws {

constexpr uint64_t kMaxSafetensorsHeader = 100000000u;  // the reference crate's DoS limit
constexpr uint32_t kMaxNestingSupported = 1024;         // bound of the lexer's container stack

struct Limits {
  uint64_t max_header_bytes = kMaxSafetensorsHeader;  // values above the cap are clamped to it
  uint32_t max_tensors = 0xFFFFFFFFu;
  uint64_t max_name_bytes = kMaxSafetensorsHeader;
  uint32_t max_rank = 0xFFFFFFFFu;
  // Deepest allowed JSON nesting, the root object counting as 1; clamped to kMaxNestingSupported.
  // serde_json starts a depth budget of 128 and fails when it reaches 0, so the reference accepts
  // 127 levels and rejects the 128th: the default matches that exactly.
  uint32_t max_nesting = 127;
  // Keep safetensors __metadata__ in the arena (false: validated, then dropped).
  bool keep_metadata = true;
};

}  // namespace ws
