// The one table of formats: geometry, validation fields and both implementations of each.
#include <string.h>

#include "kernel_api.h"
#include "reference/ggml_blocks.h"

namespace ws {
namespace kernels {

namespace {

// IQ1_M keeps its fp16 super-scale in the top nibbles of its four scale words.
int32_t check_iq1_m(const uint8_t* block) {
  uint16_t h = ggml::iq1m_super_scale(block);
  return (h & 0x7C00) == 0x7C00 ? int32_t(ggml::kIq1mScalesOffset) : -1;
}

// Q8_K's d is an f32.
int32_t check_q8_k(const uint8_t* block) {
  return (ggml::le32(block) & 0x7F800000u) == 0x7F800000u ? 0 : -1;
}

// WS_KERNELS_REFERENCE_ONLY (CMake WS_KERNELS_SIMD128=OFF, the microcontroller build): no SIMD128
// entries; the Dequantizer then runs the reference kernel for KernelImpl::Auto.
#if defined(WS_KERNELS_REFERENCE_ONLY)
#define WS_SIMD_KERNEL(name) nullptr
#define WS_SIMD_F16_KERNEL(name) nullptr
#else
#define WS_SIMD_KERNEL(name) simd::name
#define WS_SIMD_F16_KERNEL(name) simd::name##_f16
#endif
#define E(name, elems, bytes, companion, f0, f1, nf, e8) \
  {{#name, elems, bytes, companion}, ref::name, WS_SIMD_KERNEL(name), nullptr, {f0, f1}, nf, e8, nullptr}
// The same, for a format with an f16 kernel (WS_SIMD_F16_FORMAT_LIST).
#define E16(name, elems, bytes, companion, f0, f1, nf, e8) \
  {{#name, elems, bytes, companion}, ref::name, WS_SIMD_KERNEL(name), WS_SIMD_F16_KERNEL(name), {f0, f1}, nf, e8, nullptr}
#define EC(name, elems, bytes, check) \
  {{#name, elems, bytes, false}, ref::name, WS_SIMD_KERNEL(name), nullptr, {0, 0}, 0, -1, check}

// block_elems / block_bytes from ggml-common.h (FORMATS.md §5-6); fp16 scale field offsets as
// ggml's row validation checks them; companion formats take their geometry from the spec.
const FormatEntry kTable[] = {
    E16(F32, 1, 4, false, 0, 0, 0, -1),
    E16(F16, 1, 2, false, 0, 0, 0, -1),
    E16(BF16, 1, 2, false, 0, 0, 0, -1),
    E(F8_E4M3, 1, 1, false, 0, 0, 0, -1),
    E(F8_E5M2, 1, 1, false, 0, 0, 0, -1),
    E(F8_E8M0, 1, 1, false, 0, 0, 0, -1),
    E16(Q4_0, 32, 18, false, 0, 0, 1, -1),
    E16(Q4_1, 32, 20, false, 0, 2, 2, -1),
    E(Q5_0, 32, 22, false, 0, 0, 1, -1),
    E(Q5_1, 32, 24, false, 0, 2, 2, -1),
    E16(Q8_0, 32, 34, false, 0, 0, 1, -1),
    E(Q2_K, 256, 84, false, 80, 82, 2, -1),
    E(Q3_K, 256, 110, false, 108, 0, 1, -1),
    E16(Q4_K, 256, 144, false, 0, 2, 2, -1),
    E16(Q5_K, 256, 176, false, 0, 2, 2, -1),
    E16(Q6_K, 256, 210, false, 208, 0, 1, -1),
    EC(Q8_K, 256, 292, check_q8_k),
    E16(IQ4_NL, 32, 18, false, 0, 0, 1, -1),
    E16(IQ4_XS, 256, 136, false, 0, 0, 1, -1),
    E(TQ1_0, 256, 54, false, 52, 0, 1, -1),
    E(TQ2_0, 256, 66, false, 64, 0, 1, -1),
    E16(MXFP4, 32, 17, false, 0, 0, 0, 0),
    E16(NVFP4, 64, 36, false, 0, 0, 0, -1),
    E(Q1_0, 128, 18, false, 0, 0, 1, -1),
    E(Q2_0, 64, 18, false, 0, 0, 1, -1),
    E(IQ1_S, 256, 50, false, 0, 0, 1, -1),
    EC(IQ1_M, 256, 56, check_iq1_m),
    E(IQ2_XXS, 256, 66, false, 0, 0, 1, -1),
    E(IQ2_XS, 256, 74, false, 0, 0, 1, -1),
    E(IQ2_S, 256, 82, false, 0, 0, 1, -1),
    E(IQ3_XXS, 256, 98, false, 0, 0, 1, -1),
    E(IQ3_S, 256, 110, false, 0, 0, 1, -1),
    E(I2_S, 128, 32, false, 0, 0, 0, -1),
    E16(MlxAffine, 0, 0, true, 0, 0, 0, -1),
    E16(MlxMxfp4, 32, 16, true, 0, 0, 0, -1),
    E(MlxMxfp8, 32, 32, true, 0, 0, 0, -1),
    E16(MlxNvfp4, 16, 8, true, 0, 0, 0, -1),
    E(F8Q8, 32, 33, false, 0, 0, 0, -1),
    E16(Fp8Block, 0, 0, true, 0, 0, 0, -1),
    E16(CtPacked, 0, 4, true, 0, 0, 0, -1),
    E16(GptqPacked, 0, 4, true, 0, 0, 0, -1),
    E16(Bnb4, 0, 0, true, 0, 0, 0, -1),
    E16(BnbInt8, 0, 0, true, 0, 0, 0, -1),
};
#undef E
#undef E16
#undef EC
#undef WS_SIMD_KERNEL
#undef WS_SIMD_F16_KERNEL

static_assert(sizeof(kTable) / sizeof(kTable[0]) == kQuantFormatCount, "one table row per format");

}  // namespace

const FormatEntry& format_entry(QuantFormat f) {
  uint32_t i = static_cast<uint32_t>(f);
  return kTable[i < kQuantFormatCount ? i : 0];
}

}  // namespace kernels

QuantFormatInfo quant_format_info(QuantFormat f) { return kernels::format_entry(f).info; }

const char* quant_format_name(QuantFormat f) {
  return static_cast<uint32_t>(f) < kQuantFormatCount ? kernels::format_entry(f).info.name : "?";
}

bool quant_format_from_name(const char* name, QuantFormat* out) {
  for (uint32_t i = 0; i < kQuantFormatCount; ++i) {
    if (strcmp(kernels::format_entry(static_cast<QuantFormat>(i)).info.name, name) == 0) {
      *out = static_cast<QuantFormat>(i);
      return true;
    }
  }
  return false;
}

bool quant_format_from_ggml(uint32_t ggml_type, GgmlDialect dialect, QuantFormat* out) {
  if (dialect == GgmlDialect::BitNet && ggml_type == kGgmlTypeI2S) {
    *out = QuantFormat::I2_S;
    return true;
  }
  // GGML type id -> format, for the types with something to decode.
  static const struct { uint8_t id; QuantFormat f; } kMap[] = {
      {0, QuantFormat::F32},      {1, QuantFormat::F16},     {2, QuantFormat::Q4_0},
      {3, QuantFormat::Q4_1},     {6, QuantFormat::Q5_0},    {7, QuantFormat::Q5_1},
      {8, QuantFormat::Q8_0},     {10, QuantFormat::Q2_K},   {11, QuantFormat::Q3_K},
      {12, QuantFormat::Q4_K},    {13, QuantFormat::Q5_K},   {14, QuantFormat::Q6_K},
      {15, QuantFormat::Q8_K},    {16, QuantFormat::IQ2_XXS}, {17, QuantFormat::IQ2_XS},
      {18, QuantFormat::IQ3_XXS}, {19, QuantFormat::IQ1_S},  {20, QuantFormat::IQ4_NL},
      {21, QuantFormat::IQ3_S},   {22, QuantFormat::IQ2_S},  {23, QuantFormat::IQ4_XS},
      {29, QuantFormat::IQ1_M},   {30, QuantFormat::BF16},   {34, QuantFormat::TQ1_0},
      {35, QuantFormat::TQ2_0},   {39, QuantFormat::MXFP4},  {40, QuantFormat::NVFP4},
      {41, QuantFormat::Q1_0},    {42, QuantFormat::Q2_0},
  };
  if (dialect == GgmlDialect::BitNet && ggml_type >= 36 && ggml_type <= 39) return false;  // I8_S, TL1, TL2
  for (const auto& m : kMap) {
    if (m.id == ggml_type) {
      *out = m.f;
      return true;
    }
  }
  return false;
}

bool quant_format_from_dtype(DType dtype, QuantFormat* out) {
  switch (dtype) {
    case DType::F32: *out = QuantFormat::F32; return true;
    case DType::F16: *out = QuantFormat::F16; return true;
    case DType::BF16: *out = QuantFormat::BF16; return true;
    case DType::F8_E4M3: *out = QuantFormat::F8_E4M3; return true;
    case DType::F8_E5M2: *out = QuantFormat::F8_E5M2; return true;
    case DType::F8_E8M0: *out = QuantFormat::F8_E8M0; return true;
    default: return false;
  }
}

}  // namespace ws
