// weightstream CLI — the one pull loop: ws::ModelLoader decides what to read and what it means;
// this file only opens files by the names the loader gives (relative to the entry's directory or
// URL; an Ollama manifest's blobs/ under the blobs directory; standard input as one sequential
// file), answers its reads (byte_source.h), and retries with the arena the loader asks for.
//
// While it feeds a file it keeps what the CLI's messages and inspect's tables show and the
// library does not: the first 8 bytes (format guesses, the declared header length), the GGUF
// key-values as they stream past, a copy of the GGUF tensor infos (error details), the GGUF
// model facts.
#pragma once

#include <stdint.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "byte_source.h"
#include "file_source.h"
#include "gguf_infos.h"
#include "gguf_kv.h"
#include "progress.h"
#include "report.h"
#include "file_report.h"
#include "weightstream/model_facts.h"
#include "weightstream/model_loader.h"

namespace wscli {

// What the host saw of one file of the model.
struct HostFile {
  std::string name;  // as the loader names it
  std::string path;  // where the host opened it (empty until asked)
  bool missing = false;
  bool size_known = false;
  uint64_t size = 0;
  uint64_t fed = 0;    // bytes handed over in file order (sequential: the position)
  std::string prefix;  // its first bytes, up to 8
  // GGUF, during its header.
  GgufKvCollector kvs;
  GgufInfoCopy infos;
  ws::GgufFactsCollector facts;
  // The file itself: a local file or a URL, or standard input (ModelHost::stdin_).
  std::unique_ptr<ByteSource> source;
  bool stream = false;
  std::unique_ptr<Progress> progress;   // the bar on a large file (a terminal only)
  const uint8_t* piece = nullptr;  // the last piece fed, kept for the GGUF info copy
  size_t piece_size = 0;
  uint64_t piece_at = 0;
};

// The SHA-256 the host hashes with: nettle's where the CLI is built with it (3-4x ws::Sha256), else
// null (ws::Sha256).
const ws::Sha256Engine* host_sha256_engine();

struct HostSettings {
  std::string entry_path;  // as given ("-": standard input)
  ws::ModelEntry entry = ws::ModelEntry::File;
  std::vector<std::string> listing;  // UQFF: the directory's names
  std::string blobs_dir;             // manifests: where blobs/sha256-* are (ends with '/')
  std::optional<Problem> blobs_problem;  // ... or why there is no such directory (said at the first blob)
  ws::ModelLoadMode mode = ws::ModelLoadMode::Validate;
  ws::OutType out = ws::OutType::F32;
  bool as_stored = false;  // every tensor its own weight, no convention (ModelLoaderOptions::as_stored)
  bool pass_stored = false;       // ModelLoaderOptions::pass_stored (convert)
  uint64_t stored_formats = 0;    // ModelLoaderOptions::stored_formats (convert --keep)
  ScanOptions scan;
};

class ModelHost {
 public:
  explicit ModelHost(const HostSettings& s);
  ~ModelHost();
  ModelHost(const ModelHost&) = delete;
  ModelHost& operator=(const ModelHost&) = delete;

  // Runs the load to Done or Error. `on_event` sees ModelReady and the weight events (Kv events
  // are collected here); returning false stops the load there (a host-side failure).
  void run(const std::function<bool(ws::ModelLoader&, const ws::ModelEvent&)>& on_event = nullptr);

  ws::ModelLoader& loader() { return *loader_; }
  const ws::ModelLoader& loader() const { return *loader_; }
  HostFile& file(uint32_t f);
  bool done() const { return done_; }      // Done came
  bool verifying() const;                  // some file of the model has a digest to check
  bool failed() const { return failed_; }  // Error came: loader().error()
  // A file that could not be opened or read (not missing: missing files are the loader's say).
  const std::optional<Problem>& io() const { return io_; }
  // The arena as users size it (--arena-size: the headers' share), and what the loader asked for
  // in those terms after ArenaExhausted.
  size_t arena_size() const { return arena_bytes_ - base_; }
  size_t arena_needed() const;
  // The facts behind the loader's error for the CLI's message (file sizes, the first bytes, GGUF
  // values read back from the copy of the infos, the index's figures).
  ErrorFacts error_facts() const;
  // The loader's error as users see it: code, offset, tensor, the shard (file) it is in, message.
  Problem problem() const;
  std::string dir() const { return dir_; }
  // The loader's Warning events of the last attempt, in order.
  const std::vector<WarningRow>& warnings() const { return warnings_; }

 private:
  bool attempt(size_t arena_size, const std::function<bool(ws::ModelLoader&, const ws::ModelEvent&)>& on_event);
  bool open_url_entry();
  bool answer(const ws::ModelEvent& e);
  void keep_piece(uint32_t f);
  std::string path_of(const std::string& name) const;
  std::string loader_name(const std::string& path) const;

  HostSettings s_;
  std::string dir_;  // the entry's directory, with a trailing '/' (or empty)
  std::vector<uint64_t> arena_;
  size_t arena_bytes_ = 0;
  size_t base_ = 0;  // ModelLoader::base_need(): added to the user's size, left out of messages
  std::unique_ptr<ChunkedFile> stdin_;  // kept across attempts: a redirected file is rewound
  // A URL entry, opened before the loader is made (whether its server takes Range requests
  // decides whether the loader may seek), until the loader's first read of it takes it.
  std::unique_ptr<ByteSource> entry_source_;
  std::unique_ptr<ws::ModelLoader> loader_;
  std::vector<std::unique_ptr<HostFile>> files_;
  bool done_ = false, failed_ = false;
  std::optional<Problem> io_;
  std::vector<WarningRow> warnings_;
};

}  // namespace wscli
