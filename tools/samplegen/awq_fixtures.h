// ws-make-samples — AWQ modules laid out as AutoAWQ's WQLinear_GEMM.from_linear lays them out
// (issue #28): the tensors of one quantized linear from chosen integer codes, zero points and
// scales, so that tests recompute every value from the packed integers.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "convention_fixtures.h"

namespace samplegen {

struct AwqModule {
  std::string prefix;  // "model.layers.0.mlp.down_proj": tensors <prefix>.qweight, ...
  uint32_t in = 0, out = 0;  // in a multiple of group; out of 32 (from_linear's out // 32 * 4 words)
  uint32_t group = 0;        // 0: group_size -1 (one group of every input)
  uint32_t seed = 1;
};

// <prefix>.qweight I32 [in, out / 8], .qzeros I32 [in / group, out / 8], .scales F16
// [in / group, out] (4 bits: AutoAWQ's only width).
std::vector<RawTensor> awq_module_tensors(const AwqModule& m);

// The same module as WQLinear_GEMV.from_linear lays it out (group 32, 64 or >= 128):
// <prefix>.qweight I32 [out, in / 8] (inputs in natural lane order), .qzeros I32 [out, W] and
// .scales F16 [out, 8 W], W = calculate_zeros_width(in, group), zeros past the groups.
std::vector<RawTensor> awq_gemv_module_tensors(const AwqModule& m);

}  // namespace samplegen
