// weightstream CLI — the one pull loop over ws::ModelLoader (see model_host.h).
#include "model_host.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_text.h"
#include "text_format.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/shard_index.h"

#ifdef WS_CLI_NETTLE
#include <nettle/sha2.h>
#endif

namespace wscli {

namespace {

#ifdef WS_CLI_NETTLE
// nettle's SHA-256 (its fat build picks SHA-NI code where the CPU has it): the loader's hash for
// the files it verifies. Its context is a plain struct, placed in the loader's arena.
static_assert(sizeof(sha256_ctx) <= ws::kSha256EngineState, "nettle's context fits the loader's record");
const ws::Sha256Engine kNettle = {
    sizeof(sha256_ctx),
    [](void* s) { sha256_init(static_cast<sha256_ctx*>(s)); },
    [](void* s, const void* data, size_t n) { sha256_update(static_cast<sha256_ctx*>(s), n, static_cast<const uint8_t*>(data)); },
    [](void* s, uint8_t out[ws::kSha256Bytes]) { sha256_digest(static_cast<sha256_ctx*>(s), ws::kSha256Bytes, out); },
};
#endif

}  // namespace

const ws::Sha256Engine* host_sha256_engine() {
#ifdef WS_CLI_NETTLE
  return &kNettle;
#else
  return nullptr;
#endif
}

namespace {

constexpr size_t kOutputPiece = 1 << 20;  // decoded bytes per WeightData (as the CLI writes them)
constexpr int kMaxAttempts = 8;     // ArenaExhausted retries: one per part whose size the input decides

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// A URL's path without its query or fragment (`?download=true`): what the model's files are named
// beside. A path is its own.
std::string without_query(const std::string& path) {
  return is_url(path) ? path.substr(0, path.find_first_of("?#")) : path;
}

// A name from the model's documents as a URL path: bytes outside RFC 3986's unreserved set and
// '/' percent-encoded (the entry's URL, given by the user, is already encoded).
std::string url_escaped(const std::string& name) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : name) {
    if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

ModelHost::ModelHost(const HostSettings& s) : s_(s) {
  dir_ = s.entry_path == "-" ? "" : directory_of(without_query(s.entry_path));
}

ModelHost::~ModelHost() = default;

HostFile& ModelHost::file(uint32_t f) {
  while (files_.size() <= f) files_.emplace_back(new HostFile);
  return *files_[f];
}

// Names are the model documents' own, relative to the entry's directory; blobs live in the blobs
// directory; the entry itself is the path as given.
std::string ModelHost::path_of(const std::string& name) const {
  if (name.rfind("blobs/", 0) == 0 && !s_.blobs_dir.empty()) return s_.blobs_dir + name.substr(6);
  return is_url(dir_) ? dir_ + url_escaped(name) : dir_ + name;
}

// A path the user gave (--sha256 FILE) as the loader names files: relative to the entry's
// directory (a path into it, however spelt, is made relative; a bare name already is).
std::string ModelHost::loader_name(const std::string& path) const {
  if (path.find('/') == std::string::npos) return path;
  char file[PATH_MAX], dir[PATH_MAX];
  if (realpath(path.c_str(), file) && realpath(dir_.empty() ? "." : dir_.c_str(), dir)) {
    const std::string f = file, d = std::string(dir) + "/";
    if (f.compare(0, d.size(), d) == 0) return f.substr(d.size());
  }
  return path.compare(0, dir_.size(), dir_) == 0 ? path.substr(dir_.size()) : path;
}

void ModelHost::run(const std::function<bool(ws::ModelLoader&, const ws::ModelEvent&)>& on_event) {
  ws::ModelLoaderOptions opt;
  base_ = ws::ModelLoader::base_need(opt, s_.entry_path.size());
  size_t arena = s_.scan.arena_size + base_;
  for (int i = 0; i < kMaxAttempts; ++i) {
    if (!attempt(arena, on_event)) break;  // ended (or stopped)
    arena = loader_->arena_needed();       // ArenaExhausted with a larger need: once more
  }
  // The --sha256 names a file of this model had (main reports the ones none had).
  for (uint32_t i = 0; loader_ && i < loader_->expected_digest_count(); ++i)
    if (loader_->expected_digest_used(i) && i < s_.scan.sha256.size()) s_.scan.sha256_used->insert(s_.scan.sha256[i].first);
}

bool ModelHost::verifying() const {
  for (uint32_t f = 0; loader_ && f < loader_->file_count(); ++f)
    if (loader_->file_digest_state(f) != ws::DigestState::None) return true;
  return false;
}

size_t ModelHost::arena_needed() const {
  const size_t n = loader_ ? loader_->arena_needed() : 0;
  return n > base_ ? n - base_ : 0;
}

// The entry URL's first request (before the loader is made: its answer decides `seekable`).
// False with io_ set when it cannot be read.
bool ModelHost::open_url_entry() {
  if (entry_source_) return true;
  if (s_.entry == ws::ModelEntry::UqffFiles) {
    // The loader picks a UQFF model's files from its directory's names; a URL has no listing.
    io_ = io_problem("cannot list the directory of " + s_.entry_path,
                     "a UQFF model is the .uqff files of its directory, and a URL's directory has no listing: "
                     "download the directory and name a local .uqff file",
                     0);
    return false;
  }
  std::string why;
  entry_source_ = open_source(s_.entry_path, s_.scan.http, &why);
  if (!entry_source_) {
    io_ = io_problem("cannot open", why, 0);
    return false;
  }
  if (entry_source_->open(0, 8) != ByteSource::Opened::Ok) {
    io_ = io_problem("cannot open", entry_source_->error(), 0);
    entry_source_.reset();
    return false;
  }
  return true;
}

// One load with an arena of `arena_size` bytes. True when it should be retried with the arena
// the loader asked for (ArenaExhausted on an input that can be read again).
bool ModelHost::attempt(size_t arena_size, const std::function<bool(ws::ModelLoader&, const ws::ModelEvent&)>& on_event) {
  files_.clear();
  if (stdin_ && !stdin_->rewind()) {
    io_ = io_problem("cannot re-read", stdin_->error(), 0);
    return false;
  }
  done_ = failed_ = false;
  io_.reset();
  warnings_.clear();
  arena_bytes_ = arena_size;
  arena_.assign(arena_size / 8 + 4, 0);
  ws::ModelLoaderOptions opt;
  opt.mode = s_.mode;
  opt.as_stored = s_.as_stored;
  opt.out = s_.out;
  opt.pass_stored = s_.pass_stored;
  opt.stored_formats = s_.stored_formats;
  opt.seekable = s_.entry_path != "-";
  // GGUF string arrays: the collector keeps the first kKeptArrayElements and the last
  // (gguf_kv.cpp); the loader skips the rest without an event each.
  opt.gguf_array_full = kKeptArrayElements;
  opt.gguf_array_head = kKeptArrayElements;
  if (is_url(s_.entry_path)) {
    // A server without Range requests sends a file from its start: the loader then reads every
    // file forward (as from standard input) instead of asking for ranges one transfer each.
    if (!open_url_entry()) {
      loader_.reset(new ws::ModelLoader(arena_.data(), arena_size, opt));  // callers look at it
      return false;
    }
    opt.seekable = entry_source_->seekable();
  }
  loader_.reset(new ws::ModelLoader(arena_.data(), arena_size, opt));
  for (const std::string& n : s_.listing) loader_->add_file(n.data(), n.size());
  // Digests: --sha256 files as the loader names them (relative to the entry's directory), and a
  // manifest's blobs against their names unless --no-verify-blobs (a blob named on its own is
  // verified with --sha256: a file's name alone is no promise about its content).
  for (const auto& d : s_.scan.sha256) {
    const std::string name = loader_name(d.first);
    loader_->expect_sha256_hex(name.data(), name.size(), d.second.data(), d.second.size());
  }
  if (s_.scan.verify_blobs && s_.entry == ws::ModelEntry::OllamaManifest) loader_->verify_blobs();
#ifdef WS_CLI_NETTLE
  loader_->set_sha256_engine(&kNettle);
#endif
  const std::string entry_name = s_.entry == ws::ModelEntry::UqffFiles || s_.entry_path == "-"
                                     ? s_.entry_path
                                     : without_query(s_.entry_path).substr(dir_.size());
  loader_->open(s_.entry, entry_name.data(), entry_name.size());
  for (;;) {
    const ws::ModelEvent e = loader_->next();
    switch (e.type) {
      case ws::ModelEventType::NeedRead:
        if (!answer(e)) return false;
        break;
      case ws::ModelEventType::Kv: {
        HostFile& f = file(e.file);
        f.kvs.on_event(*e.kv, loader_->kv_string_bytes());
        f.facts.on_event(*e.kv);
        const ws::Reader* r = loader_->file_reader(e.file);
        // The last key-value ends where the tensor infos begin.
        if (e.kv->type == ws::EventType::KvEnd && r && uint64_t(e.kv->kv) + 1 == r->gguf_kv_count())
          f.infos.start(r->position());
        break;
      }
      case ws::ModelEventType::Done:
        done_ = true;
        for (auto& f : files_)
          if (f && f->progress) f->progress->finish();
        return false;
      case ws::ModelEventType::Error: {
        failed_ = true;
        for (auto& f : files_)
          if (f && f->progress) f->progress->finish();
        if (loader_->error_file() != ws::kNoFile) keep_piece(loader_->error_file());  // the field may be in it
        // Only what can be read twice is retried (a file; standard input redirected from one).
        const bool again = loader_->error().code == ws::Status::ArenaExhausted && loader_->arena_needed() > arena_size &&
                           (s_.entry_path != "-" || (stdin_ && stdin_->rewindable()));
        return again;
      }
      case ws::ModelEventType::Warning: {
        const ws::Warning& w = loader_->warning();
        WarningRow row;
        row.code = ws::warning_name(w.code);
        row.file = str(loader_->file_name(w.file));
        row.path = file(w.file).path;
        row.offset = w.offset;
        row.tensor.assign(w.tensor_name ? w.tensor_name : "", w.tensor_name_size);
        if (w.weight < loader_->weight_count()) row.weight = str(loader_->weight(w.weight).name);
        row.count = w.count;
        char text[1024];
        const size_t n = ws::warning_message(w, text, sizeof text);
        row.message.assign(text, n < sizeof text ? n : sizeof text - 1);
        warnings_.push_back(std::move(row));
        break;
      }
      default:
        if (on_event && !on_event(*loader_, e)) return false;
        break;
    }
  }
}

// The piece last fed to file f goes to its copy of the GGUF tensor infos before the block it
// points into is read over (the reader only has a view of it).
void ModelHost::keep_piece(uint32_t f) {
  if (f >= files_.size() || !files_[f]) return;
  HostFile& h = *files_[f];
  const ws::Reader* r = loader_->file_reader(f);
  // Without key-values, the tensor infos follow the preamble directly; no KvEnd marks them.
  if (r && !h.infos.started() && r->format() == ws::Format::Gguf && r->position() >= kGgufPreambleBytes &&
      r->gguf_kv_count() == 0)
    h.infos.start(kGgufPreambleBytes);
  if (h.piece) h.infos.keep(h.piece, h.piece_size, h.piece_at);
}

bool ModelHost::answer(const ws::ModelEvent& e) {
  HostFile& h = file(e.file);
  ws::ModelLoader& L = *loader_;
  if (h.path.empty() && !h.missing) {
    h.name = str(L.file_name(e.file));
    const bool entry = e.file == 0 && s_.entry != ws::ModelEntry::UqffFiles;
    h.path = entry ? s_.entry_path : path_of(h.name);
    if (L.file_kind(e.file) == ws::ModelFileKind::Blob && s_.blobs_problem) {
      io_ = s_.blobs_problem;  // the manifest parsed, and its blobs are nowhere
      return false;
    }
    if (!entry && s_.entry_path == "-") {  // standard input has no directory: nothing beside it
      h.missing = true;
      L.file_missing();
      return true;
    }
    if (h.path == "-") {
      if (!stdin_) {
        stdin_.reset(new ChunkedFile);
        if (!stdin_->open("-")) {
          io_ = io_problem("cannot open", stdin_->error(), 0);
          return false;
        }
      }
      h.stream = true;
      h.size_known = stdin_->size_known();
      h.size = stdin_->size();
    } else {
      // A file the model's documents name that is not there is the loader's to word (a shard,
      // a blob, config.json); the entry itself, or a file that cannot be opened, is an I/O error.
      ByteSource::Opened opened = ByteSource::Opened::Ok;
      std::string why;
      if (entry && entry_source_) {
        h.source = std::move(entry_source_);  // opened already (attempt())
      } else {
        h.source = open_source(h.path, s_.scan.http, &why);
        opened = h.source ? h.source->open(e.offset, e.length) : ByteSource::Opened::Failed;
        if (h.source) why = h.source->error();
      }
      if (opened == ByteSource::Opened::Missing && !entry) {
        h.missing = true;
        L.file_missing();
        return true;
      }
      if (opened != ByteSource::Opened::Ok) {
        io_ = io_problem("cannot open", why, 0);
        return false;
      }
      h.size_known = h.source->size_known();
      h.size = h.source->size();
    }
    if (L.file_kind(e.file) != ws::ModelFileKind::Config)
      h.progress.reset(new Progress(h.path, h.size_known, h.size, s_.scan.progress));
  }
  if (h.size_known) L.set_file_size(h.size);
  keep_piece(e.file);  // the block is about to be read over
  h.piece = nullptr;
  const uint8_t* data = nullptr;
  size_t n = 0;
  if (h.stream) {
    const ChunkedFile::Result r = stdin_->next(e.length, &data, &n);
    if (r == ChunkedFile::Result::Failed) {
      io_ = io_problem("cannot read", stdin_->error(), stdin_->position());
      return false;
    }
    if (r == ChunkedFile::Result::End) n = 0;
  } else {
    if (!h.source->read(e.offset, e.length, &data, &n)) {
      io_ = io_problem("cannot read", h.source->error(), e.offset);
      return false;
    }
  }
  if (n == 0) {
    L.end_of_file();
    return true;
  }
  if (e.offset < 8 && h.prefix.size() == e.offset)
    h.prefix.append(reinterpret_cast<const char*>(data), n < 8 - e.offset ? n : size_t(8 - e.offset));
  if (e.offset + n > h.fed) h.fed = e.offset + n;
  h.piece = data;
  h.piece_size = n;
  h.piece_at = e.offset;
  if (h.progress) h.progress->update(h.fed);
  L.feed(data, n);
  return true;
}

ErrorFacts ModelHost::error_facts() const {
  const ws::ModelLoader& L = *loader_;
  const ws::Error& err = L.error();
  ErrorFacts facts;
  facts.code = err.code;
  facts.offset = err.offset;
  facts.detail = str(L.error_detail());
  facts.convention = L.error_convention().id;  // the library words the fix for it (ws::status_hint)
  facts.arena_size = arena_size();
  facts.arena_needed = arena_needed();
  const uint32_t f = L.error_file();
  if (f < files_.size() && files_[f]) {
    const HostFile& h = *files_[f];
    const ws::Reader* r = L.file_reader(f);
    facts.prefix = h.prefix;
    if (h.prefix.size() == 8 && r && r->format() == ws::Format::Safetensors) {
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(h.prefix[size_t(i)]);
      facts.declared_header = v;
    }
    facts.input_size = h.size_known ? h.size : h.fed;
    facts.input_size_exact = h.size_known;
    if (r && r->data_start() != 0) facts.data_end = data_end_of(r->data_start(), r->data_size());
    if (r && r->format() == ws::Format::Gguf) add_gguf_facts(*r, err, h.infos, h.kvs, &facts);
    if (err.code == ws::Status::DigestMismatch) {
      char hex[ws::kSha256HexChars + 1];
      if (const uint8_t* d = L.file_expected_sha256(f)) {
        ws::sha256_to_hex(d, hex);
        facts.digest_expected = hex;
      }
      if (const uint8_t* d = L.file_actual_sha256(f)) {
        ws::sha256_to_hex(d, hex);
        facts.digest_actual = hex;
      }
    }
  }
  if (const ws::ShardIndex* index = L.index()) {
    // Where the index places the tensor an error names, and its figures.
    if (err.tensor_name) {
      const uint32_t entry = index->find_tensor(err.tensor_name, err.tensor_name_size);
      if (entry != ws::kNoTensor) facts.index_shard = str(index->shard_name(index->tensor_shard(entry)));
    }
    if (index->has_total_size()) facts.index_total_size = index->total_size();
    facts.tensors_total_size = index->checked_bytes();
  }
  return facts;
}

Problem ModelHost::problem() const {
  const ws::Error& err = loader_->error();
  Problem p = problem_from(err, error_facts());
  // UQFF companion-set errors say which suffix is missing or unexpected (or which type); a split's
  // name what it should end in (error_text.cpp words it).
  const ws::StrView detail = loader_->error_detail();
  if (detail.size && err.code != ws::Status::GgufSplitNameMismatch) p.message += " (" + display_text(str(detail)) + ")";
  const uint32_t f = loader_->error_file();
  if (f != ws::kNoFile) {
    p.shard = str(loader_->file_name(f));
    if (p.shard.rfind("blobs/", 0) == 0) p.shard = p.shard.substr(6);  // a blob is named by its file
    if (loader_->file_kind(f) == ws::ModelFileKind::Config) p.shard = dir_ + p.shard;  // beside the model
  }
  return p;
}

}  // namespace wscli
