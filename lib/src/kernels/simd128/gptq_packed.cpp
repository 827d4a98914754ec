// SIMD128 kernels of GPTQ's packed integers (QuantFormat::GptqPacked; layout and upstream
// sources in ../gptq_packed.h). The reference's arithmetic, 16 values at a time: the codes
// widened to i32 lanes, the zero point subtracted as an integer (exact), converted to f32 and
// multiplied by the scale — one f32 multiplication per value, as the reference, so the output is
// the reference's bit for bit.
//
// The fast path is 4- and 8-bit codes whose g_idx is input / group (or absent: desc_act false,
// the common export) with group a multiple of 32/bits: a run of words inside one group shares
// its scale and zero. A g_idx in activation order (desc_act), 2-bit codes and 3-bit codes (blocks
// of 3 words whose codes straddle them) take the scalar formula of the reference (a gather per
// value).
//
// f16 output: each run's products go through an L1 tile (256 values, 1 KiB) and
// f32_to_f16_row, which rounds exactly as f32_to_fp16 (a half scale times a 5-bit integer has up
// to 16 significant bits: no prescaled shortcut applies).
#include "../gptq_packed.h"
#include "../kernel_api.h"
#include "f16_out.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// 16 codes as u8 (element order) -> (code - z) * s into y.
inline void codes16(v128_t c, v128_t z, v128_t s, float* y) {
  wasm_v128_store(y, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<0>(c), z)), s));
  wasm_v128_store(y + 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<1>(c), z)), s));
  wasm_v128_store(y + 8, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<2>(c), z)), s));
  wasm_v128_store(y + 12, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub(u8_lanes<3>(c), z)), s));
}

// `words` words of one row and one group: scale s, zero z.
inline void run_one_group(const uint8_t* src, size_t words, float* y, uint32_t bits, int32_t z, float s) {
  const v128_t vz = wasm_i32x4_splat(z), vs = wasm_f32x4_splat(s);
  size_t w = 0;
  if (bits == 4) {
    // 4 words = 32 codes: byte k holds codes 2k (low nibble) and 2k + 1 (high).
    for (; w + 4 <= words; w += 4) {
      const v128_t q = wasm_v128_load(src + 4 * w);
      const v128_t lo = lo_nibbles(q), hi = hi_nibbles(q);
      codes16(wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), vz, vs, y + 8 * w);
      codes16(wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), vz, vs,
              y + 8 * w + 16);
    }
  } else {  // 8: byte k is code k
    for (; w + 4 <= words; w += 4) codes16(wasm_v128_load(src + 4 * w), vz, vs, y + 4 * w);
  }
  const uint32_t per = 32 / bits, mask = (1u << bits) - 1;
  for (; w < words; ++w) {
    const uint32_t word = gptq_le32(src + 4 * w);
    for (uint32_t j = 0; j < per; ++j) y[w * per + j] = s * float(int32_t((word >> (bits * j)) & mask) - z);
  }
}

void GptqPacked_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const DequantSpec& s = *ctx.spec;
  const uint32_t per = gptq_per_word(s);
  const bool fast = s.gptq_g_idx_is_groups && (s.bits == 4 || s.bits == 8) && s.group % per == 0;
  if (!fast) {
    ref::GptqPacked(src, n, dst, ctx);
    return;
  }
  const uint64_t rows = s.elements / s.row_elems;
  for (size_t b = 0; b < n;) {
    const uint64_t e = (ctx.first_block + b) * per;
    const uint64_t o = e / s.row_elems, i = e % s.row_elems;
    const uint32_t g = uint32_t(i / s.group);
    // To the end of the group or the row, whichever is first, within the n words.
    uint64_t end = (uint64_t(g) + 1) * s.group;
    if (end > s.row_elems) end = s.row_elems;
    size_t words = size_t((end - i) / per);
    if (words > n - b) words = n - b;
    run_one_group(src + 4 * b, words, dst + b * per, s.bits, gptq_zero(s, rows, g, o), gptq_scale(s, rows, g, o));
    b += words;
  }
}

}  // namespace

namespace simd {

void GptqPacked(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint32_t bits = ctx.spec->bits;
  run_kernel(GptqPacked_body, src, n, dst, ctx, 4 * gptq_block_words(bits), gptq_block_values(bits));
}

void GptqPacked_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const uint32_t per = gptq_block_values(ctx.spec->bits), bytes = 4 * gptq_block_words(ctx.spec->bits);
  alignas(16) float tile[256];
  const size_t per_tile = 256 / per;  // blocks
  for (size_t b = 0; b < n;) {
    const size_t nb = n - b < per_tile ? n - b : per_tile;
    const KernelContext c{ctx.spec, ctx.first_block + b};
    GptqPacked_body(src + bytes * b, nb, tile, c);
    f32_to_f16_row(tile, nb * per, dst + b * per);
    b += nb;
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
