// The GGML type table (ggml src/ggml.c type_traits, ggml-common.h block structs; FORMATS.md §5).
#include "weightstream/ggml_types.h"

#include "weightstream/detail/checked_mul.h"

namespace ws {

namespace {

struct Row {
  const char* name;
  GgmlTypeKind kind;
  uint16_t elems;
  uint16_t bytes;
};

constexpr GgmlTypeKind B = GgmlTypeKind::Blocks;
constexpr GgmlTypeKind R = GgmlTypeKind::Retired;

const Row kUpstream[] = {
    {"F32", B, 1, 4},        {"F16", B, 1, 2},         {"Q4_0", B, 32, 18},     {"Q4_1", B, 32, 20},
    {"Q4_2", R, 0, 0},       {"Q4_3", R, 0, 0},        {"Q5_0", B, 32, 22},     {"Q5_1", B, 32, 24},
    {"Q8_0", B, 32, 34},     {"Q8_1", B, 32, 36},      {"Q2_K", B, 256, 84},    {"Q3_K", B, 256, 110},
    {"Q4_K", B, 256, 144},   {"Q5_K", B, 256, 176},    {"Q6_K", B, 256, 210},   {"Q8_K", B, 256, 292},
    {"IQ2_XXS", B, 256, 66}, {"IQ2_XS", B, 256, 74},   {"IQ3_XXS", B, 256, 98}, {"IQ1_S", B, 256, 50},
    {"IQ4_NL", B, 32, 18},   {"IQ3_S", B, 256, 110},   {"IQ2_S", B, 256, 82},   {"IQ4_XS", B, 256, 136},
    {"I8", B, 1, 1},         {"I16", B, 1, 2},         {"I32", B, 1, 4},        {"I64", B, 1, 8},
    {"F64", B, 1, 8},        {"IQ1_M", B, 256, 56},    {"BF16", B, 1, 2},       {"Q4_0_4_4", R, 0, 0},
    {"Q4_0_4_8", R, 0, 0},   {"Q4_0_8_8", R, 0, 0},    {"TQ1_0", B, 256, 54},   {"TQ2_0", B, 256, 66},
    {"IQ4_NL_4_4", R, 0, 0}, {"IQ4_NL_4_8", R, 0, 0},  {"IQ4_NL_8_8", R, 0, 0}, {"MXFP4", B, 32, 17},
    {"NVFP4", B, 64, 36},    {"Q1_0", B, 128, 18},     {"Q2_0", B, 64, 18},
};
constexpr uint32_t kUpstreamCount = sizeof(kUpstream) / sizeof(kUpstream[0]);

// BitNet's fork: I2_S has its own size rule; I8_S, TL1, TL2 are one byte per element in its
// type table (TL1/TL2 are pre-tiled for one kernel and cannot be decoded generically).
const Row kBitNet[] = {
    {"I2_S", GgmlTypeKind::I2S, 1, 1}, {"I8_S", B, 1, 1}, {"TL1", B, 1, 1}, {"TL2", B, 1, 1},
};

}  // namespace

GgmlTypeInfo ggml_type_info(uint32_t id, GgmlDialect dialect) {
  GgmlTypeInfo info;
  const Row* row = nullptr;
  if (dialect == GgmlDialect::BitNet && id >= 36 && id <= 39) row = &kBitNet[id - 36];
  else if (id < kUpstreamCount) row = &kUpstream[id];
  if (!row) return info;
  info.name = row->name;
  info.kind = row->kind;
  info.block_elems = row->elems;
  info.block_bytes = row->bytes;
  return info;
}

bool ggml_tensor_bytes(const GgmlTypeInfo& t, uint64_t elements, uint64_t* bytes) {
  switch (t.kind) {
    case GgmlTypeKind::Blocks: {
      uint64_t blocks = elements / t.block_elems;
      return !detail::mul_overflow_u64(blocks, uint64_t(t.block_bytes), bytes);
    }
    case GgmlTypeKind::I2S:
      *bytes = elements / 4 + 32;
      return true;
    default:
      return false;
  }
}

}  // namespace ws
