// weightstream — which convention a safetensors file's own header says it follows.
//
// The signal is the writer's metadata, never the tensor names: a `.weight` U32 beside a `.scales`
// is MLX only when something says so, because other writers use the same names for other layouts.
// Ollama writes `quant_type` (for the blob, or `<tensor>.quant_type` per tensor); mlx.core's
// save_safetensors writes `"format": "mlx"`. A config.json with a quantization section is the other
// MLX signal, which the caller has and this file cannot see.
#include <string.h>

#include "weightstream/conventions.h"

namespace ws {

namespace {

bool is_quant_type_key(const StrView& key) {
  static const char kKey[] = "quant_type";
  const size_t n = sizeof kKey - 1;
  if (key.size < n || memcmp(key.data + key.size - n, kKey, n) != 0) return false;
  return key.size == n || key.data[key.size - n - 1] == '.';
}

}  // namespace

Convention convention_signal(const TensorTable& table) {
  uint32_t cursor = 0;
  for (uint32_t i = 0; i < table.metadata_count(); ++i)
    if (is_quant_type_key(table.metadata_at(&cursor).key)) return Convention::Ollama;
  StrView format;
  if (table.find_metadata("format", &format) && format.equals("mlx")) return Convention::Mlx;
  return Convention::Plain;
}

}  // namespace ws
