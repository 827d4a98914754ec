// weightstream CLI — command line parsing (see cli_args.h).
#include "cli_args.h"

#include <string.h>

namespace wscli {
namespace {

constexpr size_t kMaxChunk = size_t(1) << 30;
constexpr size_t kMaxArena = size_t(1) << 32;  // a 100 MB header never needs more

// Accepts "--name value" and "--name=value"; advances *i past what it used.
bool take_value(int argc, const char* const* argv, int* i, const char* name, std::string* value,
                bool* matched, std::string* error) {
  const char* arg = argv[*i];
  const size_t n = strlen(name);
  *matched = false;
  if (strncmp(arg, name, n) != 0) return true;
  if (arg[n] == '=') {
    *matched = true;
    *value = arg + n + 1;
    return true;
  }
  if (arg[n] != '\0') return true;
  *matched = true;
  if (*i + 1 >= argc) {
    *error = std::string(name) + " needs a value";
    return false;
  }
  *value = argv[++*i];
  return true;
}

}  // namespace

bool parse_size(const std::string& text, size_t max, size_t* out) {
  if (text.empty()) return false;
  size_t i = 0;
  unsigned long long v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    v = v * 10 + static_cast<unsigned>(text[i] - '0');
    if (v > max) return false;
    ++i;
  }
  if (i == 0) return false;
  if (i < text.size()) {
    unsigned shift;
    switch (text[i]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return false;
    }
    if (i + 1 != text.size() || v > (max >> shift)) return false;
    v <<= shift;
  }
  if (v == 0) return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parse_args(int argc, const char* const* argv, CliOptions* out, std::string* error) {
  *out = CliOptions();
  if (argc < 2) {
    *error = "no command given";
    return false;
  }
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    out->command = Command::Help;
    return true;
  }
  if (cmd == "--version" || cmd == "version") {
    out->command = Command::Version;
    return true;
  }
  if (cmd == "inspect") {
    out->command = Command::Inspect;
  } else if (cmd == "validate") {
    out->command = Command::Validate;
  } else {
    *error = "unknown command '" + cmd + "'";
    return false;
  }

  bool options_done = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (options_done || arg == "-" || arg.empty() || arg[0] != '-') {
      out->files.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      out->command = Command::Help;
      return true;
    }
    if (arg == "--json") {
      out->json = true;
      continue;
    }
    if (arg == "--no-progress") {
      out->scan.progress = false;
      continue;
    }
    std::string value;
    bool matched;
    if (!take_value(argc, argv, &i, "--chunk-size", &value, &matched, error)) return false;
    if (matched) {
      if (!parse_size(value, kMaxChunk, &out->scan.chunk_size)) {
        *error = "--chunk-size wants a byte count from 1 to 1G, not '" + value + "'";
        return false;
      }
      continue;
    }
    if (!take_value(argc, argv, &i, "--arena-size", &value, &matched, error)) return false;
    if (matched) {
      if (!parse_size(value, kMaxArena, &out->scan.arena_size)) {
        *error = "--arena-size wants a byte count from 1 to 4G, not '" + value + "'";
        return false;
      }
      continue;
    }
    *error = "unknown option '" + arg + "'";
    return false;
  }

  if (out->files.empty()) {
    *error = cmd + " needs a file";
    return false;
  }
  if (out->command == Command::Inspect && out->files.size() != 1) {
    *error = "inspect takes one file (validate takes several)";
    return false;
  }
  return true;
}

std::string usage_text() {
  return "usage: weightstream <command> [options] FILE...\n"
         "\n"
         "Reads safetensors model files as a stream and checks every byte of their framing.\n"
         "\n"
         "commands:\n"
         "  inspect FILE         list the tensors, metadata and layout of one file, then the verdict\n"
         "  validate FILE...     check files; exit 0 if all are valid, 1 if any is invalid\n"
         "  help                 show this text\n"
         "  version              print the version\n"
         "\n"
         "FILE may be a .safetensors file, '-' for standard input, or a sharded model's\n"
         "*.index.json (every shard it names is validated and cross-checked against it).\n"
         "\n"
         "options:\n"
         "  --json               machine-readable output (validate: one JSON object per line)\n"
         "  --chunk-size N       feed the reader N bytes at a time (default 65536; k/M/G suffixes)\n"
         "  --arena-size N       first arena size for the header (default 1M; retried once with\n"
         "                       the exact size needed when it is too small)\n"
         "  --no-progress        no progress bar (shown on a terminal for files over 64 MiB)\n"
         "\n"
         "exit status: 0 valid, 1 invalid input, 2 usage or I/O error\n";
}

}  // namespace wscli
