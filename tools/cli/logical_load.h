// weightstream CLI — a model as logical weights (ws::LogicalModel): the headers of one safetensors
// file, or of every shard a `*.index.json` names, grouped by the convention the files follow.
//
// Only headers are read (the weights' bytes are fetched later by range, see logical_dequant.h),
// so loading is cheap even for a model of many gigabytes. The convention is detected, never
// guessed from names alone:
//   - Ollama: the input is a manifest (manifest_blobs.h: every tensor blob is a table), or
//     `__metadata__` has `quant_type` or a `<tensor>.quant_type` key (FORMATS.md §3);
//   - MLX: `__metadata__` says `"format": "mlx"`, or a config.json beside the file (or index) has
//     a `quantization` section (FORMATS.md §2; then its params and per-layer overrides are used);
//   - otherwise every tensor is a plain weight (a Hugging Face model).
// Everything the library built (tables, model, config) lives in this struct; the UQFF convention
// plugs in here as one more detection rule and build call.
#pragma once

#include <stdint.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manifest_blobs.h"
#include "report.h"
#include "scan_file.h"
#include "weightstream/conventions.h"
#include "weightstream/mlx_config.h"
#include "weightstream/reader.h"
#include "weightstream/shard_index.h"

namespace wscli {

// One file whose header is loaded: a shard, or the single file.
struct LoadedTable {
  std::string path;   // to open it again for the weights' bytes
  std::string shard;  // the shard's name as the index gives it; empty for a single file
  std::vector<uint64_t> arena;
  std::unique_ptr<ws::Reader> reader;
};

struct LogicalView {
  std::vector<std::unique_ptr<LoadedTable>> tables;  // table t of the model
  ws::Convention convention = ws::Convention::Plain;
  std::string config_path;  // the config.json whose quantization was used; empty if none
  bool config_rejected = false;  // the MLX model's config.json was rejected (the problem says where)
  std::vector<uint64_t> config_arena;
  std::unique_ptr<ws::MlxQuantConfig> config;
  std::vector<uint64_t> index_arena;
  std::unique_ptr<ws::ShardIndex> index;  // index inputs
  ManifestFiles manifest;                 // Ollama manifest inputs: table t is manifest.blobs[t]
  std::vector<ws::LogicalWeight> storage;
  std::unique_ptr<ws::LogicalModel> model;
};

// Loads `path` (a safetensors file or an index). Returns the first problem: unreadable input
// (io), an invalid header, an index/shard mismatch, or a convention error naming the weight.
// A GGUF file or standard input is not loaded (`*not_safetensors` is set, no problem).
std::optional<Problem> load_logical(const std::string& path, const ScanOptions& options, LogicalView* view,
                                    bool* not_safetensors);


// "affine 4-bit g32" style description of a weight's quantization ("plain BF16" when none).
std::string quant_text(const ws::LogicalModel& m, const ws::LogicalWeight& w);
// Stored bytes of every piece of a weight (packed + companions).
uint64_t stored_bytes(const ws::LogicalModel& m, const ws::LogicalWeight& w);

}  // namespace wscli
