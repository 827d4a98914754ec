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

// mlx/model.safetensors, mlx/config.json, ollama/blob.safetensors, ollama/manifest.json.
std::vector<SampleFile> build_convention_fixtures();

}  // namespace samplegen
