// weightstream CLI — command line parsing (see cli_args.h).
#include "cli_args.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "weightstream/convert_plan.h"
#include "weightstream/sha256.h"

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
  uint64_t v = 0;
  if (!ws::parse_byte_size(text.data(), text.size(), &v) || v > max) return false;
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
  } else if (cmd == "dequant") {
    out->command = Command::Dequant;
  } else if (cmd == "convert") {
    out->command = Command::Convert;
  } else {
    *error = "unknown command '" + cmd + "'";
    return false;
  }

  bool options_done = false;
  bool has_tensor = false;      // --tensor given (its value may be the empty name)
  std::string dequant_option;   // the last dequant-only option seen, for the error below
  std::string convert_option;   // the last convert-only option seen
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
    if (arg == "--canonical") {
      out->canonical = true;
      continue;
    }
    if (arg == "--no-progress") {
      out->scan.progress = false;
      continue;
    }
    if (arg == "--verbose") {
      out->scan.http.verbose = true;
      continue;
    }
    if (arg == "--no-verify-blobs") {
      out->scan.verify_blobs = false;
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
    if (!take_value(argc, argv, &i, "--sha256", &value, &matched, error)) return false;
    if (matched) {
      const size_t eq = value.rfind('=');
      uint8_t digest[ws::kSha256Bytes];
      if (eq == std::string::npos || eq == 0 ||
          !ws::sha256_from_hex(value.data() + eq + 1, value.size() - eq - 1, digest)) {
        *error = "--sha256 wants FILE=HEX (64 hex digits), not '" + value + "'";
        return false;
      }
      out->scan.sha256.push_back({value.substr(0, eq), value.substr(eq + 1)});
      continue;
    }
    if (!take_value(argc, argv, &i, "--header", &value, &matched, error)) return false;
    if (matched) {
      const size_t colon = value.find(':');
      if (colon == std::string::npos || colon == 0 || value.find_first_of("\r\n") != std::string::npos) {
        *error = "--header wants 'Name: value', not '" + value + "'";
        return false;
      }
      out->scan.http.headers.push_back(value);
      continue;
    }
    if (!take_value(argc, argv, &i, "--connections", &value, &matched, error)) return false;
    if (matched) {
      char* end = nullptr;
      const unsigned long n = value == "auto" ? 0 : strtoul(value.c_str(), &end, 10);
      if (value != "auto" && (value.empty() || !isdigit((unsigned char)value[0]) || *end || n < 1 || n > 16)) {
        *error = "--connections wants 'auto' or a count from 1 to 16, not '" + value + "'";
        return false;
      }
      out->scan.http.connections = unsigned(n);
      continue;
    }
    if (!take_value(argc, argv, &i, "--max-inflight-bytes", &value, &matched, error)) return false;
    if (matched) {
      size_t n = 0;
      if (!parse_size(value, size_t(1) << 32, &n) || n < (512u << 10)) {
        *error = "--max-inflight-bytes wants a byte count from 512k to 4G, not '" + value + "'";
        return false;
      }
      out->scan.http.max_inflight = n;
      continue;
    }
    if (!take_value(argc, argv, &i, "--token", &value, &matched, error)) return false;
    if (matched) {
      if (value.empty() || value.find_first_of("\r\n") != std::string::npos) {
        *error = "--token wants a token";
        return false;
      }
      out->scan.http.token = value;
      continue;
    }
    if (!take_value(argc, argv, &i, "--blobs", &value, &matched, error)) return false;
    if (matched) {
      if (value.empty()) {
        *error = "--blobs needs a directory";
        return false;
      }
      out->scan.blobs_dir = value;
      continue;
    }
    // dequant's own options.
    if (arg == "--all") {
      out->dequant.all = true;
      dequant_option = arg;
      continue;
    }
    if (!take_value(argc, argv, &i, "--tensor", &value, &matched, error)) return false;
    if (matched) {
      out->dequant.tensor = value;
      has_tensor = true;
      dequant_option = "--tensor";
      continue;
    }
    // convert's own options.
    if (!take_value(argc, argv, &i, "--keep", &value, &matched, error)) return false;
    if (matched) {
      out->convert.keep.push_back(value);
      convert_option = "--keep";
      continue;
    }
    if (!take_value(argc, argv, &i, "--filter", &value, &matched, error)) return false;
    if (matched) {
      out->convert.filters.push_back(value);
      convert_option = "--filter";
      continue;
    }
    if (!take_value(argc, argv, &i, "--max-shard-size", &value, &matched, error)) return false;
    if (matched) {
      size_t v = 0;
      if (!parse_size(value, ~size_t(0), &v)) {
        *error = "--max-shard-size wants a byte count (5GB, 2GiB, 500MB, 64k), not '" + value + "'";
        return false;
      }
      out->convert.max_shard_size = v;
      convert_option = "--max-shard-size";
      continue;
    }
    if (!take_value(argc, argv, &i, "--to", &value, &matched, error)) return false;
    if (matched && out->command == Command::Convert) {
      if (value != "f32" && value != "f16" && value != "bf16") {
        *error = "--to wants bf16, f16 or f32, not '" + value + "'";
        return false;
      }
      out->convert.to = value;
      continue;
    }
    if (matched) {
      if (value != "f32" && value != "f16") {
        *error = "--to wants f32 or f16, not '" + value + "'";
        return false;
      }
      out->dequant.f16 = value == "f16";
      dequant_option = "--to";
      continue;
    }
    for (const char* name : {"-o", "--output"}) {
      if (!take_value(argc, argv, &i, name, &value, &matched, error)) return false;
      if (matched) break;
    }
    if (matched) {
      if (value.empty()) {
        *error = "-o needs a non-empty path";
        return false;
      }
      out->dequant.output = value;
      dequant_option = "-o";
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
  if (out->command == Command::Convert) {
    if (!dequant_option.empty() && dequant_option != "-o") {
      *error = dequant_option + " is an option of dequant";
      return false;
    }
    if (out->files.size() != 1) {
      *error = "convert takes one model";
      return false;
    }
    if (out->dequant.output.empty() || out->dequant.output == "-") {
      *error = "convert needs -o DIR";
      return false;
    }
    return true;
  }
  if (!convert_option.empty()) {
    *error = convert_option + " is an option of convert";
    return false;
  }
  if (out->command != Command::Dequant) {
    if (!dequant_option.empty()) {
      *error = dequant_option + " is an option of dequant";
      return false;
    }
    return true;
  }
  if (out->files.size() != 1) {
    *error = "dequant takes one file";
    return false;
  }
  if (has_tensor == out->dequant.all) {
    *error = "dequant needs either --tensor NAME or --all";
    return false;
  }
  if (out->dequant.output.empty() && !out->json) {
    *error = out->dequant.all ? "dequant --all needs -o DIR" : "dequant --tensor needs -o FILE";
    return false;
  }
  if (out->dequant.output == "-" && (out->dequant.all || out->json)) {
    *error = out->dequant.all ? "-o - (standard output) takes one tensor, not --all"
                              : "-o - (standard output) cannot be combined with --json";
    return false;
  }
  return true;
}

std::string usage_text() {
  return "usage: weightstream <command> [options] FILE...\n"
         "\n"
         "Reads safetensors and GGUF model files as a stream and checks every byte of their\n"
         "framing; decodes (dequantizes) their tensors.\n"
         "\n"
         "commands:\n"
         "  inspect FILE         list the tensors, metadata and layout of one file, then the verdict\n"
         "  validate FILE...     check files; exit 0 if all are valid, 1 if any is invalid\n"
         "  dequant FILE --tensor NAME -o OUT   write one tensor's (or logical weight's) values as\n"
         "                                      raw f32 (or f16)\n"
         "  dequant FILE --all -o DIR           every tensor (logical weight) to DIR/<name>.bin\n"
         "  convert MODEL -o DIR [--to bf16|f16|f32]   the model as plain safetensors in DIR\n"
         "  help                 show this text\n"
         "  version              print the version\n"
         "\n"
         "FILE may be a .safetensors file, '-' for standard input, or a sharded model's\n"
         "*.index.json (every shard it names is validated and cross-checked against it).\n"
         "It may be an http:// or https:// URL: a file, an index, a split GGUF (the files a model\n"
         "names are fetched beside it, with Range requests; inspect fetches the headers only).\n"
         "A split GGUF model (<prefix>-00001-of-0000N.gguf ...) is named by any of its splits:\n"
         "the others are read from beside it, as one model.\n"
         "Quantized models (MLX, Ollama blobs, a UQFF directory named by one of its .uqff files,\n"
         "or their index): inspect adds the logical weights and the load plan's peak scratch, and\n"
         "dequant --tensor takes a logical weight (the packed .weight with its scales).\n"
         "An Ollama model is named by its manifest (manifests/registry.ollama.ai/library/M/TAG):\n"
         "its tensor blobs (blobs/sha256-*) are read as one model.\n"
         "A directory stands for its index, its first .uqff, or its one model file.\n"
         "\n"
         "options:\n"
         "  --json               machine-readable output (validate: one JSON object per line)\n"
         "  --chunk-size N       feed the reader N bytes at a time (default 65536; k/M/G suffixes)\n"
         "  --arena-size N       first arena size for the header (default 1M; retried once with\n"
         "                       the exact size needed when it is too small)\n"
         "  --no-progress        no progress bar (shown on a terminal for files over 64 MiB)\n"
         "  --canonical          inspect: add each tensor's canonical name (layers.N.attention.q...)\n"
         "  --blobs DIR          an Ollama manifest's blobs directory (default: the blobs/ of the\n"
         "                       nearest directory above the manifest that has one)\n"
         "  --sha256 FILE=HEX    verify FILE (the entry, or a file of its model: a shard, a split,\n"
         "                       config.json; a path or its name beside the entry) against this\n"
         "                       SHA-256 while it is read; repeatable. A verified file is read in\n"
         "                       full (inspect and dequant too); a mismatch is DigestMismatch\n"
         "  --no-verify-blobs    do not check an Ollama manifest's blobs against their sha256-<hex>\n"
         "                       names (by default every blob of a manifest is hashed)\n"
         "  --token TOKEN        URLs: send 'Authorization: Bearer TOKEN' (default: the environment's\n"
         "                       WEIGHTSTREAM_TOKEN; HF_TOKEN, to https://huggingface.co only)\n"
         "  --header 'N: V'      URLs: send this header with every request; repeatable\n"
         "  --connections auto|N URLs: parallel Range requests for a file read whole (validate,\n"
         "                       dequant, convert): auto (default) starts with one and adds one\n"
         "                       while it raises throughput by 5%, up to 4, halving on HTTP 429/503;\n"
         "                       N: always N (1: one request at a time)\n"
         "  --max-inflight-bytes N  URLs: the most bytes fetched ahead of the reader (default 16M)\n"
         "  --verbose            URLs: say on stderr how many connections a read runs, and why\n"
         "\n"
         "dequant options:\n"
         "  --to f32|f16         output type (default f32); values are little-endian, row-major\n"
         "  --json               describe each tensor (type, shape, sizes, output file) as JSON;\n"
         "                       without -o nothing is written\n"
         "\n"
         "convert options:\n"
         "  --to bf16|f16|f32    the output dtype of every decoded weight (default bf16)\n"
         "  --keep DTYPE         plain tensors stored as DTYPE (e.g. F32) are copied as stored;\n"
         "                       repeatable\n"
         "  --max-shard-size N   files of at most N bytes of tensors (5GB, 2GiB, 500M), with\n"
         "                       model.safetensors.index.json (default: one model.safetensors)\n"
         "  --filter GLOB        only the weights whose name the glob matches; repeatable\n"
         "  A conversion run again with the same arguments keeps the shards already complete.\n"
         "\n"
         "exit status: 0 valid, 1 invalid input, 2 usage or I/O error\n";
}

}  // namespace wscli
