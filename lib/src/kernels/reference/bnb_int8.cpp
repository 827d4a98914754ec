// Reference kernel of bitsandbytes' 8-bit weights (QuantFormat::BnbInt8; upstream sources in
// ../bnb_int8.h): w = f32(f32(q) * SCB[row]) * 7.874015718698502e-3f, two f32 multiplications.
#include "../bnb_int8.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::BnbInt8(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t g = bnb_int8_unit(s.row_elems);  // the Dequantizer's unit
  for (size_t b = 0; b < n_blocks; ++b) {
    const float scb = bnb_int8_scb(s, (ctx.first_block + b) * g);
    const uint8_t* q = src + b * g;
    float* y = dst + b * g;
    for (uint32_t j = 0; j < g; ++j) {
      const float scaled = float(int8_t(q[j])) * scb;
      y[j] = scaled * kBnbInt8Inverse127;
    }
  }
}

}  // namespace kernels
}  // namespace ws
