// weightstream CLI — inspect's logical-weights section: each weight's name, quantization,
// logical shape and bytes, and the load plan's peak scratch for a sequential stream and for a
// source that can seek (FORMATS.md §2: MLX writes packed weights before their scales, so a
// stream that cannot seek must buffer them).
#pragma once

#include <stdint.h>

#include <optional>
#include <string>

#include "json_writer.h"
#include "logical_load.h"
#include "report.h"

namespace wscli {

// The read size inspect's seekable plan assumes: 1 MiB, the block size the CLI reads files in.
// Fixed, not --chunk-size, so that inspect's output never depends on the chunking.
constexpr uint64_t kPlanRead = 1 << 20;

// The summary of a loaded view; `chunk` is the seekable plan's read size.
LogicalSummary summarize_logical(const LogicalView& view, uint64_t chunk);

// inspect: loads `path` (a file or an index) and summarizes it when it follows a convention
// (MLX, Ollama); nullopt for plain models, GGUF and standard input.
std::optional<LogicalSummary> logical_summary_of(const std::string& path, const ScanOptions& options);

std::string logical_text(const LogicalSummary& s);
void write_logical_json(JsonWriter* w, const LogicalSummary& s);

}  // namespace wscli
