// Reference kernel of bitsandbytes' 4-bit weights (QuantFormat::Bnb4; the layout, code tables and
// upstream sources are in ../bnb4.h): element 2i from the high nibble of byte i, 2i+1 from the
// low one, each code[nibble] * absmax in f32, one multiplication.
#include "../bnb4.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::Bnb4(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const Bnb4Walk w = bnb4_walk(*ctx.spec);
  const uint32_t g = w.unit;  // the Dequantizer's unit
  const float* code = bnb4_code(*ctx.spec);
  for (size_t b = 0; b < n_blocks; ++b) {
    const float absmax = bnb4_unit_absmax(w, ctx.first_block + b);
    const uint8_t* q = src + b * (g / 2);
    float* y = dst + b * g;
    for (uint32_t j = 0; j < g / 2; ++j) {
      const uint8_t byte = q[j];
      y[2 * j] = code[byte >> 4] * absmax;
      y[2 * j + 1] = code[byte & 0x0F] * absmax;
    }
  }
}

}  // namespace kernels
}  // namespace ws
