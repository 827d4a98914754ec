// The models every build runs (the arrays come from the generated models_data.h).
#pragma once

#include "app.h"

namespace mcu {
constexpr const char* kGgufDequant = "blk.0.attn_q.weight";            // Q4_0
constexpr const char* kSafetensorsDequant = "model.embed_tokens.weight";  // BF16
}  // namespace mcu
