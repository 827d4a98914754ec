// Reference kernel of GPTQ's packed integers (QuantFormat::GptqPacked; layout, writers and the
// reader it follows in ../gptq_packed.h): value = f32(scale[g][o]) * f32(q - zero[g][o]) with
// g = g_idx[i], one element at a time; a block is one word (3 for 3-bit codes).
#include "../gptq_packed.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

void ref::GptqPacked(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t per = gptq_block_values(s.bits), bytes = 4 * gptq_block_words(s.bits);
  const uint64_t rows = s.elements / s.row_elems;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t e = (ctx.first_block + b) * per;
    const uint64_t o = e / s.row_elems, i0 = e % s.row_elems;
    const uint8_t* block = src + bytes * b;
    for (uint32_t j = 0; j < per; ++j) {
      const uint32_t g = gptq_group_of(s, i0 + j);
      const int32_t q = int32_t(gptq_code(block, s.bits, j));
      dst[b * per + j] = gptq_scale(s, rows, g, o) * float(q - gptq_zero(s, rows, g, o));
    }
  }
}

}  // namespace kernels
}  // namespace ws
