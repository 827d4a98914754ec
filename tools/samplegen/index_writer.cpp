// ws-make-samples — shard index JSON (see index_writer.h).
#include "index_writer.h"

#include "safetensors_writer.h"

namespace samplegen {

std::string shard_index_json(uint64_t total_size, const std::map<std::string, std::string>& weight_map) {
  std::string s = "{\n  \"metadata\": {\n    \"total_size\": " + std::to_string(total_size) +
                  "\n  },\n  \"weight_map\": {\n";
  size_t i = 0;
  for (const auto& kv : weight_map) {
    s += "    ";
    append_json_string(&s, kv.first);
    s += ": ";
    append_json_string(&s, kv.second);
    s += ++i == weight_map.size() ? "\n" : ",\n";
  }
  s += "  }\n}\n";
  return s;
}

}  // namespace samplegen
