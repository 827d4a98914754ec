// weightstream CLI — shard index paths (see scan_sharded.h).
#include "scan_sharded.h"

namespace wscli {

bool is_index_path(const std::string& path) {
  static const std::string kSuffix = ".index.json";
  return path.size() >= kSuffix.size() &&
         path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

}  // namespace wscli
