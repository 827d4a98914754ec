// Deterministic synthetic safetensors headers for the benchmarks.
//
// Each generator returns the first bytes of a safetensors file: the 8-byte little-endian header
// length and the JSON header, laid out the way the reference writer lays it out (__metadata__
// first, tensors sorted by dtype descending then name, contiguous data offsets, compact JSON,
// spaces up to a multiple of 8). The data section is never materialized: a header benchmark stops
// at HeaderReady, and a 141 GB data section would only measure the page cache.
#pragma once

#include <stdint.h>

#include <string>

namespace wsbench {

struct SynthHeader {
  std::string name;          // case name, as printed in the tables
  std::string bytes;         // u64 LE prefix + header (header_size bytes); no data section
  uint64_t header_size = 0;  // n, the JSON header's length (the MB/s figures count these bytes)
  uint32_t tensors = 0;      // tensors the header declares (0 for a header that must be rejected)
  uint64_t name_bytes = 0;   // sum of the tensor names' lengths: arena bytes no layout can avoid
  uint64_t data_size = 0;    // size of the data section the header describes

  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(bytes.data()); }
  const char* header() const { return bytes.data() + 8; }  // the JSON text alone
};

// Llama-3.1-70B: 80 layers x 9 tensors + embed_tokens, norm, lm_head = 723 tensors, all BF16.
SynthHeader make_llama_70b();

// DeepSeek-V3 as one file: 61 layers (3 dense, 58 MoE with 256 experts; FP8 weights with F32
// weight_scale_inv) plus the MTP layer 61, 91,991 tensors, about 12 MB.
SynthHeader make_deepseek_v3();

// The worst case per byte: the most tiny tensors (short names, U8, shape [1]) that fit in at most
// `max_header_bytes` bytes of header. With the 100,000,000-byte cap that is about 1.4 M tensors.
SynthHeader make_flat(const std::string& name, uint64_t max_header_bytes);

// One valid tensor entry whose unknown field "x" nests `depth` arrays; must be rejected with
// NestingTooDeep (serde_json stops at 128), ideally right after the limit is crossed.
SynthHeader make_nesting(const std::string& name, uint32_t depth);

}  // namespace wsbench
