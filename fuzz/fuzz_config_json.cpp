// libFuzzer target: MLX config.json quantization reader (ws::MlxQuantConfig).
#include "weightstream/mlx_config.h"
#define DOC ws::MlxQuantConfig
// Overrides are an MLX section's: a section that names another quant_method (GPTQ's keys, which
// the reader counts as it walks them) has no MLX quantization, so lookup() answers nothing there.
#define CHECK_DOC(doc)                                                             \
  for (uint32_t i = 0; doc.has_quantization() && i < doc.override_count(); ++i) {  \
    ws::StrView p = doc.override_path(i);                                          \
    ws::QuantParams q;                                                             \
    WS_CHECK(doc.lookup(p.data, p.size, &q), i);                                   \
  }                                                                                \
  /* The module lists' entries (issue #27) are strings of the document. */       \
  for (uint32_t i = 0; i < doc.module_list_count(); ++i)                           \
    WS_CHECK(doc.module_list_entry(i).size <= size, doc.module_list_entry(i).size, size);
#include "json_doc_target.inc"
