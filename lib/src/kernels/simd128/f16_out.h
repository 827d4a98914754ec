// weightstream — f32 -> f16 conversion of a row, SIMD128, bit-identical to f32_to_fp16
// (fp_convert.h): round to nearest even, overflow to inf, NaN quiet with its sign and the top
// 10 payload bits.
//
// For the Dequantizer's f16 output: its scalar per-value conversion runs at under 1 GB/s of f32
// input on the benchmark machine, 20-40x slower than the kernels that fill its tile.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {
namespace kernels {
namespace simd128 {

void f32_to_f16_row(const float* in, size_t n, uint16_t* out);

}  // namespace simd128
}  // namespace kernels
}  // namespace ws
