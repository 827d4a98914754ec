// weightstream — the kernel interface shared by the reference and SIMD128 implementations.
//
// A kernel turns n whole blocks of one format into f32 values, in element order. Both
// implementations of a format have the same signature and must give bit-identical output; the
// Dequantizer picks one through the format table and handles chunking and validation.
//
// f16 output: the SIMD128 side of many formats also has an f16 kernel, which writes exactly
// f32_to_fp16 of its f32 kernel's values without going through f32 memory (simd128/f16_util.h).
// For the others, and for the reference, the Dequantizer rounds the f32 kernel's output.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/dequant.h"

namespace ws {
namespace kernels {

struct KernelContext {
  const DequantSpec* spec;  // companion formats: bits, group, scales, biases, global scale
  uint64_t first_block;     // index of src's first block within the tensor (companion lookup)
};

using BlockKernel = void (*)(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx);
using BlockKernelF16 = void (*)(const uint8_t* src, size_t n_blocks, uint16_t* dst, const KernelContext& ctx);

// Declarations of every kernel, ref::NAME and simd::NAME for each format NAME: a format without
// both implementations does not link.
#define WS_DECLARE_KERNEL(name) \
  void name(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx);
namespace ref {
WS_QUANT_FORMAT_LIST(WS_DECLARE_KERNEL)
}
namespace simd {
WS_QUANT_FORMAT_LIST(WS_DECLARE_KERNEL)
}
#undef WS_DECLARE_KERNEL

// The formats whose SIMD128 implementation has an f16 kernel, simd::NAME_f16.
#define WS_SIMD_F16_FORMAT_LIST(X) \
  X(F32) X(F16) X(BF16) X(Q4_0) X(Q4_1) X(Q8_0) X(Q4_K) X(Q5_K) X(Q6_K) X(IQ4_NL) X(IQ4_XS) X(MXFP4) X(NVFP4) \
  X(MlxAffine) X(MlxMxfp4) X(MlxNvfp4) X(Fp8Block) X(CtPacked) X(GptqPacked) X(Bnb4) X(BnbInt8)
#define WS_DECLARE_F16_KERNEL(name) \
  void name##_f16(const uint8_t* src, size_t n_blocks, uint16_t* dst, const KernelContext& ctx);
namespace simd {
WS_SIMD_F16_FORMAT_LIST(WS_DECLARE_F16_KERNEL)
}
#undef WS_DECLARE_F16_KERNEL

struct FormatEntry {
  QuantFormatInfo info;
  BlockKernel reference;
  BlockKernel simd128;
  BlockKernelF16 simd128_f16;  // null: the Dequantizer rounds simd128's f32 output
  // Validation (ggml's row-data checks): byte offsets of fp16 scale fields in a block, and of
  // an E8M0 scale byte for which 0xFF is invalid (-1: none).
  uint8_t fp16_fields[2];
  uint8_t n_fp16_fields;
  int8_t e8m0_field;
  // Scales the offsets above cannot describe (IQ1_M's nibble-spread fp16, Q8_K's f32 d):
  // returns the byte offset within the block of an invalid scale, or -1. Null: none.
  int32_t (*check_block)(const uint8_t* block);
};

const FormatEntry& format_entry(QuantFormat f);

}  // namespace kernels
}  // namespace ws
