// ws-make-samples — quantized checkpoints of the Hugging Face Hub (issue #27): safetensors files
// laid out as the reference writer lays them out (huggingface/safetensors `serialize`: dtype
// descending, then name; header padded to 8), each beside a config.json as transformers writes it
// (PretrainedConfig.to_json_string: sorted keys, two-space indent), committed under
// tests/data/conventions/hub/ with an expected.json: the verdict every host must give (status, the
// file, the offset — the tensor's header entry, computed here from the bytes written — the tensor
// and the error's detail, which names the method).
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "sample_set.h"

namespace samplegen {

struct HubCase {
  std::string dir;          // under hub/
  std::string status;       // ws::Status name
  uint64_t offset = 0;      // in model.safetensors
  std::string tensor;
  std::string detail;       // the error detail (names the method)
  std::string description;
  bool has_config = true;
  std::vector<SampleFile> files;  // model.safetensors [+ config.json], relative to hub/<dir>/
};

std::vector<HubCase> hub_cases();

// hub/<dir>/... for every case, and hub/expected.json.
std::vector<SampleFile> build_hub_fixtures();

}  // namespace samplegen
