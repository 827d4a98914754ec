// The lookup tables of GGML's IQ formats (values from ggml-common.h; see iq_grids.cpp for how
// they were obtained and are checked). Shared by the reference and SIMD128 kernels.
//
// A grid point is one integer whose byte k is element k of the point (element 0 in the least
// significant byte). The IQ2 grids hold 8 unsigned magnitudes, the IQ3 grids 4, and the IQ1 grid 8
// signed bytes (-1, 0, +1).
#pragma once

#include <stdint.h>

namespace ws {
namespace kernels {

extern const uint64_t kIq2xxsGrid[256];  // IQ2_XXS, indexed by an 8-bit code
extern const uint64_t kIq2xsGrid[512];   // IQ2_XS, 9-bit code
extern const uint64_t kIq2sGrid[1024];   // IQ2_S, 10-bit code
extern const uint32_t kIq3xxsGrid[256];  // IQ3_XXS, 8-bit code
extern const uint32_t kIq3sGrid[512];    // IQ3_S, 9-bit code
extern const uint64_t kIq1sGrid[2048];   // IQ1_S and IQ1_M, 11-bit code
// 7-bit sign index -> 8 sign bits (bit k set: element k negative), the eighth bit completing even
// parity. Used by IQ2_XXS, IQ2_XS and IQ3_XXS (IQ2_S and IQ3_S store all 8 bits).
extern const uint8_t kIq2Signs[128];
// IQ4_NL / IQ4_XS levels, indexed by the 4-bit code.
extern const int8_t kIq4nlValues[16];

// Element k (0..7) of an 8-byte grid point, as the unsigned magnitude (IQ2) ...
inline uint8_t grid_u8(uint64_t point, int k) { return uint8_t(point >> (8 * k)); }
// ... or as the signed byte (IQ1).
inline int8_t grid_i8(uint64_t point, int k) { return int8_t(uint8_t(point >> (8 * k))); }

}  // namespace kernels
}  // namespace ws
