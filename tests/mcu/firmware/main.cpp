// Firmware: both sample models from flash through the reader (and the dequantizer, in the
// configurations that have it), or (the model-loader configuration) a two-file sharded model and
// a block-FP8 model with its config.json through ws::ModelLoader; checksums and measurements over
// semihosting.
#include "../app.h"
#include "../models.h"
#include "models_data.h"  // generated: the model arrays and WS_MCU_ARENA_BYTES
#include "startup.h"

namespace mcu {
void put(const char* s) { semihost_write0(s); }
}  // namespace mcu

namespace {
// Sized at build time by the library's own report (ws-mcu-host sizes it: Reader::arena_needed()).
#if WS_MCU_DEQUANT == 3
// The model loader's: the larger need of the two models (index, readers, config, weights, scratch).
alignas(16) uint8_t g_arena[WS_MCU_LOADER_ARENA_BYTES];
#elif WS_MCU_DEQUANT == 4
// ... and the three files' digest records.
alignas(16) uint8_t g_arena[WS_MCU_LOADER_SHA_ARENA_BYTES];
#else
alignas(8) uint8_t g_arena[WS_MCU_ARENA_BYTES];
#endif

char* dec(char* o, uint32_t v) {
  char t[12];
  int n = 0;
  do { t[n++] = char('0' + v % 10); v /= 10; } while (v);
  while (n) *o++ = t[--n];
  return o;
}
}  // namespace

extern "C" int main() {
  static const mcu::Model models[] = {
      {"gguf", mcu::kModelGguf, sizeof mcu::kModelGguf, mcu::kGgufDequant},
      {"safetensors", mcu::kModelSafetensors, sizeof mcu::kModelSafetensors, mcu::kSafetensorsDequant},
  };
  int rc = 0;
#if WS_MCU_DEQUANT == 3
  // A two-file model (two shards and their index) through the model loader.
  (void)models;
  static const mcu::FlashFile files[] = {
      {"model.safetensors.index.json", mcu::kShardIndex, sizeof mcu::kShardIndex},
      {"model-00001-of-00002.safetensors", mcu::kShard1, sizeof mcu::kShard1},
      {"model-00002-of-00002.safetensors", mcu::kShard2, sizeof mcu::kShard2},
  };
  rc |= mcu::run_loader("sharded", files, 3, g_arena, sizeof g_arena);
  // A block-FP8 model: config.json (quant_method fp8) read from flash, the weight decoded with its
  // 2 x 2 scale grid.
  static const mcu::FlashFile fp8_files[] = {
      {"model.safetensors.index.json", mcu::kFp8Index, sizeof mcu::kFp8Index},
      {"model-00001-of-00001.safetensors", mcu::kFp8Shard, sizeof mcu::kFp8Shard},
      {"config.json", mcu::kFp8Config, sizeof mcu::kFp8Config},
  };
  rc |= mcu::run_loader("fp8", fp8_files, 3, g_arena, sizeof g_arena);
  // The FP8 model converted to bf16 safetensors (convert's plan and writer), checksummed as written.
  rc |= mcu::run_convert("fp8", fp8_files, 3, g_arena, sizeof g_arena);
#elif WS_MCU_DEQUANT == 4
  // The same model, every file verified against its SHA-256 while it streams.
  (void)models;
  static const mcu::FlashFile files[] = {
      {"model.safetensors.index.json", mcu::kShardIndex, sizeof mcu::kShardIndex, mcu::kShardIndexSha256},
      {"model-00001-of-00002.safetensors", mcu::kShard1, sizeof mcu::kShard1, mcu::kShard1Sha256},
      {"model-00002-of-00002.safetensors", mcu::kShard2, sizeof mcu::kShard2, mcu::kShard2Sha256},
  };
  rc |= mcu::run_loader("sharded-sha256", files, 3, g_arena, sizeof g_arena);
#else
  for (const mcu::Model& m : models) rc |= mcu::run_model(m, g_arena, sizeof g_arena);
#endif

  uint32_t hw = stack_high_water();
  char line[96];
  char* o = line;
  for (const char* s = "mcu arena="; *s;) *o++ = *s++;
  o = dec(o, uint32_t(sizeof g_arena));
  for (const char* s = " stack_high_water="; *s;) *o++ = *s++;
  o = dec(o, hw);
  for (const char* s = " stack_budget=2048"; *s;) *o++ = *s++;
  for (const char* s = hw <= 2048 ? " ok\n" : " OVER\n"; *s;) *o++ = *s++;
  *o = 0;
  semihost_write0(line);
  if (hw > 2048) rc = 1;
  semihost_write0(rc == 0 ? "mcu PASS\n" : "mcu FAIL\n");
  return rc;
}
