// weightstream CLI — `weightstream validate FILE...`.
#pragma once

#include <string>

#include "cli_args.h"
#include "report.h"

namespace wscli {

// Validates every file (shard indexes with their shards) and prints one line per file.
// Returns the exit status: 0 all valid, 1 some invalid, 2 some could not be read.
int run_validate(const CliOptions& options);

// The two renderings of one result, exposed for tests.
std::string validate_json_line(const Verdict& v);
std::string validate_text_line(const Verdict& v);

}  // namespace wscli
