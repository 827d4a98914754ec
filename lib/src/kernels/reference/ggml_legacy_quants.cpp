// Reference kernels for GGML's original 32-element blocks: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
// (FORMATS.md §6; ggml's dequantize_row_q4_0 .. _q8_0).
//
// All five share one shape: an fp16 scale d (and, for the _1 variants, an fp16 offset m), then
// 32 quants stored as "low half, high half": byte j holds element j in its low nibble and element
// j + 16 in its high nibble. The arithmetic is ggml's, in ggml's order: q·d for the _0 types
// (an 11-bit fp16 significand times a small integer: exact in f32), q·d + m for the _1 types
// (the product is exact, the addition rounds once; the build forbids contracting it into an FMA,
// which would skip that rounding).
#include "../kernel_api.h"
#include "ggml_blocks.h"

namespace ws {
namespace kernels {

using ggml::fp16_at;
using ggml::le32;

// {fp16 d; u8 qs[16]}: y = (nibble - 8)·d.
void ref::Q4_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = fp16_at(src);
    const uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = float((qs[j] & 0x0F) - 8) * d;
      dst[j + 16] = float((qs[j] >> 4) - 8) * d;
    }
  }
}

// {fp16 d; fp16 m; u8 qs[16]}: y = nibble·d + m.
void ref::Q4_1(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const float d = fp16_at(src);
    const float m = fp16_at(src + 2);
    const uint8_t* qs = src + 4;
    for (int j = 0; j < 16; ++j) {
      dst[j] = float(qs[j] & 0x0F) * d + m;
      dst[j + 16] = float(qs[j] >> 4) * d + m;
    }
  }
}

// {fp16 d; u8 qh[4]; u8 qs[16]}: the fifth bit of element j is bit j of qh (a little-endian u32),
// so the low half takes bits 0..15 and the high half bits 16..31. y = (q5 - 16)·d.
void ref::Q5_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const float d = fp16_at(src);
    const uint32_t qh = le32(src + 2);
    const uint8_t* qs = src + 6;
    for (int j = 0; j < 16; ++j) {
      const int lo = (qs[j] & 0x0F) | int(((qh >> j) & 1) << 4);
      const int hi = (qs[j] >> 4) | int(((qh >> (j + 16)) & 1) << 4);
      dst[j] = float(lo - 16) * d;
      dst[j + 16] = float(hi - 16) * d;
    }
  }
}

// {fp16 d; fp16 m; u8 qh[4]; u8 qs[16]}: as Q5_0 without the -16, then ·d + m.
void ref::Q5_1(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const float d = fp16_at(src);
    const float m = fp16_at(src + 2);
    const uint32_t qh = le32(src + 4);
    const uint8_t* qs = src + 8;
    for (int j = 0; j < 16; ++j) {
      const int lo = (qs[j] & 0x0F) | int(((qh >> j) & 1) << 4);
      const int hi = (qs[j] >> 4) | int(((qh >> (j + 16)) & 1) << 4);
      dst[j] = float(lo) * d + m;
      dst[j + 16] = float(hi) * d + m;
    }
  }
}

// {fp16 d; i8 qs[32]}: y = q·d, elements in storage order.
void ref::Q8_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const float d = fp16_at(src);
    for (int j = 0; j < 32; ++j) dst[j] = float(int8_t(src[2 + j])) * d;
  }
}

}  // namespace kernels
}  // namespace ws
