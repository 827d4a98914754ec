// ws-make-samples — bitsandbytes modules laid out as bitsandbytes and transformers save them
// (issue #28): the tensors of one quantized linear from chosen 4-bit codes and absmax (or 8-bit
// rows and SCB), so that tests recompute every value from the stored bytes.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "convention_fixtures.h"

namespace samplegen {

struct Bnb4Module {
  std::string prefix;  // "model.layers.0.mlp.down_proj": tensors <prefix>.weight, <prefix>.weight.absmax, ...
  uint32_t out = 0, in = 0;
  bool fp4 = false;
  uint32_t blocksize = 64;
  bool nested = false;  // double quantization: U8 absmax codes, nested_absmax per 256 of them
  uint32_t seed = 1;
};

// <prefix>.weight U8 [out * in / 2, 1]; .weight.absmax F32 [blocks] (nested: U8 [blocks]);
// .weight.quant_map F32 [16]; nested: .weight.nested_absmax F32 [ceil(blocks / 256)] and
// .weight.nested_quant_map F32 [256]; .weight.quant_state.bitsandbytes__nf4|fp4 U8 (the JSON).
std::vector<RawTensor> bnb4_module_tensors(const Bnb4Module& m);
// The quant_state JSON QuantState.as_dict(packed=True) writes for `m` (json.dumps' separators).
std::string bnb4_state_json(const Bnb4Module& m);

// <prefix>.weight I8 [out, in], <prefix>.SCB F32 [out], <prefix>.weight_format U8 [] (0: "row").
std::vector<RawTensor> bnb8_module_tensors(const std::string& prefix, uint32_t out, uint32_t in, uint32_t seed);

}  // namespace samplegen
