// libFuzzer target: Ollama manifest reader (ws::OllamaManifest).
#include "weightstream/ollama_manifest.h"
#define DOC ws::OllamaManifest
#define CHECK_DOC(doc)                                     \
  for (uint32_t i = 0; i < doc.layer_count(); ++i) {       \
    ws::ManifestLayer l = doc.layer(i);                    \
    (void)l;                                               \
  }
#include "json_doc_target.inc"
