// Shared helpers of the GGML block kernels: little-endian field loads and the one block field
// that is not a plain struct member (IQ1_M's scattered fp16 super-scale).
//
// GGUF stores every multi-byte field little-endian. The loads assemble bytes explicitly instead
// of casting pointers: block fields sit at odd offsets (a Q8_0 block is 34 bytes, MXFP4 17), and
// the kernels must stay correct on a big-endian or strict-alignment target.
#pragma once

#include <stdint.h>

#include "../fp_convert.h"

namespace ws {
namespace kernels {
namespace ggml {

inline uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

inline uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

// An fp16 scale field (d, m, dmin), widened exactly.
inline float fp16_at(const uint8_t* p) { return fp16_to_f32(le16(p)); }

// IQ1_M has no d field: its fp16 super-scale is spread over the top nibbles of the four u16
// words of `scales` (block bytes 48..55), lowest nibble in word 0. The low 12 bits of each word
// are the per-32 sub-scales. Returns the fp16 bit pattern; ggml's row validation rejects the
// block when it is inf/NaN, which the format table (whole fp16 fields only) cannot express.
constexpr uint32_t kIq1mScalesOffset = 48;
inline uint16_t iq1m_super_scale(const uint8_t* block) {
  const uint8_t* sc = block + kIq1mScalesOffset;
  return uint16_t((le16(sc) >> 12) | ((le16(sc + 2) >> 8) & 0x00F0) | ((le16(sc + 4) >> 4) & 0x0F00) |
                  (le16(sc + 6) & 0xF000));
}

}  // namespace ggml
}  // namespace kernels
}  // namespace ws
