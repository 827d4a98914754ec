// ws-make-samples — model.safetensors.index.json as Hugging Face transformers writes it
// (save_pretrained: json.dumps(index, indent=2, sort_keys=True) + "\n").
#pragma once

#include <stdint.h>

#include <map>
#include <string>

namespace samplegen {

// weight_map: tensor name → shard file name. std::map gives the sorted key order of sort_keys.
std::string shard_index_json(uint64_t total_size, const std::map<std::string, std::string>& weight_map);

}  // namespace samplegen
