// ws-make-samples — sample catalogue (see sample_set.h).
#include "sample_set.h"

#include <stdio.h>

#include <map>

#include "index_writer.h"
#include "llama_spec.h"
#include "safetensors_writer.h"
#include "tensor_fill.h"

namespace samplegen {
namespace {

// What transformers' save_pretrained puts in __metadata__ ("format": "pt"), plus provenance.
const std::map<std::string, std::string> kMetadata = {
    {"format", "pt"},
    {"generator", "ws-make-samples"},
    {"model_type", "llama"},
};

SampleTensor make_tensor(const TensorSpec& spec, const std::string& salt) {
  SampleTensor t;
  t.name = spec.name;
  t.dtype = spec.dtype;
  t.shape = spec.shape;
  t.data = fill_tensor(spec, salt);
  return t;
}

// ~2.4 MB: big enough to take many 64 KiB chunks, small enough to commit.
SampleFile tiny_llama() {
  LlamaConfig c;
  c.vocab = 1024;
  c.hidden = 192;
  c.intermediate = 512;
  c.layers = 2;
  c.heads = 6;
  c.kv_heads = 2;
  c.embed = SampleDtype::BF16;
  c.attention = SampleDtype::BF16;
  c.mlp = SampleDtype::F16;
  c.norm = SampleDtype::F32;
  c.lm_head = SampleDtype::BF16;
  std::vector<SampleTensor> tensors;
  for (const TensorSpec& spec : llama_tensors(c)) tensors.push_back(make_tensor(spec, "tiny-llama"));
  return {"tiny-llama.safetensors", serialize_safetensors(std::move(tensors), kMetadata)};
}

// A smaller 3-layer model split the way save_pretrained splits: whole tensors per shard, the
// embeddings with the first layer, the final norm and lm_head with the last.
std::vector<SampleFile> sharded_llama() {
  LlamaConfig c;
  c.vocab = 256;
  c.hidden = 64;
  c.intermediate = 128;
  c.layers = 3;
  c.heads = 4;
  c.kv_heads = 2;
  c.mlp = SampleDtype::BF16;
  const int kShards = 3;
  const auto shard_name = [&](int i) {
    char buf[64];
    snprintf(buf, sizeof buf, "model-%05d-of-%05d.safetensors", i + 1, kShards);
    return std::string(buf);
  };

  std::vector<std::vector<SampleTensor>> shards(kShards);
  std::map<std::string, std::string> weight_map;
  uint64_t total_size = 0;
  for (const TensorSpec& spec : llama_tensors(c)) {
    // Layer n goes to shard n; tensors outside the layers go with the nearest layer.
    const int shard = spec.layer >= 0 ? spec.layer
                      : spec.name.rfind("model.embed_tokens", 0) == 0 ? 0
                                                                      : kShards - 1;
    SampleTensor t = make_tensor(spec, "sharded-llama");
    total_size += t.data.size();
    weight_map[t.name] = shard_name(shard);
    shards[static_cast<size_t>(shard)].push_back(std::move(t));
  }

  std::vector<SampleFile> files;
  for (int i = 0; i < kShards; ++i)
    files.push_back({"sharded/" + shard_name(i),
                     serialize_safetensors(std::move(shards[static_cast<size_t>(i)]), kMetadata)});
  const std::string index = shard_index_json(total_size, weight_map);
  files.push_back({"sharded/model.safetensors.index.json",
                   std::vector<uint8_t>(index.begin(), index.end())});
  return files;
}

}  // namespace

std::vector<SampleFile> build_sample_set() {
  std::vector<SampleFile> files;
  files.push_back(tiny_llama());
  for (SampleFile& f : sharded_llama()) files.push_back(std::move(f));
  return files;
}

}  // namespace samplegen
