// Reference kernels for GGML's FP4 block formats: MXFP4 and NVFP4 (FORMATS.md §6; ggml's
// dequantize_row_mxfp4 / _nvfp4).
//
// Both store E2M1 codes. ggml keeps the E2M1 values doubled, as integers (0, 1, 2, 3, 4, 6, 8,
// 12 and their negatives), and halves the scale instead; the fp_convert.h helpers decode the
// scales with that halving built in. Each output is one integer times a power of two (MXFP4) or
// times a 4-significant-bit UE4M3 scale (NVFP4): exact, except where MXFP4's largest exponents
// overflow to ±inf as they do in ggml.
#include "../kernel_api.h"
#include "ggml_blocks.h"

namespace ws {
namespace kernels {

namespace {

// 2 × E2M1, indexed by the 4-bit code (bit 3 = sign). Code 8 (-0 in E2M1) is integer 0, so it
// decodes to +0 like code 0, as in ggml.
const int8_t kFp4Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

}  // namespace

// {u8 e (E8M0); u8 qs[16]}: y = F[nibble]·2^(e-128), nibble order as Q4_0 (low nibbles are
// values 0..15). e = 0xFF is not special-cased (ggml gives 2^127·F: ±inf for |F| >= 2); the
// Dequantizer rejects such blocks unless validation is off.
void ref::MXFP4(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 17, dst += 32) {
    const float d = e8m0_half_to_f32(src[0]);
    const uint8_t* qs = src + 1;
    for (int j = 0; j < 16; ++j) {
      dst[j] = float(kFp4Doubled[qs[j] & 0x0F]) * d;
      dst[j + 16] = float(kFp4Doubled[qs[j] >> 4]) * d;
    }
  }
}

// {u8 d[4] (UE4M3); u8 qs[32]}: four 16-value sub-blocks; sub-block s uses scale d[s] and qs
// bytes 8s..8s+7, low nibbles for its values 0..7 and high nibbles for 8..15.
void ref::NVFP4(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 36) {
    for (int s = 0; s < 4; ++s, dst += 16) {
      const float d = ue4m3_half_to_f32(src[s]);
      const uint8_t* qs = src + 4 + 8 * s;
      for (int j = 0; j < 8; ++j) {
        dst[j] = float(kFp4Doubled[qs[j] & 0x0F]) * d;
        dst[j + 8] = float(kFp4Doubled[qs[j] >> 4]) * d;
      }
    }
  }
}

}  // namespace kernels
}  // namespace ws
