// A deterministic synthetic GGUF header: a Llama-3-sized vocabulary and ~1,000 tensor infos.
//
// The real GGUF files in the shared test data are small (vocab-only fixtures of 0.6-1.8 MB, 32k-50k
// tokens); this is what a current model's header looks like: Llama 3's 128,256-token byte-level BPE
// vocabulary with its ~280k merges, and a MoE layout with unmerged experts, 32 layers x 31 tensors.
// Only the header is built (magic through the padding before the data section); the tens of GB of
// tensor data it describes are never materialized.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace wsbench {

struct SynthGguf {
  std::string name;           // as printed in the tables
  std::vector<uint8_t> bytes; // the header, padded to the alignment: data would start at bytes.size()
  uint64_t kvs = 0;
  uint64_t tensors = 0;
  uint64_t data_size = 0;     // size of the (absent) data section the tensor infos describe
};

// Llama-3-like (see synth_gguf.cpp for the exact contents). About 8 MB; same bytes on every call.
SynthGguf make_llama3_moe_gguf();

// Writes `g.bytes` to a new file `path`; false (errno set) on failure.
bool write_file(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace wsbench
