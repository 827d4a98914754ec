// weightstream CLI — an Ollama model named by its manifest (FORMATS.md §3): the manifest JSON
// (manifests/registry.ollama.ai/library/<model>/<tag>) parsed by ws::OllamaManifest, and each
// tensor layer's blob found at <models root>/blobs/sha256-<hex>. The models root is the nearest
// ancestor of the manifest that has a `blobs/` directory, unless --blobs names the directory.
//
// Finding and opening the blobs is here (I/O: ManifestNoBlobs, ManifestBlobMissing); the rules
// that tie a blob to its layer (size, which layer's name covers its tensors) are the library's,
// ws::check_manifest_blob_size / check_manifest_blob_tensors (weightstream/manifest_blobs.h),
// shared with the JS bindings; this file words their problems.
#pragma once

#include <stdint.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "report.h"
#include "scan_file.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/tensor_table.h"

namespace wscli {

// True when `path` is a regular file whose JSON looks like a manifest (an object with
// "schemaVersion" or "layers" in its first 4 KiB) and is not a shard index. The content decides:
// Ollama manifests have no extension (their name is the tag).
bool is_manifest_path(const std::string& path);

struct ManifestBlob {
  uint32_t layer = 0;  // index of the layer in the manifest
  std::string name;    // the layer's name (a tensor key or an expert group's prefix)
  std::string file;    // "sha256-<hex>"
  std::string path;    // blobs directory + file
  uint64_t size = 0;   // as the manifest says (checked against the file)
};

struct ManifestFiles {
  std::vector<uint64_t> arena;                // the manifest's layers live here
  std::unique_ptr<ws::OllamaManifest> manifest;
  bool parsed = false;                        // the manifest itself is valid
  std::string blobs_dir;                      // ends with '/'
  std::vector<ManifestBlob> blobs;            // tensor layers, in manifest order
};

// Parses the manifest, finds the blobs directory and checks every tensor layer's blob exists
// with the manifest's size. Problems: an unreadable or invalid manifest (its ws::Status, offset
// in the manifest), no blobs directory (UsageError-like "ManifestNoBlobs", exit 2), a missing
// blob ("ManifestBlobMissing", I/O, exit 2), a blob of another size ("ManifestBlobSize", exit 1,
// offset = where the shorter of the two ends). Blob problems name the layer and the blob.
std::optional<Problem> read_manifest(const std::string& path, const ScanOptions& options, ManifestFiles* out);

// Where the blobs of the manifest at `path` are: --blobs (the blobs directory itself, or the models
// root that holds it), else the nearest ancestor of the manifest with a blobs/ directory. Ends with
// '/'. Empty, with `*problem` set, when there is none (ManifestNoBlobs; a --blobs that is not a
// directory: IoError).
std::string blobs_dir_for(const std::string& path, const ScanOptions& options, std::optional<Problem>* problem);

// A tensor of `blob`'s header that another layer's name covers: "ManifestTensorInOtherLayer" at
// the tensor's header entry. A layer name that covers no tensor of its blob (the digest points
// at another blob): "ManifestLayerNotInBlob" at offset 0.
std::optional<Problem> check_blob_tensors(const ManifestFiles& files, const ManifestBlob& blob,
                                          const ws::TensorTable& table);

}  // namespace wscli
