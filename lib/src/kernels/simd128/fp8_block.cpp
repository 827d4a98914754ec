// SIMD128 kernels of the Hub's block-scaled FP8 weights (QuantFormat::Fp8Block; geometry and
// upstream sources in ../fp8_block.h). The reference's arithmetic, 16 values at a time:
// e4m3fn(q) as f32 (e4m3x16_f32<true>, exact) times the unit's scale, one f32 multiplication per
// value, so the output is the reference's bit for bit. F8_E5M2 weights (rarely written: transformers
// and DeepSeek write float8_e4m3fn) and units under 16 values take the scalar formula.
//
// f16 output: each unit's products go through an L1 tile (at most 256 values, 1 KiB) and
// f32_to_f16_row, which rounds exactly as f32_to_fp16: an FP8 value (4 significant bits) times an
// f32 scale has up to 28 significant bits, so the prescaled tricks of f16_util.h do not apply.
#include "../fp8_block.h"
#include "../kernel_api.h"
#include "f16_out.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// One unit of g values at q -> y (f32).
inline void fp8_unit(const uint8_t* q, float* y, uint32_t g, float scale, bool e5m2) {
  uint32_t j = 0;
  if (!e5m2) {
    const v128_t s = wasm_f32x4_splat(scale);
    for (; j + 16 <= g; j += 16) {
      v128_t f[4];
      e4m3x16_f32<true>(wasm_v128_load(q + j), f);
      for (int k = 0; k < 4; ++k) wasm_v128_store(y + j + 4 * k, wasm_f32x4_mul(f[k], s));
    }
  }
  for (; j < g; ++j) y[j] = (e5m2 ? e5m2_to_f32(q[j]) : e4m3fn_to_f32(q[j])) * scale;
}

void Fp8Block_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t g = fp8_block_unit(s.row_elems, s.block_cols);
  const bool e5m2 = s.element_dtype == DType::F8_E5M2;
  for (size_t b = 0; b < n; ++b)
    fp8_unit(src + b * g, dst + b * g, g, fp8_unit_scale(s, (ctx.first_block + b) * g), e5m2);
}

}  // namespace

namespace simd {

void Fp8Block(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint32_t g = fp8_block_unit(ctx.spec->row_elems, ctx.spec->block_cols);
  run_kernel(Fp8Block_body, src, n, dst, ctx, g, g);
}

void Fp8Block_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t g = fp8_block_unit(s.row_elems, s.block_cols);
  const bool e5m2 = s.element_dtype == DType::F8_E5M2;
  alignas(16) float tile[256];
  // Small units are gathered into one tile: up to 256 values per f32_to_f16_row call.
  const size_t per_tile = 256 / g;
  for (size_t b = 0; b < n;) {
    const size_t nb = n - b < per_tile ? n - b : per_tile;
    for (size_t k = 0; k < nb; ++k)
      fp8_unit(src + (b + k) * g, tile + k * g, g, fp8_unit_scale(s, (ctx.first_block + b + k) * g), e5m2);
    f32_to_f16_row(tile, nb * g, dst + b * g);
    b += nb;
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
