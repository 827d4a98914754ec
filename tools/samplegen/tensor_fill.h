// ws-make-samples — deterministic pseudo-random tensor values.
//
// Linear weights are uniform in ±1/sqrt(in_features) (PyTorch's nn.Linear default range), norms
// are 1 ± 0.05, so the samples look like a freshly initialised model to anything that inspects the
// values. The seed is the tensor name mixed with a per-model salt.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "llama_spec.h"

namespace samplegen {

std::vector<uint8_t> fill_tensor(const TensorSpec& spec, const std::string& salt);

}  // namespace samplegen
