// Quantization modes and the (mode, bits, group) combinations MLX allows (FORMATS.md §2).
#include "weightstream/quant_params.h"

#include <string.h>

namespace ws {

const char* quant_mode_name(QuantMode m) {
  switch (m) {
    case QuantMode::None: return "none";
    case QuantMode::Affine: return "affine";
    case QuantMode::Mxfp4: return "mxfp4";
    case QuantMode::Mxfp8: return "mxfp8";
    case QuantMode::Nvfp4: return "nvfp4";
  }
  return "?";
}

bool quant_mode_from_name(const char* s, uint32_t n, QuantMode* out) {
  static const QuantMode kModes[] = {QuantMode::Affine, QuantMode::Mxfp4, QuantMode::Mxfp8,
                                     QuantMode::Nvfp4};
  for (QuantMode m : kModes) {
    const char* name = quant_mode_name(m);
    if (strlen(name) == n && memcmp(name, s, n) == 0) {
      *out = m;
      return true;
    }
  }
  return false;
}

bool quant_params_allowed(const QuantParams& p) {
  switch (p.mode) {
    case QuantMode::None: return true;
    case QuantMode::Affine:
      return (p.group == 32 || p.group == 64 || p.group == 128) &&
             (p.bits == 2 || p.bits == 3 || p.bits == 4 || p.bits == 5 || p.bits == 6 || p.bits == 8);
    case QuantMode::Mxfp4: return p.group == 32 && p.bits == 4;
    case QuantMode::Mxfp8: return p.group == 32 && p.bits == 8;
    case QuantMode::Nvfp4: return p.group == 16 && p.bits == 4;
  }
  return false;
}

QuantParams quant_mode_defaults(QuantMode m) {
  switch (m) {
    case QuantMode::None: break;
    case QuantMode::Affine: return QuantParams{m, 4, 64};
    case QuantMode::Mxfp4: return QuantParams{m, 4, 32};
    case QuantMode::Mxfp8: return QuantParams{m, 8, 32};
    case QuantMode::Nvfp4: return QuantParams{m, 4, 16};
  }
  return QuantParams();
}

}  // namespace ws
