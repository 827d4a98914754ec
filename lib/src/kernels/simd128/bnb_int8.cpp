// SIMD128 kernels of bitsandbytes' 8-bit weights (QuantFormat::BnbInt8; upstream sources in
// ../bnb_int8.h). The reference's arithmetic 16 values at a time: the I8 values sign-extended
// and converted exactly, times the row's SCB, then times the f32 constant — the same two
// roundings, so the output is the reference's bit for bit. Units under 16 values take the scalar
// formula. f16 output: each unit through an L1 tile (at most 256 values) and f32_to_f16_row, the
// exact rounding (a product of two f32 roundings has too many bits for f16_util.h's tricks).
#include "../bnb_int8.h"
#include "../kernel_api.h"
#include "f16_out.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

inline void int8_unit(const uint8_t* q, float* y, uint32_t g, float scb) {
  uint32_t j = 0;
  const v128_t s = wasm_f32x4_splat(scb), k = wasm_f32x4_splat(kBnbInt8Inverse127);
  for (; j + 16 <= g; j += 16) {
    const v128_t v = wasm_v128_load(q + j);
    wasm_v128_store(y + j + 0, wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<0>(v)), s), k));
    wasm_v128_store(y + j + 4, wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<1>(v)), s), k));
    wasm_v128_store(y + j + 8, wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<2>(v)), s), k));
    wasm_v128_store(y + j + 12, wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(i8_lanes<3>(v)), s), k));
  }
  for (; j < g; ++j) {
    const float scaled = float(int8_t(q[j])) * scb;
    y[j] = scaled * kBnbInt8Inverse127;
  }
}

void BnbInt8_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t g = bnb_int8_unit(s.row_elems);
  for (size_t b = 0; b < n; ++b) int8_unit(src + b * g, dst + b * g, g, bnb_int8_scb(s, (ctx.first_block + b) * g));
}

}  // namespace

namespace simd {

void BnbInt8(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint32_t g = bnb_int8_unit(ctx.spec->row_elems);
  run_kernel(BnbInt8_body, src, n, dst, ctx, g, g);
}

void BnbInt8_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t g = bnb_int8_unit(s.row_elems);
  alignas(16) float tile[256];
  const size_t per_tile = 256 / g;
  for (size_t b = 0; b < n;) {
    const size_t nb = n - b < per_tile ? n - b : per_tile;
    for (size_t k = 0; k < nb; ++k)
      int8_unit(src + (b + k) * g, tile + k * g, g, bnb_int8_scb(s, (ctx.first_block + b + k) * g));
    f32_to_f16_row(tile, nb * g, dst + b * g);
    b += nb;
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
