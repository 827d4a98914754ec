// weightstream CLI — `weightstream inspect FILE`: the layout of one file (or of a sharded model
// through its index) as a table for people or one JSON object.
#pragma once

#include <string>

#include "cli_args.h"
#include "report.h"

namespace wscli {

// Returns the exit status: 0 valid, 1 invalid, 2 unreadable.
int run_inspect(const CliOptions& options);

// Renderings, exposed for tests.
std::string inspect_json(const FileReport& r);
std::string inspect_text(const FileReport& r);
std::string inspect_json(const ShardedReport& r);
std::string inspect_text(const ShardedReport& r);

}  // namespace wscli
