// weightstream CLI — which paths are shard indexes (the model loader reads them: scan_model.h).
#pragma once

#include <string>


namespace wscli {

// True for paths the CLI treats as a shard index ("….index.json").
bool is_index_path(const std::string& path);

}  // namespace wscli
