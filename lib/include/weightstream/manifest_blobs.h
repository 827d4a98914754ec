// weightstream — the rules that tie an Ollama manifest's tensor layers to their blobs
// (FORMATS.md §3), shared by every caller that opens a model by its manifest (CLI, JS): a blob's
// size is its layer's `size`; no tensor of a blob is one ANOTHER layer's name covers (the blob
// belongs to another model, or the manifest was edited); the layer's own name covers at least
// one tensor of its blob (else its digest points at another blob).
//
// A blob may hold tensors no layer name covers (a mixed blob named after one of its tensors);
// companions (`<name>.scale`, ...) and an expert group's tensors (`<prefix>.<proj>.weight`) are
// covered by the layer name itself (OllamaManifest::find_layer_for_tensor).
//
// Finding and opening the blobs is the caller's (I/O): a missing blob or blobs directory are the
// callers' codes ManifestBlobMissing and ManifestNoBlobs. Allocates nothing.
#pragma once

#include <stdint.h>

#include "weightstream/ollama_manifest.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

// Blob of tensor layer `layer` is `blob_size` bytes. Differs from the layer's `size`:
// ManifestBlobSize, offset = where the shorter of the two ends, found = blob_size, expected = the
// layer's size, tensor_name = the layer's name. Ok otherwise; `*error` is set only on failure.
Status check_manifest_blob_size(const OllamaManifest& manifest, uint32_t layer, uint64_t blob_size, Error* error);

// `table` is the complete header of tensor layer `layer`'s blob. The first tensor (file order)
// that another layer's name covers: ManifestTensorInOtherLayer at its header entry (offset =
// entry_offset, tensor = its index and name, found = the covering layer's index, expected =
// `layer`). Else, when the table has tensors and none is covered by `layer`'s name:
// ManifestLayerNotInBlob at offset 0, tensor_name = the layer's name.
Status check_manifest_blob_tensors(const OllamaManifest& manifest, uint32_t layer, const TensorTable& table,
                                   Error* error);

}  // namespace ws
