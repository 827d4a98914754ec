// Compares what the reader produced for a valid file with an expectation in the schema of the
// reference tooling's <file>.expect.json (also used for the corpus's valid cases):
// header_len, data_start, n_tensors, metadata (object or null) and tensors[] in data-offset order
// with name, dtype, shape, data_offsets and, when present, data_sha256.
#pragma once

#include <stdint.h>

#include <vector>

#include "harness.h"
#include "json_reader.h"

namespace wstest {

// Adds GoogleTest failures for every difference. `file` is the whole input: each tensor's streamed
// bytes must also equal the file's bytes at data_start + data_offsets.
void expect_table_matches(const Json& expect, const RunResult& run,
                          const std::vector<uint8_t>& file);

// Feeds `file` under every standard chunking; each run must follow the stream protocol and
// summarize (RunResult::summary()) to `expected`, e.g. "NameTooLong@9" or "Ok(End@96)".
// Returns the whole-input run.
RunResult expect_outcome(const std::vector<uint8_t>& file, const RunOptions& options,
                         const std::string& expected);

}  // namespace wstest
