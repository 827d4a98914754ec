// weightstream CLI — an Ollama model named by its manifest, validated for inspect and validate:
// the manifest's own checks and every blob's header (load_logical, manifest_blobs.h), then every
// blob streamed through ws::Reader as validate does for one file. Stops at the first problem.
// A convention error (e.g. a quantized tensor without its scale) leaves the files valid and goes
// into the logical summary, as for a single blob.
#pragma once

#include <string>

#include "report.h"
#include "scan_file.h"

namespace wscli {

// `logical`: also summarize the logical weights and load plan (inspect).
ShardedReport scan_manifest(const std::string& path, const ScanOptions& options, bool logical);

}  // namespace wscli
