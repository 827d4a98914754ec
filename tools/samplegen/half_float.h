// ws-make-samples — float32 to the 16-bit float formats, written out here (not taken from a
// library) so the generator depends on nothing whose rounding could change.
#pragma once

#include <stdint.h>

namespace samplegen {

// Round to nearest, ties to even, as PyTorch's .to(torch.bfloat16) does. NaN stays NaN.
uint16_t float_to_bf16(float f);
// IEEE binary16, round to nearest even, with subnormals, overflow to infinity, NaN kept.
uint16_t float_to_f16(float f);

}  // namespace samplegen
