// weightstream — an Ollama manifest's rules for its blobs (see manifest_blobs.h). A file of its
// own: only callers that open a model by its manifest link it (the MCU parser build does not).
#include "weightstream/manifest_blobs.h"

namespace ws {
namespace {

// Names the layer: a blob's problems are the layer's (its name is what users find in the manifest).
void set_layer_name(const OllamaManifest& m, uint32_t layer, Error* e) {
  const StrView name = m.layer(layer).name;
  e->tensor_name = name.data;
  e->tensor_name_size = name.size;
}

}  // namespace

Status check_manifest_blob_size(const OllamaManifest& manifest, uint32_t layer, uint64_t blob_size, Error* error) {
  const uint64_t want = manifest.layer(layer).size;
  if (blob_size == want) return Status::Ok;
  *error = Error();
  error->code = Status::ManifestBlobSize;
  // The first byte that is not as the manifest says: past the end of a short blob, or the first
  // byte a long blob has beyond the layer's size.
  error->offset = blob_size < want ? blob_size : want;
  set_layer_name(manifest, layer, error);
  error->set_found(blob_size);
  error->set_expected(want);
  return error->code;
}

Status check_manifest_blob_tensors(const OllamaManifest& manifest, uint32_t layer, const TensorTable& table,
                                   Error* error) {
  bool covered = false;
  for (uint32_t i = 0; i < table.count(); ++i) {
    const TensorInfo t = table.get(i);
    const uint32_t owner = manifest.find_layer_for_tensor(t.name.data, t.name.size);
    if (owner == layer) covered = true;
    if (owner == kNoTensor || owner == layer) continue;
    // Another layer's blob is where this tensor belongs: two models' files are mixed.
    *error = Error();
    error->code = Status::ManifestTensorInOtherLayer;
    error->offset = t.entry_offset;
    error->tensor = i;
    error->tensor_name = t.name.data;
    error->tensor_name_size = t.name.size;
    error->set_found(owner);
    error->set_expected(layer);
    return error->code;
  }
  // An empty blob is left to the reader's own checks (it names no tensor the layer could miss).
  if (covered || table.count() == 0) return Status::Ok;
  *error = Error();
  error->code = Status::ManifestLayerNotInBlob;
  set_layer_name(manifest, layer, error);
  return error->code;
}

}  // namespace ws
