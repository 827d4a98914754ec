// The sample models the firmware embeds, generated deterministically (host side):
//   a GGUF v3 with a Q4_0 and a Q8_0 tensor and two metadata keys, and
//   a safetensors file with a BF16 and an F32 tensor and __metadata__, and
//   the same two tensors as a sharded two-file model with its index (the model loader's), and
//   a block-FP8 model with its index and config.json (the model loader's too).
// Both are larger than one 256-byte flash read, so every tensor crosses read boundaries.
#pragma once

#include <stdint.h>

#include <vector>

namespace mcu {
std::vector<uint8_t> make_gguf();
std::vector<uint8_t> make_safetensors();
// A two-file model in the Hugging Face layout: the safetensors model's two tensors in two shards
// (model-00001-of-00002.safetensors: the BF16 embedding; model-00002-...: the F32 norm) and
// model.safetensors.index.json naming them. For the model-loader configuration.
struct ShardedModel {
  std::vector<uint8_t> index, shard1, shard2;
};
ShardedModel make_sharded();
// A block-FP8 model as the Hub ships them (DeepSeek-V3 / Qwen3 FP8: transformers'
// FineGrainedFP8Config, 128 x 128 blocks): model.safetensors.index.json, one shard holding an
// F8_E4M3 [130, 200] weight with its F32 [2, 2] weight_scale_inv (ragged last blocks both ways)
// and a BF16 norm, and the config.json whose quantization_config names quant_method "fp8" — the
// loader reads it from flash as a host serves it.
struct Fp8Model {
  std::vector<uint8_t> index, shard, config;
};
Fp8Model make_fp8();
}  // namespace mcu
