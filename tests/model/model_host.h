// tests/model — a host for ws::ModelLoader over files in memory or on disk: it answers every
// NeedRead (whole, in random pieces, or a byte at a time; with or without the file's size), checks
// that a sequential load only ever reads each file forward, retries with arena_needed() after
// ArenaExhausted, and records what the load produced: the verdict, the logical weights and each
// loaded weight's output bytes.
#pragma once

#include <stdint.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "weightstream/model_loader.h"

namespace modeltest {

using Bytes = std::vector<uint8_t>;

// A model's directory: a file's bytes by its name relative to the entry's directory, or false
// when there is no such file.
using Files = std::function<bool(const std::string& name, Bytes* out)>;
Files disk_files(const std::string& dir);  // dir + "/" + name
Files memory_files(const std::map<std::string, Bytes>& files);

struct HostOptions {
  ws::ModelLoadMode mode = ws::ModelLoadMode::Decode;
  bool seekable = true;
  ws::OutType out = ws::OutType::F32;
  uint32_t read_size = 1 << 16;
  enum class Feed { Whole, Random, OneByte } feed = Feed::Whole;  // how much of each request to give
  uint32_t seed = 1;
  bool declare_sizes = true;
  uint32_t out_size = 1 << 16;
  size_t arena = 1 << 20;  // first try; then arena_needed()
  bool pass_stored = false;  // ModelLoaderOptions::pass_stored
  uint64_t stored_formats = 0;  // ModelLoaderOptions::stored_formats
  bool as_stored = false;    // ModelLoaderOptions::as_stored
  bool estimate_arena = false;  // ModelLoaderOptions::estimate_arena
  bool select_all = true;
  std::vector<std::string> select;  // by name, when !select_all
  bool count_allocations = false;   // count heap calls inside the loader's calls (tests/support)
  std::function<void(const ws::ModelLoader&)> on_ready;  // at ModelReady (of the attempt that ends)
  // Digests: expect_sha256_hex(name, hex) before open(); verify_blobs(); and a call on each file's
  // first NeedRead, before it is answered (set_file_sha256 there).
  std::vector<std::pair<std::string, std::string>> sha256;
  bool verify_blobs = false;
  std::function<void(ws::ModelLoader&, uint32_t file)> on_first_read;
};

struct LoadedWeight {
  std::string name;
  Bytes bytes;             // Decode: the output; Raw: every piece, in the order they came
  std::map<int, Bytes> pieces;  // Raw: by PieceRole
  bool ended = false;
};

struct LoadResult {
  ws::Status code = ws::Status::Ok;
  uint64_t offset = 0;
  std::string tensor;  // error tensor name
  std::string file;    // name of the error's file ("" = none)
  std::string detail;
  bool has_found = false, has_expected = false;  // the error's values
  uint64_t found = 0, expected = 0;
  uint32_t tensor_index = ws::kNoTensor;
  bool ready = false;  // ModelReady came
  bool convention_error = false;  // ModelLoader::convention_error()
  uint8_t error_convention = 0;  // ModelLoader::error_convention(): whose words the fix is in (0: plain)
  ws::Convention convention = ws::Convention::Plain;
  bool config_used = false;
  // Weights are named by their name; one whose name another weight has too (as_stored: UQFF's
  // version tensors in every file) by "name@file".
  std::vector<std::string> weight_names;  // in model order
  std::map<std::string, LoadedWeight> weights;  // loaded ones, by name
  std::vector<std::string> order;               // WeightBegin order
  std::vector<std::string> ends;                // WeightEnd order
  std::map<std::string, std::string> digests;   // file name -> digest state (files with a digest)
  std::string expected_sha256, actual_sha256;   // DigestMismatch: the error file's two digests (hex)
  std::map<std::string, uint64_t> bytes_fed;    // file name -> bytes answered (all requests)
  uint64_t fed_total = 0;                       // every byte the host fed
  // Progress: L.bytes_read() at ModelReady and at the end (Done or Error), L.bytes_to_read()
  // right after the selection.
  uint64_t read_at_ready = 0, planned = 0, read_at_end = 0;
  uint64_t read_first_attempt = 0;  // bytes the first attempt read (all of them, when it is the only one)
  std::vector<std::string> passed_stored;       // weights with passes_stored() (model order)
  // Each Warning event, in order: "Code@offset tensor=<name> file=<name> weight=<name> count=N"
  // (ModelLoader::warning(); the event's file, offset and weight must be the warning's).
  std::vector<std::string> warnings;
  std::string violation;  // a protocol break (a sequential read that was not forward, ...)
  int attempts = 0;
  size_t arena_size = 0;  // of the attempt that finished
  long allocations = 0;
  uint64_t plan_sequential = 0, plan_seekable = 0;  // plan(1 MiB)
  std::string verdict() const;  // "Ok" or "Code@offset tensor=... file=..."
};

// Loads the model whose entry is `entry_name` (ModelEntry `entry`; UqffFiles: `listing` are the
// directory's names, given with add_file()).
LoadResult load_model(const Files& files, ws::ModelEntry entry, const std::string& entry_name,
                      const HostOptions& o, const std::vector<std::string>& listing = {});
// The same, with `before_open` called on the loader right before open() (set_sha256_engine, ...).
LoadResult load_model_with(const Files& files, ws::ModelEntry entry, const std::string& entry_name, const HostOptions& o,
                           const std::function<void(ws::ModelLoader&)>& before_open,
                           const std::vector<std::string>& listing = {});

}  // namespace modeltest
