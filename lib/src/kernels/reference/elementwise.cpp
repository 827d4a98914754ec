// Reference kernels for the element-wise formats (safetensors dtypes and GGUF F32/F16/BF16).
//
// One stored value per block. The small-float conventions are the tensor dtypes' (torch), not
// the block-scale ones: F8_E4M3 is float8_e4m3fn (0x7F/0xFF are NaN, sign kept) and F8_E8M0 is
// float8_e8m0fnu (0x00 is 2^-127, 0xFF is NaN). Values are moved as bit patterns where the
// conversion is a bit operation, so NaN payloads (BF16's signaling NaNs included) pass unchanged;
// F16 NaNs come out quiet, as ggml's F16C path gives them (testdata README §4).
#include <string.h>

#include "../fp_convert.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::F32(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  // A byte copy: loading and storing through float registers could quiet a signaling NaN on
  // some targets (x87); memcpy keeps every pattern.
  memcpy(dst, src, n_blocks * 4);
}

void ref::F16(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t i = 0; i < n_blocks; ++i) {
    uint16_t h = uint16_t(src[2 * i] | (src[2 * i + 1] << 8));
    uint32_t bits = f32_to_bits(fp16_to_f32(h));
    memcpy(dst + i, &bits, 4);
  }
}

void ref::BF16(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t i = 0; i < n_blocks; ++i) {
    uint32_t bits = (uint32_t(src[2 * i]) | (uint32_t(src[2 * i + 1]) << 8)) << 16;
    memcpy(dst + i, &bits, 4);
  }
}

void ref::F8_E4M3(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t i = 0; i < n_blocks; ++i) dst[i] = e4m3fn_to_f32(src[i]);
}

void ref::F8_E5M2(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t i = 0; i < n_blocks; ++i) dst[i] = e5m2_to_f32(src[i]);
}

void ref::F8_E8M0(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t i = 0; i < n_blocks; ++i) dst[i] = e8m0fnu_to_f32(src[i]);
}

}  // namespace kernels
}  // namespace ws
