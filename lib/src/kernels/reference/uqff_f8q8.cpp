// Reference kernel for UQFF's F8Q8 layers (mistral.rs `mistralrs-quant/src/f8q8`, FORMATS.md §4):
// 33-byte blocks {E4M3 d; i8 qs[32]}, value = qs * d / 448.
//
// Operation order, as mistral.rs's to_float does it (the SIMD128 kernel must match):
//   d = e4m3fn(byte) / 448.0f        (f32 division, rounded once per block)
//   y[j] = float(qs[j]) * d          (rounded once)
// mistral.rs decodes d with the float8 crate's F8E4M3 (via f16), i.e. E4M3FN: 0x7F and 0xFF are
// NaN — and that crate gives a positive NaN whatever the sign bit. So a NaN scale byte makes the
// whole block +NaN (0x7FC00000 here), written explicitly rather than left to how the platform
// propagates NaN through the divide and multiply (wasm leaves the sign unspecified).
#include "../fp_convert.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::F8Q8(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = src + b * 33;
    if ((blk[0] & 0x7F) == 0x7F) {
      for (int j = 0; j < 32; ++j) dst[j] = bits_to_f32(0x7FC00000u);
    } else {
      const float d = e4m3fn_to_f32(blk[0]) / 448.0f;
      for (int j = 0; j < 32; ++j) dst[j] = float(int8_t(blk[1 + j])) * d;
    }
    dst += 32;
  }
}

}  // namespace kernels
}  // namespace ws
