// libFuzzer target: Ollama manifest reader (ws::OllamaManifest), and the manifest/blob rules
// (manifest_blobs.h) of every parsed manifest against one fixed blob header: a size check and a
// tensor check per layer, whose verdicts must be one of their documented statuses.
#include "common.h"
#include "weightstream/manifest_blobs.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/reader.h"

namespace {

// A blob header with a plain tensor, a companion, an expert-group tensor and a name that is a
// prefix of another one without the '.': what the covering rules tell apart.
const char kBlobHeader[] =
    "{\"a.weight\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
    "\"a.weight.scale\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
    "\"model.layers.0.mlp.experts.up.weight\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[8,10]},"
    "\"ab.weight\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[10,12]}}";

struct Blob {
  uint8_t arena[4096];
  ws::Reader reader{arena, sizeof arena};
  bool ok = false;
  Blob() {
    uint8_t file[8 + sizeof kBlobHeader - 1];
    const uint64_t n = sizeof kBlobHeader - 1;
    for (int b = 0; b < 8; ++b) file[b] = uint8_t(n >> (8 * b));
    memcpy(file + 8, kBlobHeader, n);
    reader.feed(file, sizeof file);
    for (;;) {
      const ws::Event e = reader.next();
      if (e.type == ws::EventType::HeaderReady) { ok = true; break; }
      if (e.type == ws::EventType::Error || e.type == ws::EventType::NeedInput) break;
    }
  }
};

void check_blob_rules(const ws::OllamaManifest& doc) {
  static Blob blob;
  WS_CHECK(blob.ok, 0);
  const ws::TensorTable& table = blob.reader.tensors();
  for (uint32_t i = 0; i < doc.layer_count(); ++i) {
    ws::Error e;
    const uint64_t size = doc.layer(i).size;
    WS_CHECK(ws::check_manifest_blob_size(doc, i, size, &e) == ws::Status::Ok, i);
    const uint64_t other = size ^ 1;  // differs from any size, without overflow
    const ws::Status s = ws::check_manifest_blob_size(doc, i, other, &e);
    WS_CHECK(s == ws::Status::ManifestBlobSize && e.offset == (size < other ? size : other), int(s), e.offset);
    const ws::Status t = ws::check_manifest_blob_tensors(doc, i, table, &e);
    WS_CHECK(t == ws::Status::Ok || t == ws::Status::ManifestTensorInOtherLayer ||
                 t == ws::Status::ManifestLayerNotInBlob, int(t));
    if (t == ws::Status::ManifestTensorInOtherLayer) WS_CHECK(e.tensor < table.count(), e.tensor);
  }
}

}  // namespace

#define DOC ws::OllamaManifest
#define CHECK_DOC(doc) check_blob_rules(doc)
#include "json_doc_target.inc"
