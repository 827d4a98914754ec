// ws-make-samples — the tensor list of a small llama-shaped model (Hugging Face naming:
// model.embed_tokens, model.layers.N.{self_attn,mlp,...}, model.norm, lm_head).
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "safetensors_writer.h"

namespace samplegen {

struct LlamaConfig {
  uint64_t vocab = 0;
  uint64_t hidden = 0;
  uint64_t intermediate = 0;
  uint32_t layers = 0;
  uint64_t heads = 0;
  uint64_t kv_heads = 0;  // grouped-query attention: k/v projections are kv_heads × head_dim wide
  // Dtypes per group of tensors, so one model mixes BF16, F16 and F32 as real checkpoints do.
  SampleDtype embed = SampleDtype::BF16;
  SampleDtype attention = SampleDtype::BF16;
  SampleDtype mlp = SampleDtype::BF16;
  SampleDtype norm = SampleDtype::F32;
  SampleDtype lm_head = SampleDtype::BF16;
};

enum class Init { Linear, Norm };

struct TensorSpec {
  std::string name;
  SampleDtype dtype;
  std::vector<uint64_t> shape;  // PyTorch order: [out_features, in_features]
  Init init;
  int layer;  // -1 for tensors outside the decoder layers
};

// In model order: embeddings, each layer, final norm, lm_head.
std::vector<TensorSpec> llama_tensors(const LlamaConfig& config);

}  // namespace samplegen
