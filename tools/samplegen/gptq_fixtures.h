// ws-make-samples — GPTQ modules laid out as AutoGPTQ's and GPTQModel's `pack` lays them out
// (issue #28): the tensors of one quantized linear from chosen integer codes, zero points, scales
// and g_idx, so that tests recompute every value from the packed integers.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "convention_fixtures.h"

namespace samplegen {

struct GptqModule {
  std::string prefix;     // "model.layers.0.mlp.down_proj": tensors <prefix>.qweight, ...
  uint32_t in = 0, out = 0;
  uint32_t bits = 4;      // 2, 3, 4 or 8 (3: in and out multiples of 32)
  uint32_t group = 0;     // 0: group_size -1 (one group of every input)
  bool desc_act = false;  // g_idx in activation order (a permutation), not input / group
  bool v1 = true;         // checkpoint_format "gptq": zero points stored minus one
  bool zero_zero = false; // the first zero point 0 (v1: stored -1, spilling into the lanes above)
  uint32_t seed = 1;
};

// <prefix>.qweight I32 [in * bits / 32, out], .qzeros I32 [groups, out * bits / 32], .scales F16
// [groups, out], .g_idx I32 [in].
std::vector<RawTensor> gptq_module_tensors(const GptqModule& m);

}  // namespace samplegen
