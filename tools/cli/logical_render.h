// weightstream CLI — inspect's logical-weights section: each weight's name, quantization,
// logical shape and bytes, and the load plan's peak scratch for a sequential stream and for a
// source that can seek (FORMATS.md §2: MLX writes packed weights before their scales, so a
// stream that cannot seek must buffer them).
#pragma once

#include <stdint.h>

#include <optional>
#include <string>

#include "json_writer.h"
#include "report.h"

namespace wscli {

// The read size inspect's seekable plan assumes: 1 MiB, the block size the CLI reads files in.
// Fixed, not --chunk-size, so that inspect's output never depends on the chunking.
constexpr uint64_t kPlanRead = 1 << 20;

std::string logical_text(const LogicalSummary& s);
void write_logical_json(JsonWriter* w, const LogicalSummary& s);

}  // namespace wscli
