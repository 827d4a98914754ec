// weightstream CLI — shard index paths (see scan_sharded.h).
#include "scan_sharded.h"

#include "weightstream/model_loader.h"

namespace wscli {

bool is_index_path(const std::string& path) {
  return ws::model_entry_from_name(path.data(), path.size()) == ws::ModelEntry::ShardIndex;
}

}  // namespace wscli
