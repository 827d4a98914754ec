// ws-make-samples — tensor values (see tensor_fill.h).
#include "tensor_fill.h"

#include <math.h>
#include <string.h>

#include "half_float.h"
#include "prng.h"

namespace samplegen {

std::vector<uint8_t> fill_tensor(const TensorSpec& spec, const std::string& salt) {
  uint64_t count = 1;
  for (uint64_t d : spec.shape) count *= d;
  // sqrtf is correctly rounded (IEEE 754), so the bound is the same float everywhere.
  const float bound = spec.init == Init::Linear
                          ? 1.0f / sqrtf(static_cast<float>(spec.shape.back()))
                          : 0.05f;
  const float base = spec.init == Init::Norm ? 1.0f : 0.0f;

  SplitMix64 rng(fnv1a64(salt + "/" + spec.name));
  std::vector<uint8_t> out;
  out.reserve(count * dtype_bytes(spec.dtype));
  for (uint64_t i = 0; i < count; ++i) {
    const float v = base + rng.next_signed_unit() * bound;
    uint32_t bits;
    uint32_t nbytes;
    switch (spec.dtype) {
      case SampleDtype::F32:
        memcpy(&bits, &v, sizeof bits);
        nbytes = 4;
        break;
      case SampleDtype::BF16:
        bits = float_to_bf16(v);
        nbytes = 2;
        break;
      case SampleDtype::F16:
      default:
        bits = float_to_f16(v);
        nbytes = 2;
        break;
    }
    for (uint32_t b = 0; b < nbytes; ++b) out.push_back(static_cast<uint8_t>(bits >> (8 * b)));
  }
  return out;
}

}  // namespace samplegen
