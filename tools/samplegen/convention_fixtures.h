// ws-make-samples — convention fixtures (FORMATS.md §2, §3): an MLX model (unpadded header, data
// order different from key order, packed weights before their scales, config.json with per-layer
// overrides) and an Ollama mixed-type blob with per-tensor metadata plus its manifest. Written
// independently of lib/, byte by byte, so that they test it.
#pragma once

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "sample_set.h"

namespace samplegen {

struct RawTensor {
  std::string name;
  std::string dtype;  // safetensors dtype string, written verbatim
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;
};

// Elements of a tensor of `shape` (1 for a scalar).
inline uint64_t element_count(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

// Header keys in `tensors` order (MLX sorts them), data in `data_order` (indices into tensors);
// `pad` pads the header with spaces to a multiple of 8 (the reference writer; MLX does not).
std::vector<uint8_t> serialize_raw(const std::vector<RawTensor>& tensors,
                                   const std::vector<size_t>& data_order,
                                   const std::map<std::string, std::string>& metadata, bool pad);

struct MlxFixture {
  std::vector<RawTensor> tensors;  // sorted by name, as the MLX writer's header
  std::vector<size_t> data_order;  // packed weights first, then the rest, then scales, biases
  std::string config_json;
};
MlxFixture mlx_fixture();

struct OllamaFixture {
  std::vector<RawTensor> tensors;  // sorted by name; data in the same order
  std::map<std::string, std::string> metadata;
  std::string manifest_json;  // names the blob by its (fixed, made-up) digest
};
OllamaFixture ollama_fixture();

// An MLX model with one linear per bit width the other fixture lacks (2, 5, 6 bits, plus 3 and 4
// at other group sizes), F32 and BF16 scales, a `false` override for lm_head, and data in the
// reverse of key order (companions before their packed weight); unpadded header.
MlxFixture mlx_bits_fixture();

// An Ollama expert-group blob: every tensor starts with the manifest layer's name
// "model.layers.0.mlp.experts" (int8 down_proj, mxfp4 up_proj, per-tensor metadata only).
OllamaFixture ollama_experts_fixture();

// A 3-shard MLX model in the Hugging Face layout (model-0000N-of-00003.safetensors and
// model.safetensors.index.json, plus config.json): q_proj's packed weight is in shard 1 and its
// scales/biases in shard 2, so one logical weight spans two files.
struct ShardedFixture {
  std::vector<MlxFixture> shards;  // config_json unused; data in key order
  std::map<std::string, std::string> weight_map;
  uint64_t total_size = 0;
  std::string config_json;
};
ShardedFixture sharded_fixture();
std::string shard_file_name(size_t shard, size_t count);  // "model-00001-of-00003.safetensors"

// Every convention fixture, as `ws-make-samples --conventions OUTDIR` writes it (committed in
// tests/data/conventions/): mlx/, mlx-bits/, ollama/ (manifest.json + blobs/), sharded-mlx/.
std::vector<SampleFile> build_convention_fixtures();

}  // namespace samplegen
