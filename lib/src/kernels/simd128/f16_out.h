// weightstream — f32 -> f16 conversion of a row, SIMD128, bit-identical to f32_to_fp16
// (fp_convert.h): round to nearest even, overflow to inf, NaN quiet with its sign and the top
// 10 payload bits.
//
// Two users: the Dequantizer's f16 output for formats without an f16 kernel of their own (its
// scalar per-value conversion ran at under 1 GB/s of f32 input on the benchmark machine, 20-40x
// slower than the kernels that fill its tile), and the f16 kernels' exact path for the blocks
// their fast paths leave out (decode_f16_via_f32).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "../kernel_api.h"

namespace ws {
namespace kernels {
namespace simd128 {

void f32_to_f16_row(const float* in, size_t n, uint16_t* out);
// f32 -> bf16 of a row, bit-identical to f32_to_bf16_rne (fp_convert.h): BF16 output of every
// format, after its SIMD128 f32 kernel.
void f32_to_bf16_row(const float* in, size_t n, uint16_t* out);
// The same from little-endian f32 bytes at any alignment (F32 tensors).
void f32_bytes_to_f16_row(const uint8_t* in, size_t n, uint16_t* out);

// f16 output the long way, exact for any input: the f32 kernel into an L1-resident tile, then
// f32_to_f16_row. The f16 kernels send here the blocks whose scales their fast paths do not
// cover (subnormal or overflowing f16 results, inf/NaN scales); out of line, so the rare path
// costs the kernels' loops nothing.
void decode_f16_via_f32(BlockKernel kernel, const uint8_t* src, size_t n_blocks, size_t block_bytes,
                        size_t block_elems, uint16_t* dst, const KernelContext& ctx);

}  // namespace simd128
}  // namespace kernels
}  // namespace ws
