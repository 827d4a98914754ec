// weightstream — the kernel interface shared by the reference and SIMD128 implementations.
//
// A kernel turns n whole blocks of one format into f32 values, in element order. Both
// implementations of a format have the same signature and must give bit-identical output; the
// Dequantizer picks one through the format table and handles chunking, validation and f16 output.
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

struct FormatEntry {
  QuantFormatInfo info;
  BlockKernel reference;
  BlockKernel simd128;
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
