// SIMD128 kernels of compressed-tensors' pack-quantized weights (QuantFormat::CtPacked; layout,
// arithmetic and upstream sources in ../ct_packed.h). The reference's arithmetic: u - uz as an
// exact i32, converted to f32, times the word's scale, one f32 multiplication per value, so the
// output is the reference's bit for bit.
//
// The hot path is 4 bits (the W4A16 recipes): the words of one run (the words of a row that share
// a group, so a scale and a zero point) go 4 at a time, 16 bytes = 32 values: low nibbles are the
// even values, high nibbles the odd ones, interleaved back by one shuffle each half. Other widths,
// and the last words of a run, take the scalar formula.
//
// f16 output: the products go through an L1 tile (256 values) and f32_to_f16_row, which rounds
// exactly as f32_to_fp16 (an f32 scale times a 9-bit integer has up to 33 significant bits, so
// the f32 product is rounded once already; the f16 value is that rounded again, as the reference).
#include "../ct_packed.h"
#include "../kernel_api.h"
#include "f16_out.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

inline void ct_word(uint32_t word, uint32_t bits, uint32_t pf, int32_t uz, float scale, float* y) {
  const uint32_t mask = (1u << bits) - 1;
  for (uint32_t j = 0; j < pf; ++j) y[j] = float(int32_t((word >> (j * bits)) & mask) - uz) * scale;
}

// Four 4-bit words (32 values) at q -> y.
inline void ct_4bit_x4(const uint8_t* q, v128_t uz, v128_t s, float* y) {
  const v128_t b = wasm_v128_load(q);
  const v128_t lo = lo_nibbles(b), hi = hi_nibbles(b);
  const v128_t v0 = wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t v1 = wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const v128_t v[2] = {v0, v1};
  for (int h = 0; h < 2; ++h) {
    float* o = y + 16 * h;
    wasm_v128_store(o + 0, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<0>(v[h]), uz)), s));
    wasm_v128_store(o + 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<1>(v[h]), uz)), s));
    wasm_v128_store(o + 8, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<2>(v[h]), uz)), s));
    wasm_v128_store(o + 12, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<3>(v[h]), uz)), s));
  }
}

void CtPacked_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t bits = s.bits, pf = ct_pack_factor(bits);
  const uint64_t words_per_group = s.group / pf;
  for (size_t b = 0; b < n;) {
    const uint64_t e = (ctx.first_block + b) * pf;
    float scale;
    int32_t uz;
    ct_unit_params(s, e, &scale, &uz);
    // The run: the words left in this group of this row (a group never crosses a row).
    const uint64_t left = words_per_group - ((e % s.row_elems) % s.group) / pf;
    const size_t run = left < n - b ? size_t(left) : n - b;
    size_t k = 0;
    if (bits == 4) {
      const v128_t vuz = wasm_i32x4_splat(uz), vs = wasm_f32x4_splat(scale);
      for (; k + 4 <= run; k += 4) ct_4bit_x4(src + 4 * (b + k), vuz, vs, dst + (b + k) * pf);
    }
    for (; k < run; ++k) ct_word(load_u32(src + 4 * (b + k)), bits, pf, uz, scale, dst + (b + k) * pf);
    b += run;
  }
}

}  // namespace

namespace simd {

void CtPacked(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint32_t pf = ct_pack_factor(ctx.spec->bits);
  run_kernel(CtPacked_body, src, n, dst, ctx, 4, pf);
}

void CtPacked_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const uint32_t pf = ct_pack_factor(ctx.spec->bits);
  alignas(16) float tile[256];
  const size_t per_tile = 256 / pf;  // pf <= 32
  for (size_t b = 0; b < n;) {
    const size_t nb = n - b < per_tile ? n - b : per_tile;
    KernelContext c = ctx;
    c.first_block = ctx.first_block + b;
    CtPacked_body(src + 4 * b, nb, tile, c);
    f32_to_f16_row(tile, nb * pf, dst + b * pf);
    b += nb;
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
