// weightstream CLI — the pieces every command's report is made of when the model loader reads a
// file: the scan options (chunk and arena sizes, --sha256, --blobs), a validated header copied out
// of a file's reader, the values behind a GGUF rejection, and the Problems users see. The pull loop
// is the model host's (model_host.h).
#pragma once

#include <stddef.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "byte_source.h"
#include "report.h"
#include "weightstream/reader.h"

namespace wscli {

constexpr size_t kDefaultChunkSize = 65536;
constexpr size_t kDefaultArenaSize = 1 << 20;

struct ScanOptions {
  size_t chunk_size = kDefaultChunkSize;  // bytes per Reader::feed()
  size_t arena_size = kDefaultArenaSize;  // first attempt's arena
  bool progress = true;                   // allow the stderr bar (it also needs a tty and a big file)
  std::string blobs_dir;                  // --blobs: where an Ollama manifest's blobs are (empty: found)
  // --sha256 FILE=HEX (repeatable): a file of the model and its expected SHA-256 (64 hex digits).
  std::vector<std::pair<std::string, std::string>> sha256;
  // The --sha256 files some load matched (shared by every copy of the options: main reports the
  // ones no model had, whose digests therefore checked nothing).
  std::shared_ptr<std::set<std::string>> sha256_used = std::make_shared<std::set<std::string>>();
  bool verify_blobs = true;  // a manifest's blobs against their sha256-<hex> names (--no-verify-blobs)
  HttpOptions http;          // URLs: --header, --token, WEIGHTSTREAM_TOKEN, HF_TOKEN
  bool headers_only = false;  // read the headers only (the loader's Headers mode): inspect of a URL
};

// Copies a validated header out of the reader's arena into the report (GGUF key-values from the
// collector that saw them stream past).
class GgufKvCollector;
void snapshot_header(const ws::Reader& r, GgufKvCollector* kvs, FileReport* rep);
// The values behind a GGUF rejection that ws::Error does not carry, read back from the copy of the
// tensor infos and the key-values collected so far.
class GgufInfoCopy;
struct ErrorFacts;
void add_gguf_facts(const ws::Reader& r, const ws::Error& err, const GgufInfoCopy& infos, const GgufKvCollector& kvs,
                    ErrorFacts* facts);

// A Problem for a file that could not be opened or read.
Problem io_problem(const std::string& what, const std::string& why, uint64_t offset);
// A Problem with the command's input rather than the file (a tensor not found, nothing to
// decode): its code, the user-facing message and the tensor it names.
Problem usage_problem(const std::string& code, const std::string& message, const std::string& tensor);

// Copies a library error out of the arena into a Problem with its user-facing message.
struct ErrorFacts;
Problem problem_from(const ws::Error& error, const ErrorFacts& facts);

}  // namespace wscli
