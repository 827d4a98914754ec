// Reference kernel of compressed-tensors' pack-quantized weights (QuantFormat::CtPacked; layout,
// arithmetic and upstream sources in ../ct_packed.h): w = f32(u - uz) * scale, one word at a time.
#include "../ct_packed.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::CtPacked(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t pf = ct_pack_factor(s.bits), mask = (1u << s.bits) - 1;
  const uint32_t flip = s.ct_int8 ? 0x80808080u : 0;  // int8 bytes -> offset binary (u = q + 128)
  if (ct_g_idx_active(s)) {  // activation order: a scale and zero point a value
    for (size_t b = 0; b < n_blocks; ++b) {
      const uint8_t* w = src + 4 * b;
      const uint32_t word = (uint32_t(w[0]) | uint32_t(w[1]) << 8 | uint32_t(w[2]) << 16 | uint32_t(w[3]) << 24) ^ flip;
      for (uint32_t j = 0; j < pf; ++j) {
        float scale;
        int32_t uz;
        ct_value_params(s, (ctx.first_block + b) * pf + j, &scale, &uz);
        dst[b * pf + j] = float(int32_t((word >> (j * s.bits)) & mask) - uz) * scale;
      }
    }
    return;
  }
  for (size_t b = 0; b < n_blocks; ++b) {
    float scale;
    int32_t uz;
    ct_unit_params(s, (ctx.first_block + b) * pf, &scale, &uz);
    const uint8_t* w = src + 4 * b;
    const uint32_t word = (uint32_t(w[0]) | uint32_t(w[1]) << 8 | uint32_t(w[2]) << 16 | uint32_t(w[3]) << 24) ^ flip;
    for (uint32_t j = 0; j < pf; ++j) dst[b * pf + j] = float(int32_t((word >> (j * s.bits)) & mask) - uz) * scale;
  }
}

}  // namespace kernels
}  // namespace ws
