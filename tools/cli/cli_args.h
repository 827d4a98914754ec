// weightstream CLI — command line parsing and the usage text.
#pragma once

#include <string>
#include <vector>

#include "file_report.h"

namespace wscli {

enum class Command { Help, Version, Inspect, Validate, Dequant };

// `dequant` only: which tensors, to what, where.
struct DequantArgs {
  std::string tensor;  // --tensor NAME (exactly one of tensor / all)
  bool all = false;    // --all
  bool f16 = false;    // --to f16 (default f32)
  std::string output;  // -o: the output file (--tensor) or directory (--all); may be empty
                       // with --json, which then only describes what would be written
};

struct CliOptions {
  Command command = Command::Help;
  std::vector<std::string> files;
  bool json = false;
  bool canonical = false;  // inspect --canonical
  ScanOptions scan;
  DequantArgs dequant;
};

// Options may come before or after the files; "--" ends them (for files named like options).
// Returns false with a one-line reason for anything malformed (the caller exits with 2).
bool parse_args(int argc, const char* const* argv, CliOptions* out, std::string* error);

// "64k", "1M", "65536" → bytes. False for anything else, 0, or values above `max`.
bool parse_size(const std::string& text, size_t max, size_t* out);

std::string usage_text();

}  // namespace wscli
