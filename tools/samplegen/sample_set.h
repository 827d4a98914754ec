// ws-make-samples — the catalogue of sample files: which models, how they are split, what
// metadata they carry. Pure (returns bytes), so a test could also build them in memory.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace samplegen {

struct SampleFile {
  std::string path;  // relative to the output directory, '/'-separated
  std::vector<uint8_t> bytes;
};

// tiny-llama.safetensors, and sharded/model-0000{1,2,3}-of-00003.safetensors with
// sharded/model.safetensors.index.json.
std::vector<SampleFile> build_sample_set();

}  // namespace samplegen
