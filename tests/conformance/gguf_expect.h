// Compares what the reader produced for a valid GGUF file with an expectation in the schema of
// the shared testdata's <file>.expect.json (gguf-py's view, cross-checked with ggml; also written
// by ws-make-gguf-corpus for the corpus's valid cases): version, tensor_count, kv_count,
// alignment, the data section's offset, every KV (key, offset, type, value — 64-bit integers
// exactly —, arrays' element type, length, values or head/last, string byte totals) and every
// tensor (name, type, ne, n_elements, n_bytes, offset, data_offset_absolute,
// header_entry_offset, data_sha256 of the streamed bytes).
#pragma once

#include <stdint.h>

#include <vector>

#include "harness.h"
#include "json_reader.h"

namespace wstest {

// The data section's offset as ggml reports it: `data_offset` when present (the corpus), else
// ggml_gguf_cpp_cross_check.data_offset — for zero-tensor files the end of the KVs, where
// gguf-py's tensor_data_offset is padded past the end of the file.
uint64_t expected_data_offset(const Json& expect);

// Adds GoogleTest failures for every difference. `file` is the whole input: each tensor's streamed
// bytes must also equal the file's bytes at its absolute data offset.
void expect_gguf_matches(const Json& expect, const RunResult& run, const std::vector<uint8_t>& file);

}  // namespace wstest
