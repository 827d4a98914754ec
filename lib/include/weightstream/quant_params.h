// weightstream — quantization parameters of one packed weight, as conventions state them.
//
// Shared by the MLX config.json reader, the Ollama blob metadata and the UQFF Afq/Mxfp4 layers, so
// that every convention hands the same description to the logical-weight builder.
#pragma once

#include <stdint.h>

namespace ws {

// MLX's four quantization modes (FORMATS.md §2); None = a plain, unquantized tensor.
enum class QuantMode : uint8_t { None, Affine, Mxfp4, Mxfp8, Nvfp4 };
constexpr uint32_t kQuantModeCount = 5;

const char* quant_mode_name(QuantMode m);  // "affine", "mxfp4", ...; "none"
// Exact match of "affine", "mxfp4", "mxfp8", "nvfp4".
bool quant_mode_from_name(const char* s, uint32_t n, QuantMode* out);

struct QuantParams {
  QuantMode mode = QuantMode::None;  // None: not quantized (an override of `false`)
  uint32_t bits = 0;                 // 0: not stated
  uint32_t group = 0;                // 0: not stated
};

// True when (mode, bits, group) is a combination MLX can produce (FORMATS.md §2 table).
bool quant_params_allowed(const QuantParams& p);

// A mode with MLX's defaults for it (mlx nn/layers/quantized.py `_defaults_for_mode`: affine
// group 64 / 4 bits, mxfp4 32/4, nvfp4 16/4, mxfp8 32/8); None gives {None, 0, 0}.
QuantParams quant_mode_defaults(QuantMode m);

}  // namespace ws
