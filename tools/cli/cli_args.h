// weightstream CLI — command line parsing and the usage text.
#pragma once

#include <string>
#include <vector>

#include "file_report.h"

namespace wscli {

enum class Command { Help, Version, Inspect, Validate, Dequant, Convert };

// `dequant` only: which tensors, to what, where.
struct DequantArgs {
  std::string tensor;  // --tensor NAME (exactly one of tensor / all)
  bool all = false;    // --all
  bool f16 = false;    // --to f16 (default f32)
  std::string output;  // -o: the output file (--tensor) or directory (--all); may be empty
                       // with --json, which then only describes what would be written
};

// `convert` only (model_convert.h): the output directory, the target type, what is kept as stored,
// the shard limit, which weights.
struct ConvertArgs {
  std::string to = "bf16";           // --to bf16|f16|f32
  std::vector<std::string> keep;     // --keep DTYPE (repeatable): plain tensors of it copied as stored
  uint64_t max_shard_size = 0;       // --max-shard-size N (k/M/G): 0, one file
  std::vector<std::string> filters;  // --filter GLOB (repeatable): only the weights a glob matches
};

struct CliOptions {
  Command command = Command::Help;
  std::vector<std::string> files;
  bool json = false;
  bool canonical = false;  // inspect --canonical
  ScanOptions scan;
  DequantArgs dequant;
  ConvertArgs convert;
};

// Options may come before or after the files; "--" ends them (for files named like options).
// Returns false with a one-line reason for anything malformed (the caller exits with 2).
bool parse_args(int argc, const char* const* argv, CliOptions* out, std::string* error);

// "64k", "1M", "65536", "5GB", "2GiB" → bytes (ws::parse_byte_size: Hugging Face's max_shard_size
// spellings too). False for anything else, 0, or values above `max`.
bool parse_size(const std::string& text, size_t max, size_t* out);

std::string usage_text();

}  // namespace wscli
