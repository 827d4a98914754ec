// Reference kernel of the Hub's block-scaled FP8 weights (QuantFormat::Fp8Block; the geometry and
// its upstream sources are in ../fp8_block.h): w = fp8(byte) * scale, in f32, one multiplication.
// F8_E4M3 is torch.float8_e4m3fn (0x7F/0xFF NaN), F8_E5M2 torch.float8_e5m2 (the top byte of a
// half).
#include <string.h>

#include "../fp8_block.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::Fp8Block(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t g = fp8_block_unit(s.row_elems, s.block_cols);  // the Dequantizer's unit
  const bool e5m2 = s.element_dtype == DType::F8_E5M2;
  for (size_t b = 0; b < n_blocks; ++b) {
    const float scale = fp8_unit_scale(s, (ctx.first_block + b) * g);
    const uint8_t* q = src + b * g;
    float* y = dst + b * g;
    for (uint32_t j = 0; j < g; ++j) y[j] = (e5m2 ? e5m2_to_f32(q[j]) : e4m3fn_to_f32(q[j])) * scale;
  }
}

}  // namespace kernels
}  // namespace ws
