// f32 -> f16, eight values at a time, with f32_to_fp16's exact rounding (see f16_out.h).
//
// Per lane, on the magnitude a = |x| as bits:
//   a >= 0x38800000 (normal half range): the half is (a - (112 << 23)) >> 13 rounded to nearest
//     even: add 0xFFF plus the lowest kept bit, then shift. Values from 65520 up carry into
//     exponent 31 and come out as inf; from 65536 (0x47800000) up the sum would run past it, so
//     they are forced to inf.
//   a < 0x38800000 (half subnormal or zero): adding 0.5f in floating point rounds a onto the
//     2^-24 grid of half subnormals with the FPU's own round-to-nearest-even; the result's low
//     bits are the half. Below 2^-25 everything rounds to 0, so those lanes add 0 instead: an f32
//     subnormal operand would cost a microcode assist.
//   NaN: 0x7E00 | the top 10 payload bits.
// The sign is put back on at the end.
#include "f16_out.h"

#include "simd_util.h"

namespace ws {
namespace kernels {
namespace simd128 {

namespace {

// Four f32 -> four halves in the low 16 bits of u32 lanes, sign included. kSpecial: lanes may
// hold values from 65536 up (inf, NaN); without it they must not (the caller checks).
template <bool kSpecial>
inline v128_t f32x4_to_f16x4(v128_t x) {
  const v128_t sign = wasm_u32x4_shr(wasm_v128_and(x, splat_u32(0x80000000u)), 16);
  const v128_t a = wasm_v128_and(x, splat_u32(0x7FFFFFFFu));
  // Normal range.
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(a, 13), splat_u32(1));
  v128_t normal = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(a, splat_u32(0xC8000FFFu)), odd), 13);  // - (112 << 23) + 0xFFF
  if (kSpecial) normal = wasm_v128_bitselect(splat_u32(0x7C00), normal, wasm_i32x4_gt(a, splat_u32(0x477FFFFFu)));
  // Subnormal range (and zero).
  const v128_t sub_in = wasm_v128_andnot(a, wasm_i32x4_lt(a, splat_u32(0x33000000u)));
  const v128_t sub = wasm_i32x4_sub(wasm_f32x4_add(sub_in, wasm_f32x4_splat(0.5f)), splat_u32(0x3F000000u));
  v128_t h = wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(a, splat_u32(0x38800000u)));
  if (kSpecial) {  // NaN
    const v128_t nan = wasm_v128_or(splat_u32(0x7E00), wasm_v128_and(wasm_u32x4_shr(a, 13), splat_u32(0x3FF)));
    h = wasm_v128_bitselect(nan, h, wasm_i32x4_gt(a, splat_u32(0x7F800000u)));
  }
  return wasm_v128_or(h, sign);
}

}  // namespace

void f32_to_f16_row(const float* in, size_t n, uint16_t* out) {
  f32_bytes_to_f16_row(reinterpret_cast<const uint8_t*>(in), n, out);
}

void f32_bytes_to_f16_row(const uint8_t* in, size_t n, uint16_t* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t x0 = wasm_v128_load(in + 4 * i), x1 = wasm_v128_load(in + 4 * i + 16);
    // Inf, NaN and values that overflow to inf take the full conversion; dequantized weights
    // almost never do.
    const v128_t big = wasm_i32x4_max(wasm_v128_and(x0, splat_u32(0x7FFFFFFFu)), wasm_v128_and(x1, splat_u32(0x7FFFFFFFu)));
    v128_t lo, hi;
    if (wasm_v128_any_true(wasm_i32x4_gt(big, splat_u32(0x477FFFFFu)))) {
      lo = f32x4_to_f16x4<true>(x0);
      hi = f32x4_to_f16x4<true>(x1);
    } else {
      lo = f32x4_to_f16x4<false>(x0);
      hi = f32x4_to_f16x4<false>(x1);
    }
    // Lanes hold 0..0xFFFF (the sign is bit 15, never above): the unsigned saturating narrow of
    // signed lanes keeps them as they are, one packusdw natively, where SIMDe lowers the byte
    // shuffle it replaces generically (f32_to_bf16_row below found the same).
    wasm_v128_store(out + i, wasm_u16x8_narrow_i32x4(lo, hi));
  }
  for (; i < n; ++i) {
    float v;
    memcpy(&v, in + 4 * i, 4);
    out[i] = f32_to_fp16(v);
  }
}

// bf16, eight values at a time: (x + 0x7FFF + ((x >> 16) & 1)) >> 16 per lane (the add wraps
// exactly as the scalar u32 add does), NaN lanes (|x| > 0x7F800000 as a signed compare: |x| is
// below 2^31) replaced by (x >> 16) | 0x40.
void f32_to_bf16_row(const float* in, size_t n, uint16_t* out) {
  size_t i = 0;
  const v128_t bias = splat_u32(0x7FFFu), one = splat_u32(1), abs_mask = splat_u32(0x7FFFFFFFu),
               inf = splat_u32(0x7F800000u), quiet = splat_u32(0x40u);
  for (; i + 8 <= n; i += 8) {
    v128_t r[2];
    for (int k = 0; k < 2; ++k) {
      const v128_t x = wasm_v128_load(in + i + 4 * k);
      const v128_t hi = wasm_u32x4_shr(x, 16);
      const v128_t rounded = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(x, bias), wasm_v128_and(hi, one)), 16);
      const v128_t nan = wasm_i32x4_gt(wasm_v128_and(x, abs_mask), inf);
      r[k] = wasm_v128_bitselect(wasm_v128_or(hi, quiet), rounded, nan);
    }
    // Lanes hold 0..0xFFFF: the unsigned saturating narrow keeps them as they are (one packusdw
    // natively, where SIMDe's generic byte shuffle was the row's bottleneck).
    wasm_v128_store(out + i, wasm_u16x8_narrow_i32x4(r[0], r[1]));
  }
  for (; i < n; ++i) out[i] = f32_to_bf16_rne(in[i]);
}

__attribute__((noinline)) void decode_f16_via_f32(BlockKernel kernel, const uint8_t* src, size_t n_blocks,
                                                  size_t block_bytes, size_t block_elems, uint16_t* dst,
                                                  const KernelContext& ctx) {
  // 256 values: one K-quant block, eight 32-value blocks; 1 KiB of stack.
  constexpr size_t kTile = 256;
  alignas(16) float tile[kTile];
  const size_t per_tile = block_elems >= kTile ? 1 : kTile / block_elems;
  for (size_t b = 0; b < n_blocks;) {
    const size_t nb = n_blocks - b < per_tile ? n_blocks - b : per_tile;
    const KernelContext c{ctx.spec, ctx.first_block + b};
    kernel(src + b * block_bytes, nb, tile, c);
    f32_to_f16_row(tile, nb * block_elems, dst + b * block_elems);
    b += nb;
  }
}

}  // namespace simd128
}  // namespace kernels
}  // namespace ws
