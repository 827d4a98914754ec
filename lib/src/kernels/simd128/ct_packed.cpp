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
// f16 output: 4 bits by a 16-entry table a run (each entry the f32 formula rounded by
// f32_to_fp16, so every value is exactly the reference's f16); other widths through an L1 tile
// (256 values) and f32_to_f16_row, which rounds exactly as f32_to_fp16.
#include "../ct_packed.h"
#include "../kernel_api.h"
#include "f16_out.h"
#include "f16_util.h"
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
    const uint32_t flip = s.ct_int8 ? 0x80808080u : 0;  // int8 bytes -> offset binary (8 bits only)
    for (; k < run; ++k) ct_word(load_u32(src + 4 * (b + k)) ^ flip, bits, pf, uz, scale, dst + (b + k) * pf);
    b += run;
  }
}

}  // namespace

namespace simd {

void CtPacked(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  if (ct_g_idx_active(*ctx.spec)) return ref::CtPacked(src, n, dst, ctx);  // a group a value
  const uint32_t pf = ct_pack_factor(ctx.spec->bits);
  run_kernel(CtPacked_body, src, n, dst, ctx, 4, pf);
}

void CtPacked_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t bits = s.bits, pf = ct_pack_factor(bits);
  if (bits != 4 || ct_g_idx_active(s)) {
    // Other widths, and activation order (the reference's per-value groups): the f32 kernel into
    // an L1 tile, then f32_to_f16_row.
    alignas(16) float tile[256];
    const size_t per_tile = 256 / pf;  // pf <= 32
    for (size_t b = 0; b < n;) {
      const size_t nb = n - b < per_tile ? n - b : per_tile;
      KernelContext c = ctx;
      c.first_block = ctx.first_block + b;
      if (ct_g_idx_active(s)) ref::CtPacked(src + 4 * b, nb, tile, c);
      else CtPacked_body(src + 4 * b, nb, tile, c);
      f32_to_f16_row(tile, nb * pf, dst + b * pf);
      b += nb;
    }
    return;
  }
  // 4 bits: a run (one group of one row) has 16 distinct outputs, (u - uz) * scale for u 0..15;
  // each is the f32 formula rounded as f32_to_fp16 rounds, split into a low-byte and a high-byte table,
  // and every nibble is two byte lookups (f16_util.h's NibbleTable idea).
  const uint64_t words_per_group = s.group / pf;
  for (size_t b = 0; b < n;) {
    const uint64_t e = (ctx.first_block + b) * pf;
    float scale;
    int32_t uz;
    ct_unit_params(s, e, &scale, &uz);
    const uint64_t left = words_per_group - ((e % s.row_elems) % s.group) / pf;
    const size_t run = left < n - b ? size_t(left) : n - b;
    // The table: 16 f32 values by the formula, rounded by f32_to_f16_row (f32_to_fp16's bits).
    alignas(16) float tv[16];
    alignas(16) uint16_t th16[16];
    alignas(16) uint8_t tlo[16], thi[16];
    {
      const v128_t vs = wasm_f32x4_splat(scale), vuz = wasm_i32x4_splat(uz);
      for (int32_t q = 0; q < 4; ++q) {
        const v128_t u = wasm_i32x4_make(4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3);
        wasm_v128_store(tv + 4 * q, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u, vuz)), vs));
      }
      f32_to_f16_row(tv, 16, th16);
      const v128_t a = wasm_v128_load(th16), c = wasm_v128_load(th16 + 8);
      wasm_v128_store(tlo, wasm_i8x16_shuffle(a, c, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
      wasm_v128_store(thi, wasm_i8x16_shuffle(a, c, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
    }
    size_t k = 0;
    if (run >= 4) {
      const v128_t tl = wasm_v128_load(tlo), th = wasm_v128_load(thi);
      for (; k + 4 <= run; k += 4) {
        const v128_t q = wasm_v128_load(src + 4 * (b + k));
        const v128_t lo = lo_nibbles(q), hi = hi_nibbles(q);
        const v128_t v[2] = {wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
                             wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)};
        uint16_t* o = dst + (b + k) * pf;
        for (int h = 0; h < 2; ++h) {
          const v128_t l8 = lookup16(tl, v[h]), h8 = lookup16(th, v[h]);
          wasm_v128_store(o + 16 * h, wasm_i8x16_shuffle(l8, h8, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
          wasm_v128_store(o + 16 * h + 8,
                          wasm_i8x16_shuffle(l8, h8, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
        }
      }
    }
    for (; k < run; ++k) {
      const uint32_t w = load_u32(src + 4 * (b + k));
      uint16_t* o = dst + (b + k) * pf;
      for (uint32_t j = 0; j < pf; ++j) o[j] = uint16_t(tlo[(w >> (4 * j)) & 15] | thi[(w >> (4 * j)) & 15] << 8);
    }
    b += run;
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
