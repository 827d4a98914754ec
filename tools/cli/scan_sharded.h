// weightstream CLI — a sharded model: streams model.safetensors.index.json through ws::ShardIndex,
// then every shard it names through ws::Reader, cross-checking each shard's tensor table against
// the index (check_shard) and the whole set at the end (finish_checks).
#pragma once

#include <string>

#include "report.h"
#include "scan_file.h"

namespace wscli {

// True for paths the CLI treats as a shard index ("….index.json").
bool is_index_path(const std::string& path);

// A shard name an index may use: relative, without ".." components (an index from the internet
// must not make weightstream open files outside the index's directory).
bool safe_shard_name(const std::string& name);

// Stops at the first problem (in the index, in a shard, or in the cross-checks): later findings
// would mostly be consequences of it.
ShardedReport scan_sharded(const std::string& index_path, const ScanOptions& options);

}  // namespace wscli
