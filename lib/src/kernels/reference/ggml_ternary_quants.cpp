// Reference kernels for the GGML ternary and 1-/2-bit formats: TQ1_0, TQ2_0, Q1_0, Q2_0, and
// BitNet's per-tensor I2_S (FORMATS.md §5-6; ggml's dequantize_row_tq1_0/_tq2_0/_q1_0/_q2_0).
//
// Every value is (small integer)·scale with the integer in {-1, 0, 1} (I2_S: also 2), so each
// product is exact. A zero code gives 0·d, which is -0 when d is negative — as in ggml, which
// computes (float)(q - 1) * d; the output keeps that sign rather than normalising it.
#include "../kernel_api.h"
#include "ggml_blocks.h"

namespace ws {
namespace kernels {

using ggml::fp16_at;

namespace {

// TQ1_0 packs five trits per byte as a base-3 fraction: byte = ceil(256·t/243) with t the 5-trit
// number, most significant trit first. Multiplying by 3^n (mod 256) shifts trit n to the top;
// (q·3) >> 8 then reads it as 0, 1 or 2.
inline float tq1_trit(uint8_t byte, uint8_t pow3, float d) {
  const uint8_t q = uint8_t(byte * pow3);
  const int t = (int(q) * 3) >> 8;
  return float(t - 1) * d;
}

const uint8_t kPow3[5] = {1, 3, 9, 27, 81};

}  // namespace

// {u8 qs[48]; u8 qh[4]; fp16 d}: qs[0..31] carry 5 trits each for values 0..159 (trit n of byte
// m is value 32n + m), qs[32..47] for values 160..239 (160 + 16n + m), and qh carries 4 trits
// each for values 240..255 (240 + 4n + j).
void ref::TQ1_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 54) {
    const float d = fp16_at(src + 52);
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 32; ++m) *dst++ = tq1_trit(src[m], kPow3[n], d);
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 16; ++m) *dst++ = tq1_trit(src[32 + m], kPow3[n], d);
    for (int n = 0; n < 4; ++n)
      for (int j = 0; j < 4; ++j) *dst++ = tq1_trit(src[48 + j], kPow3[n], d);
  }
}

// {u8 qs[64]; fp16 d}: two 128-value halves; byte m of a half's 32 bytes holds values m, m+32,
// m+64, m+96 at shifts 0, 2, 4, 6. y = (q - 1)·d.
void ref::TQ2_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 66) {
    const float d = fp16_at(src + 64);
    for (int half = 0; half < 2; ++half)
      for (int shift = 0; shift < 8; shift += 2)
        for (int m = 0; m < 32; ++m) *dst++ = float(((src[32 * half + m] >> shift) & 3) - 1) * d;
  }
}

// {fp16 d; u8 qs[16]}, 128 values: bit j%8 of byte j/8 set gives +d, clear gives -d.
void ref::Q1_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 18, dst += 128) {
    const float d = fp16_at(src);
    const float neg_d = -d;
    for (int j = 0; j < 128; ++j) dst[j] = ((src[2 + j / 8] >> (j % 8)) & 1) ? d : neg_d;
  }
}

// {fp16 d; u8 qs[16]}, 64 values: value j is bits 2(j%4)..+1 of byte j/4, y = (q - 1)·d.
void ref::Q2_0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 18, dst += 64) {
    const float d = fp16_at(src);
    for (int j = 0; j < 64; ++j) dst[j] = float(((src[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
  }
}

// BitNet I2_S, x86 layout (the one microsoft/BitNet's converter writes): 128-value groups of 32
// bytes; value j of a group sits in byte j%32 at shift 6 - 2·(j/32) (the first 32 values in the
// top bits). y = (code - 1)·scale with the tensor's one f32 scale (its 32-byte tail, passed in the
// spec). The quantizer only writes codes 0, 1, 2 (-1, 0, +1). Code 3 is decoded by the same line
// formula, as +2·scale: that is what the fork's matmul computes for it (it takes the codes as
// unsigned 0..3 in an integer dot product and subtracts the activation sum afterwards, i.e.
// Σ(code - 1)·a), so decoding it any other way would disagree with the fork's own inference.
void ref::I2_S(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const float scale = ctx.spec->global_scale;
  for (size_t b = 0; b < n_blocks; ++b, src += 32, dst += 128) {
    for (int j = 0; j < 128; ++j) {
      const int code = (src[j % 32] >> (6 - 2 * (j / 32))) & 3;
      dst[j] = float(code - 1) * scale;
    }
  }
}

}  // namespace kernels
}  // namespace ws
