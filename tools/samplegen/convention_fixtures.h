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

// MLX as `mlx_lm.convert --q-mode mxfp4` writes a MoE model (issue #14; FORMATS.md §2): a
// top-level mxfp4 section and per-layer override objects that stand alone — the router gate
// {"group_size": 64, "bits": 8} (affine 8-bit g64 with biases), {"bits": 8}, {"group_size": 128}
// (affine, g64 / 4-bit defaults), {"mode": "nvfp4"}, {"mode": "mxfp8"}, `true` (the top level),
// {} and `false` (plain tensors); an mxfp4 MoE stack. `config_json` with a quantization_config copy.
MlxFixture mlx_overrides_fixture();
// The same config with one override or the top level changed (for malformed neighbours):
// `gate_override` replaces the shared expert gate's {"bits": 8}; `top` the top-level
// "group_size": 32, "bits": 4, "mode": "mxfp4".
std::string mlx_overrides_config(const std::string& gate_override, const std::string& top);

// Ollama blobs as Ollama reads them (issue #14; FORMATS.md §3). `plain`: an MLX model converted
// before mlx-lm wrote `mode` and imported: `.scale` companions and no quant_type, so the types
// and groups come from the shapes (int4 g32, int8 g64, int8 g128), beside a Gemma-4-style
// `model.layers.0.router.scale` with no base tensor (a plain tensor) and a norm. `named`: type
// names as other writers spell them — blob quant_type "INT8" without group_size (the shapes fit
// int4 g64 and int8 g32: the type's 8 decides, g32), per-tensor " Nvfp4 " (with a global scale)
// and "q4" (group from the shapes: 32).
struct OllamaInferredFixture {
  OllamaFixture plain, named;
  std::string manifest_json;  // both blobs (made-up digests, sizes of the blobs as written)
};
OllamaInferredFixture ollama_inferred_fixture();

// Blob file names (`sha256-<hex>`) and an Ollama manifest over blobs (digest hex, size, layer
// name), as ollama writes it.
std::string ollama_blob_file(const std::string& hex);
struct ManifestLayerSpec {
  std::string hex;
  uint64_t size;
  std::string name;
};
std::string ollama_manifest_json(const std::vector<ManifestLayerSpec>& layers);

// A safetensors file's bytes with `tensors` in key (header) order and data in `order` (MLX
// fixtures) or key order (Ollama blobs, padded as the reference writer pads).
std::vector<uint8_t> mlx_file_bytes(const MlxFixture& f);
std::vector<uint8_t> ollama_blob_bytes(const OllamaFixture& f);

// Every convention fixture, as `ws-make-samples --conventions OUTDIR` writes it (committed in
// tests/data/conventions/): mlx/, mlx-bits/, mlx-overrides/, ollama/ and ollama-inferred/
// (manifest.json + blobs/), sharded-mlx/, uqff/, uqff-f8q8/, and malformed/ (malformed_fixtures.h).
std::vector<SampleFile> build_convention_fixtures();

}  // namespace samplegen
