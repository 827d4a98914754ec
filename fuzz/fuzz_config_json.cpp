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
  }
#include "json_doc_target.inc"
