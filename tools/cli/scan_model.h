// weightstream CLI — validate's and inspect's reports from one load through the model host
// (model_host.h): the loader reads the model (every byte, every rule of its convention); this
// file copies what it found into the report structs the renderers print (report.h).
#pragma once

#include <optional>
#include <string>

#include "model_host.h"
#include "report.h"
#include "file_report.h"
#include "weightstream/model_loader.h"

namespace wscli {

// How the loader opens what the user named: standard input as one sequential file; an index, a
// manifest (with its blobs directory), a UQFF file (its directory's listing); else one file.
HostSettings model_settings(const std::string& path, const ScanOptions& options);

// One safetensors or GGUF file (or standard input) as a model: its header, its verdict (a
// convention error, an MLX file's config.json that does not parse, included) and, for `logical`
// when the model is valid and follows a convention, its logical weights with the load plan.
FileReport scan_model_file(const std::string& path, const ScanOptions& options, std::optional<LogicalSummary>* logical);

// A sharded model from its index (the shards' headers, the index/shard checks, every byte, the
// convention): the index's rows and figures and the verdict; `logical` as above.
ShardedReport scan_model_index(const std::string& path, const ScanOptions& options, std::optional<LogicalSummary>* logical);

// An Ollama model from its manifest (the blobs' sizes and headers against their layers, every byte,
// the convention): one row per tensor blob and the verdict; `logical` as above.
ShardedReport scan_model_manifest(const std::string& path, const ScanOptions& options,
                                  std::optional<LogicalSummary>* logical);

// The CLI's words for the loader's manifest and blob errors (ManifestBlobMissing, ...Size,
// ...TensorInOtherLayer, ...LayerNotInBlob, ...NotSafetensors) in `*p`; others are left as they are.
void word_manifest_problem(const ModelHost& h, const std::string& blobs_dir, Problem* p);

// The logical weights and load plan of a loaded model (inspect's section); `config` is the path
// of the config.json whose quantization was used, or "".
LogicalSummary summarize_model(const ws::ModelLoader& L, uint64_t chunk, const std::string& config);

}  // namespace wscli
