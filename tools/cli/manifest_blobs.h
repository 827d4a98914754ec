// weightstream CLI — an Ollama model named by its manifest (FORMATS.md §3): the manifest JSON
// (manifests/registry.ollama.ai/library/<model>/<tag>) parsed by ws::OllamaManifest, and each
// tensor layer's blob found at <models root>/blobs/sha256-<hex>. The models root is the nearest
// ancestor of the manifest that has a `blobs/` directory, unless --blobs names the directory.
//
// Finding the blobs directory is here (ManifestNoBlobs); which blobs a manifest names, and the
// rules that tie a blob to its layer, are the model loader's (ws::ModelLoader).
#pragma once

#include <stdint.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "report.h"
#include "file_report.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/tensor_table.h"

namespace wscli {

// True when `path` is a regular file, not named as a shard index, whose first 4 KiB and size the
// library calls an Ollama manifest (ws::detect_file_kind: JSON, no safetensors file, naming
// "schemaVersion" or "layers"). The content decides: Ollama manifests have no extension (their
// name is the tag).
bool is_manifest_path(const std::string& path);

// Where the blobs of the manifest at `path` are: --blobs (the blobs directory itself, or the models
// root that holds it), else the nearest ancestor of the manifest with a blobs/ directory. Ends with
// '/'. Empty, with `*problem` set, when there is none (ManifestNoBlobs; a --blobs that is not a
// directory: IoError).
std::string blobs_dir_for(const std::string& path, const ScanOptions& options, std::optional<Problem>* problem);

}  // namespace wscli
