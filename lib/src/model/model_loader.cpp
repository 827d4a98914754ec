// ws::ModelLoader, first half: the entry document, the file list, every file's header, config.json,
// the logical model and UQFF's scalars, up to ModelReady (model_stream.cpp: the data phase).
#include <string.h>

#include <new>

#include "model_loader_internal.h"
#include "../conventions/convention_descriptor.h"
#include "weightstream/detail/heap_sort.h"
#include "weightstream/file_kind.h"
#include "weightstream/manifest_blobs.h"
#include "weightstream/mlx_config.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/shard_index.h"

namespace ws {

namespace {

constexpr size_t kAlign = 8;

uint8_t* align_up(uint8_t* p, size_t a) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + (a - 1)) & ~uintptr_t(a - 1));
}
size_t round8(size_t n) { return (n + 7) & ~size_t(7); }

bool ends_with(const char* s, size_t n, const char* suffix) {
  const size_t k = strlen(suffix);
  return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// An index from the internet names files to open: only names inside the index's directory are
// followed (no absolute paths, no ".." components, no NUL), so a crafted index cannot make a host
// read /dev/zero or files elsewhere.
bool safe_shard_name(const StrView& s) {
  if (s.size == 0 || s.data[0] == '/') return false;
  size_t start = 0;
  for (size_t i = 0; i <= s.size; ++i) {
    if (i < s.size && s.data[i] == '\0') return false;
    if (i == s.size || s.data[i] == '/') {
      if (i - start == 2 && s.data[start] == '.' && s.data[start + 1] == '.') return false;
      start = i + 1;
    }
  }
  return true;
}

// Byte order of two names, then length: lexicographic order, the order the pre-loader CLI sorted
// shard file names in (golden outputs list shards so).
bool name_less(const char* a, size_t an, const char* b, size_t bn) {
  const int c = memcmp(a, b, an < bn ? an : bn);
  return c != 0 ? c < 0 : an < bn;
}

// The number before ".uqff" (model-10.uqff -> 10, saturating), so model-2 sorts before model-10.
uint64_t uqff_number(const char* s, size_t n) {
  size_t end = n - 5, begin = end;
  while (begin > 0 && s[begin - 1] >= '0' && s[begin - 1] <= '9') --begin;
  uint64_t v = 0;
  for (size_t i = begin; i < end; ++i) {
    const uint64_t d = uint64_t(s[i] - '0');
    v = v > (~uint64_t(0) - d) / 10 ? ~uint64_t(0) : v * 10 + d;
  }
  return v;
}

bool is_residual(const char* s, size_t n) {
  static const char kName[] = "residual.safetensors";
  const size_t k = sizeof kName - 1;
  return ends_with(s, n, kName) && (n == k || s[n - k - 1] == '/');
}

// The first non-blank byte of a safetensors-looking prefix is '{' and its length is absurd: JSON.

}  // namespace

const char* model_file_kind_name(ModelFileKind k) {
  switch (k) {
    case ModelFileKind::Split: return "split";
    case ModelFileKind::File: return "file";
    case ModelFileKind::Index: return "index";
    case ModelFileKind::Manifest: return "manifest";
    case ModelFileKind::Shard: return "shard";
    case ModelFileKind::UqffPart: return "uqff";
    case ModelFileKind::Blob: return "blob";
    case ModelFileKind::Config: return "config";
  }
  return "?";
}

const char* model_event_type_name(ModelEventType t) {
  switch (t) {
    case ModelEventType::NeedRead: return "NeedRead";
    case ModelEventType::Kv: return "Kv";
    case ModelEventType::ModelReady: return "ModelReady";
    case ModelEventType::WeightBegin: return "WeightBegin";
    case ModelEventType::WeightData: return "WeightData";
    case ModelEventType::WeightEnd: return "WeightEnd";
    case ModelEventType::Done: return "Done";
    case ModelEventType::Error: return "Error";
    case ModelEventType::Warning: return "Warning";
  }
  return "?";
}

ModelLoader::ModelLoader(void* arena, size_t arena_size, const ModelLoaderOptions& options)
    : opt_(options), phase_(Phase::Idle) {
  new (held_storage_) HeldRegion();  // empty: prepare_scratch() gives it its arena
  const uintptr_t b = reinterpret_cast<uintptr_t>(arena);
  const uintptr_t aligned = (b + 15) & ~uintptr_t(15);
  const size_t skip = size_t(aligned - b);
  base_ = reinterpret_cast<uint8_t*>(aligned);
  end_ = base_ + (arena_size > skip ? (arena_size - skip) & ~size_t(15) : 0);
  lo_ = base_;
  hi_ = end_;
  // The first file slots (a model of one to four files needs no more); reserve_files() moves them
  // to a larger table when a model's documents name more files.
  max_files_ = opt_.max_files;
  reserve_files(max_files_ && max_files_ < kInitialFiles ? max_files_ : kInitialFiles);
}

ModelLoader::~ModelLoader() {}

size_t ModelLoader::base_need(const ModelLoaderOptions& options, size_t entry_name_size) {
  const uint32_t files = options.max_files && options.max_files < kInitialFiles ? options.max_files : kInitialFiles;
  return 16 + round8((sizeof(FileSlot) + 4) * files) + round8(entry_name_size + 1) + round8(sizeof(Reader)) + 64;
}

// Room for n file slots (and the table -> file map). A larger table is taken from the free middle
// and the slots are copied into it; the old one stays behind (a few hundred bytes: tables only
// grow when a document names the files, once, or by doubling while a host adds UQFF names).
// Only called where no reader views a slot's prefix.
bool ModelLoader::reserve_files(uint32_t n) {
  if (n <= files_cap_) return true;
  if (max_files_ && n > max_files_) return false;
  const uint64_t bytes = (uint64_t(sizeof(FileSlot)) + 4) * n;
  if (bytes > (~size_t(0) >> 2)) return false;
  uint8_t* mem = static_cast<uint8_t*>(take_low(size_t(bytes), kAlign));
  if (!mem) return false;
  FileSlot* slots = reinterpret_cast<FileSlot*>(mem);
  uint32_t* tables = reinterpret_cast<uint32_t*>(mem + sizeof(FileSlot) * n);
  for (uint32_t i = 0; i < n; ++i) new (slots + i) FileSlot();  // (no array new: no cookie)
  for (uint32_t i = 0; i < file_count_; ++i) slots[i] = files_[i];
  for (uint32_t t = 0; t < table_count_; ++t) tables[t] = table_files_[t];
  files_ = slots;
  table_files_ = tables;
  files_cap_ = n;
  return true;
}

void* ModelLoader::take_low(size_t n, size_t align) {
  uint8_t* p = align_up(lo_, align);
  if (p > hi_ || n > size_t(hi_ - p)) return nullptr;
  lo_ = align_up(p + n, kAlign);
  if (lo_ > hi_) lo_ = hi_;
  return p;
}

void* ModelLoader::take_high(size_t n) {
  n = round8(n);
  if (n > size_t(hi_ - lo_)) return nullptr;
  hi_ -= n;
  return hi_;
}

size_t ModelLoader::arena_used() const { return size_t(lo_ - base_) + size_t(end_ - hi_); }

// --- Digests (the parts that need no SHA-256 code; the rest is model_digest.cpp) -------------------

// With a digest, a file is read forward to its end (verification sees every byte in order), so the
// data phase of a seekable source is the forward stream too.
bool ModelLoader::seek_data() const { return opt_.seekable && digest_files_ == 0; }

bool ModelLoader::digest_failed(uint32_t f) const {
  return files_[f].digest && files_[f].digest->state == DigestState::Mismatch;
}

ModelEvent ModelLoader::fail_digest(uint32_t f) {
  fail(Status::DigestMismatch, files_[f].digest->hashed, f);
  return fail(error_.code, error_.offset, error_file_);
}

const char* digest_state_name(DigestState s) {
  switch (s) {
    case DigestState::None: return "none";
    case DigestState::Pending: return "pending";
    case DigestState::Verified: return "verified";
    case DigestState::Mismatch: return "mismatch";
  }
  return "?";
}

DigestState ModelLoader::file_digest_state(uint32_t f) const {
  return f < file_count_ && files_[f].digest ? files_[f].digest->state : DigestState::None;
}
const uint8_t* ModelLoader::file_expected_sha256(uint32_t f) const {
  return f < file_count_ && files_[f].digest ? files_[f].digest->expected : nullptr;
}
const uint8_t* ModelLoader::file_actual_sha256(uint32_t f) const {
  if (f >= file_count_ || !files_[f].digest) return nullptr;
  const DigestState st = files_[f].digest->state;
  return st == DigestState::Verified || st == DigestState::Mismatch ? files_[f].digest->actual : nullptr;
}
uint32_t ModelLoader::expected_digest_count() const {
  uint32_t n = 0;
  for (const FileDigest* d = digests_; d; d = d->next) ++n;
  return n;
}
StrView ModelLoader::expected_digest_name(uint32_t i) const {
  StrView v;
  const FileDigest* d = digests_;
  for (; d && i; d = d->next) --i;
  if (d) {
    v.data = d->name;
    v.size = d->name_size;
  }
  return v;
}
bool ModelLoader::expected_digest_used(uint32_t i) const {
  const FileDigest* d = digests_;
  for (; d && i; d = d->next) --i;
  return d && d->used;
}

// --- Errors ----------------------------------------------------------------------------------

ModelEvent ModelLoader::fail(Status s, uint64_t offset, uint32_t file) {
  if (phase_ != Phase::Failed) {
    error_ = Error();
    error_.code = s;
    error_.offset = offset;
    error_file_ = file;
    phase_ = Phase::Failed;
  }
  ModelEvent e;
  e.type = ModelEventType::Error;
  e.file = error_file_;
  return e;
}

ModelEvent ModelLoader::fail_error(const Error& err, uint32_t file) {
  if (phase_ != Phase::Failed) {
    error_ = err;
    error_file_ = file;
    phase_ = Phase::Failed;
  }
  return fail(error_.code, error_.offset, error_file_);
}

ModelEvent ModelLoader::fail_piece_read(uint32_t file, uint32_t tensor, const StrView& name) {
  const bool eof = answer_ == Answer::Eof;
  answer_ = Answer::None;
  fail(eof ? Status::TruncatedData : Status::FileMissing, eof ? at_ : 0, file);
  error_.tensor = tensor;
  error_.tensor_name = name.data;
  error_.tensor_name_size = name.size;
  return fail(error_.code, error_.offset, error_file_);
}

// The arena ran out in a component that needed `component_need` bytes of the free middle: the
// size that gets past it is what is used now plus that, plus the fixed-size parts every later phase
// certainly takes (the other files' readers, the model and config objects, the output piece), so
// a retry fails, if at all, only where the input decides the size (a header, the model's weights,
// config.json, the scratch): at most one retry per such part. `rest` (when not ~0) is the exact
// size of everything after this part, when the caller knows it (the last header).
ModelEvent ModelLoader::fail_arena(size_t component_need, uint32_t file, size_t rest) {
  size_t later = 0;
  if (rest != ~size_t(0)) {
    later = rest;
  } else {
    if (phase_ == Phase::Idle || phase_ == Phase::EntryDoc || phase_ == Phase::Headers) {
      const uint32_t files = file_count_ > cur_ ? file_count_ - cur_ : 1;
      later += (sizeof(Reader) + 64) * files + sizeof(LogicalModel) + sizeof(MlxQuantConfig) + 256;
    }
    if (phase_ != Phase::Ready && opt_.mode == ModelLoadMode::Decode && !opt_.out_buffer) later += round8(opt_.out_size) + 32;
  }
  arena_needed_ = arena_used() + round8(component_need) + later + 64 + 16;
  return fail(Status::ArenaExhausted, 0, file);
}

// What the model takes after the headers for `tensors` tensors in all: the LogicalModel, its
// weights and name hash (or, GGUF, one weight per tensor), the selection bits, the config parser's
// object (its document, if any, is parsed in what is free and dropped), the output piece.
size_t ModelLoader::after_headers_need(uint64_t tensors, bool gguf) const {
  size_t n = 0;
  if (gguf) {
    n += round8(size_t(sizeof(LogicalWeight) * (tensors + 1)));
    if (split_count_) {  // the name hash of the duplicate check (split_weights_check)
      uint64_t half = 1;
      while (half < 2 * tensors && half < 0x40000000u) half <<= 1;
      n += size_t(half * 4 + 8);
    }
  } else {
    const uint64_t slots = LogicalModel::index_slots_for(tensors);
    n += round8(sizeof(LogicalModel)) + round8(size_t(sizeof(LogicalWeight) * (tensors + 1))) +
         (slots > LogicalModel::kInlineSlots ? round8(size_t(4 * slots)) : 0) + round8(sizeof(MlxQuantConfig)) + 64 +
         table_storage_need();
  }
  if (opt_.mode == ModelLoadMode::Decode || opt_.mode == ModelLoadMode::Raw) n += round8(size_t(tensors / 8 + 2)) + 8;
  if (opt_.mode == ModelLoadMode::Decode && !opt_.out_buffer) n += round8(opt_.out_size) + 32;
  return n;
}

// The model's table storage beyond LogicalModel's inline tables (one per data file).
size_t ModelLoader::table_storage_need() const {
  const uint32_t tables = table_count_ > file_count_ ? table_count_ : file_count_;
  return tables > LogicalModel::kInlineTables ? round8(sizeof(LogicalTable) * tables) : 0;
}

// --- The host's answers -----------------------------------------------------------------------

void ModelLoader::set_file_size(uint64_t size) {
  if (!awaiting_ || answer_ != Answer::None || req_file_ >= file_count_) return;
  FileSlot& s = files_[req_file_];
  if (s.opened) return;  // only before the first bytes
  s.size_known = true;
  s.size = size;
}

void ModelLoader::feed(const void* data, size_t n) {
  if (!awaiting_ || answer_ != Answer::None || n == 0 || n > req_length_ || data == nullptr) {
    fail(Status::UsageError, req_offset_, req_file_);
    return;
  }
  answer_ = Answer::Data;
  answer_data_ = static_cast<const uint8_t*>(data);
  answer_size_ = n;
  bytes_read_ += n;
}

void ModelLoader::end_of_file() {
  if (!awaiting_ || answer_ != Answer::None) {
    fail(Status::UsageError, req_offset_, req_file_);
    return;
  }
  answer_ = Answer::Eof;
}

void ModelLoader::file_missing() {
  if (!awaiting_ || answer_ != Answer::None) {
    fail(Status::UsageError, req_offset_, req_file_);
    return;
  }
  answer_ = Answer::Missing;
}

ModelEvent ModelLoader::request(uint32_t f, uint64_t offset, uint64_t length) {
  if (length == 0 || length > opt_.read_size) length = opt_.read_size;
  awaiting_ = true;
  answer_ = Answer::None;
  req_file_ = f;
  req_offset_ = offset;
  req_length_ = length;
  ModelEvent e;
  e.type = ModelEventType::NeedRead;
  e.file = f;
  e.offset = offset;
  e.length = uint32_t(length);
  return e;
}

// --- Opening ----------------------------------------------------------------------------------

// A slot for one more file (the table doubles when full; a caller that knows how many files come
// reserves them first). kNoFile when the host's max_files or the arena has no room: fail_files()
// says which.
uint32_t ModelLoader::add_slot(ModelFileKind kind, const char* name, size_t n, bool copy) {
  if (file_count_ >= 0xFFFFFFF0u) return kNoFile;
  if (file_count_ >= files_cap_) {
    uint32_t want = files_cap_ < kInitialFiles ? kInitialFiles : files_cap_ > 0x7FFFFFF0u ? 0xFFFFFFF0u : 2 * files_cap_;
    if (max_files_ && want > max_files_) want = max_files_;
    if (want <= file_count_ || !reserve_files(want)) return kNoFile;
  }
  if (copy) {
    char* p = static_cast<char*>(take_low(n + 1, 1));
    if (!p) return kNoFile;
    if (n) memcpy(p, name, n);
    p[n] = '\0';
    name = p;
  }
  FileSlot& s = files_[file_count_];
  s = FileSlot();
  s.kind = kind;
  s.name = name;
  s.name_size = uint32_t(n);
  if (digest_ops_) digest_ops_->attach(*this, file_count_);  // a digest given for this name
  return file_count_++;
}

ModelEntry model_entry_from_name(const char* name, size_t n) {
  if (name == nullptr) return ModelEntry::Auto;
  if (ends_with(name, n, ".index.json")) return ModelEntry::ShardIndex;
  if (ends_with(name, n, ".uqff")) return ModelEntry::UqffFiles;
  return ModelEntry::Auto;
}

Status ModelLoader::add_file(const char* name, size_t n) {
  if (opened_ || !files_ || phase_ == Phase::Failed) return Status::UsageError;
  // Only what a UQFF directory or a split GGUF model is made of; anything else in a listing
  // (config.json, READMEs) is not read. open() keeps the one kind the entry is.
  const bool part = model_entry_from_name(name, n) == ModelEntry::UqffFiles;
  const bool split = ends_with(name, n, ".gguf");
  if (!part && !split && !is_residual(name, n)) return Status::Ok;
  const uint32_t f = add_slot(split ? ModelFileKind::Split : ModelFileKind::UqffPart, name, n, true);
  if (f == kNoFile) return fail_files(uint64_t(file_count_) + 1, n + 1, kNoFile), error_.code;
  files_[f].number = part ? uqff_number(name, n) : ~uint64_t(0);  // the residual file last
  return Status::Ok;
}

// UQFF files as mistral.rs loads them: shards by their number (the first holds the version
// tensors), ties by name, then residual.safetensors. Heap sort: n log n for any count.
void ModelLoader::order_uqff_files() {
  struct Less {
    static bool of(const void* a, const void* b, const void*) {
      const FileSlot& s = *static_cast<const FileSlot*>(a);
      const FileSlot& p = *static_cast<const FileSlot*>(b);
      return s.number != p.number ? s.number < p.number : name_less(s.name, s.name_size, p.name, p.name_size);
    }
  };
  detail::heap_sort(files_, file_count_, sizeof(FileSlot), &Less::of, nullptr);
}

// The model has `files` files and the last one found no slot: the host's max_files, or the arena
// (`extra`: what else the slot needed, its name).
ModelEvent ModelLoader::fail_files(uint64_t files, size_t extra, uint32_t file) {
  if ((max_files_ && files > max_files_) || files >= 0xFFFFFFF0u) {
    fail(Status::TooManyFiles, 0, file);
    error_.set_found(files);
    if (max_files_) error_.set_expected(max_files_);
    return fail(error_.code, error_.offset, error_file_);
  }
  return fail_arena(size_t((sizeof(FileSlot) + 4) * files) + extra, file);
}

Status ModelLoader::open(ModelEntry entry, const char* name) { return open(entry, name, name ? strlen(name) : 0); }

Status ModelLoader::open(ModelEntry entry, const char* name, size_t n) {
  if (opened_ || phase_ != Phase::Idle) return Status::UsageError;
  if (!files_) {
    fail_arena((sizeof(FileSlot) + 4) * kInitialFiles, kNoFile);
    return Status::ArenaExhausted;
  }
  if (opt_.read_size == 0) {
    fail(Status::UsageError, 0, kNoFile);
    return Status::UsageError;
  }
  opened_ = true;
  if (entry == ModelEntry::Auto) {
    bool uqff = false;
    for (uint32_t f = 0; f < file_count_; ++f) uqff = uqff || files_[f].kind == ModelFileKind::UqffPart;
    if (file_count_ > 0) entry = uqff ? ModelEntry::UqffFiles : ModelEntry::GgufSplits;
    else if (name && model_entry_from_name(name, n) == ModelEntry::ShardIndex) entry = ModelEntry::ShardIndex;
  }
  entry_ = entry;
  if (entry == ModelEntry::UqffFiles || entry == ModelEntry::GgufSplits) {
    // The names of the entry's kind, in the model's order: UQFF by number, splits by name.
    const ModelFileKind keep = entry == ModelEntry::UqffFiles ? ModelFileKind::UqffPart : ModelFileKind::Split;
    uint32_t kept = 0;
    for (uint32_t f = 0; f < file_count_; ++f)
      if (files_[f].kind == keep) files_[kept++] = files_[f];
    file_count_ = kept;
    if (entry == ModelEntry::UqffFiles) {
      order_uqff_files();
    } else {
      struct Less {
        static bool of(const void* a, const void* b, const void*) {
          const FileSlot& x = *static_cast<const FileSlot*>(a);
          const FileSlot& y = *static_cast<const FileSlot*>(b);
          return name_less(x.name, x.name_size, y.name, y.name_size);
        }
      };
      detail::heap_sort(files_, file_count_, sizeof(FileSlot), &Less::of, nullptr);
      for (uint32_t f = 0; f < file_count_; ++f) files_[f].split_pos = f;
    }
    phase_ = Phase::Headers;
    cur_ = 0;
    return Status::Ok;
  }
  if (file_count_ > 0) {  // add_file() is for UQFF directories only
    fail(Status::UsageError, 0, kNoFile);
    return Status::UsageError;
  }
  const ModelFileKind kind = entry == ModelEntry::ShardIndex       ? ModelFileKind::Index
                             : entry == ModelEntry::OllamaManifest ? ModelFileKind::Manifest
                                                                   : ModelFileKind::File;
  const uint32_t f = add_slot(kind, name ? name : "", name ? n : 0, true);
  if (f == kNoFile) {
    fail_arena(n + 1, kNoFile);
    return Status::ArenaExhausted;
  }
  cur_ = f;
  if (verify_blobs_ && !digest_ops_->blobs(*this)) {  // an entry named sha256-<hex>: a blob
    fail_arena(sizeof(FileDigest) + kAlign, kNoFile);
    return Status::ArenaExhausted;
  }
  if (kind == ModelFileKind::File) {
    phase_ = Phase::Headers;  // Auto decides on the file's first 8 bytes
    return Status::Ok;
  }
  entry_file_ = f;
  phase_ = Phase::EntryDoc;
  return Status::Ok;
}

// --- The pull loop ----------------------------------------------------------------------------

ModelEvent ModelLoader::next() {
  if (phase_ == Phase::Failed) return fail(error_.code, error_.offset, error_file_);
  if (phase_ == Phase::Idle) return fail(Status::UsageError, 0, kNoFile);
  if (awaiting_) {
    if (answer_ == Answer::None) return fail(Status::UsageError, req_offset_, req_file_);
    awaiting_ = false;
    FileSlot& s = files_[req_file_];
    if (answer_ == Answer::Missing) {
      s.missing = true;
    } else {
      s.opened = true;
      if (answer_ == Answer::Eof) s.ended = true;
    }
    // A verified file's bytes are hashed as they arrive, whatever the phase (model_digest.cpp);
    // not in Headers mode, which reads headers only (whether a header read happened to cover a
    // whole file must not change the verdict: chunking never does).
    if (s.digest && opt_.mode == ModelLoadMode::Headers) {
    } else if (s.digest && answer_ == Answer::Data) digest_ops_->feed(*this, req_file_, req_offset_, answer_data_, answer_size_);
    if (s.digest && answer_ == Answer::Eof) digest_ops_->end(*this, req_file_, req_offset_);
  }
  // A warning found while the last step went on (a piece's end in the stream): handed out first.
  if (warn_pending_) return warning_event();
  for (;;) {
    ModelEvent e = step();
    if (e.type != ModelEventType::Done || phase_ == Phase::Done) return e;
    // Done from a phase that is not finished means "nothing to hand out yet": step again.
  }
}

// One step of the current phase. A phase returns an event, or Done without entering Phase::Done
// when it only moved on (the loop above steps again).
ModelEvent ModelLoader::step() {
  switch (phase_) {
    case Phase::EntryDoc: return step_entry_doc();
    case Phase::Headers: return step_headers();
    case Phase::Config: return step_config();
    case Phase::ConventionData: return step_convention_data();
    case Phase::Ready: return after_ready();
    case Phase::Seek: return step_seek();
    case Phase::Stream: return step_stream();
    case Phase::Done: {
      ModelEvent e;
      e.type = ModelEventType::Done;
      return e;
    }
    case Phase::Failed: return fail(error_.code, error_.offset, error_file_);
    case Phase::Idle: break;
  }
  return fail(Status::UsageError, 0, kNoFile);
}

namespace {
ModelEvent again() {
  ModelEvent e;
  e.type = ModelEventType::Done;
  return e;
}
}  // namespace

// --- index.json / manifest --------------------------------------------------------------------

ModelEvent ModelLoader::step_entry_doc() {
  FileSlot& s = files_[entry_file_];
  const bool is_index = s.kind == ModelFileKind::Index;
  if (!index_ && !manifest_) {
    // Its first request goes out before the parser takes the free middle: a host may still give
    // the file's digest then (set_file_sha256).
    if (!s.prefix_have && !s.opened && answer_ == Answer::None) return request(entry_file_, s.pos, opt_.read_size);
    // The document's parser gets the whole free middle; it keeps its two ends when done.
    void* mem = take_low(is_index ? sizeof(ShardIndex) : sizeof(OllamaManifest), kAlign);
    if (!mem) return fail_arena(is_index ? sizeof(ShardIndex) : sizeof(OllamaManifest), entry_file_);
    s.region_lo = lo_;
    s.region_hi = hi_;
    if (is_index)
      index_ = new (mem) ShardIndex(lo_, size_t(hi_ - lo_), opt_.limits);
    else
      manifest_ = new (mem) OllamaManifest(lo_, size_t(hi_ - lo_), opt_.limits);
    // An Auto entry found to be JSON: its first bytes were read already.
    if (s.prefix_have) {
      const Status st = is_index ? index_->feed(s.prefix, s.prefix_have) : manifest_->feed(s.prefix, s.prefix_have);
      if (st != Status::Ok) {
        if (st == Status::ArenaExhausted) return fail_arena(is_index ? index_->arena_needed() : manifest_->arena_needed(), entry_file_);
        return fail_error(is_index ? index_->error() : manifest_->error(), entry_file_);
      }
    }
  }
  bool done = false;
  if (answer_ == Answer::Missing) return fail(Status::FileMissing, 0, entry_file_);
  if (answer_ == Answer::Data) {
    answer_ = Answer::None;
    const Status st = is_index ? index_->feed(answer_data_, answer_size_) : manifest_->feed(answer_data_, answer_size_);
    s.pos += answer_size_;
    if (st != Status::Ok) {
      if (st == Status::ArenaExhausted) return fail_arena(is_index ? index_->arena_needed() : manifest_->arena_needed(), entry_file_);
      return fail_error(is_index ? index_->error() : manifest_->error(), entry_file_);
    }
  } else if (answer_ == Answer::Eof) {
    answer_ = Answer::None;
    done = true;
  }
  if (!done && s.size_known && s.pos >= s.size) done = true;
  if (!done) return request(entry_file_, s.pos, opt_.read_size);
  if (digest_failed(entry_file_)) return fail_digest(entry_file_);
  const Status st = is_index ? index_->finish() : manifest_->finish();
  if (st == Status::ArenaExhausted) return fail_arena(is_index ? index_->arena_needed() : manifest_->arena_needed(), entry_file_);
  if (st != Status::Ok) return fail_error(is_index ? index_->error() : manifest_->error(), entry_file_);
  // Keep the document's two ends; the rest of its region is free again.
  lo_ = align_up(s.region_lo + (is_index ? index_->arena_low() : manifest_->arena_low()), kAlign);
  hi_ = s.region_hi - (is_index ? index_->arena_high() : manifest_->arena_high());
  return after_entry_doc();
}

// The data files the document names, in model order.
ModelEvent ModelLoader::after_entry_doc() {
  entry_ready_ = true;
  if (index_) {
    const uint32_t n = index_->shard_count();
    // Every name is checked before any shard is opened: a hostile index is refused as a whole.
    // Shards in file-name order (model-00001-of-... first): the order a sequential reader streams
    // them in, which the load plan assumes for tables. Names are checked in that order too.
    // Slots for the shards and config.json first, then the order in the free middle above them
    // (a scratch the slots, taken already, do not touch).
    if (!reserve_files(uint32_t(uint64_t(file_count_) + n + 1 < 0xFFFFFFF0u ? file_count_ + n + 1 : 0xFFFFFFF0u)))
      return fail_files(uint64_t(file_count_) + n + 1, 0, entry_file_);
    uint32_t* order = reinterpret_cast<uint32_t*>(align_up(lo_, kAlign));
    if (lo_ > hi_ || uint64_t(n) * 4 > uint64_t(hi_ - align_up(lo_, kAlign))) return fail_arena(size_t(n) * 4 + 8, entry_file_);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    struct Less {
      static bool of(const void* a, const void* b, const void* ctx) {
        const ShardIndex& index = *static_cast<const ShardIndex*>(ctx);
        const StrView x = index.shard_name(*static_cast<const uint32_t*>(a));
        const StrView y = index.shard_name(*static_cast<const uint32_t*>(b));
        return name_less(x.data, x.size, y.data, y.size);  // names are unique: a total order
      }
    };
    detail::heap_sort(order, n, 4, &Less::of, index_);
    for (uint32_t i = 0; i < n; ++i) {
      const StrView name = index_->shard_name(order[i]);
      if (!safe_shard_name(name)) {
        fail(Status::UnsafeShardPath, 0, entry_file_);
        error_.tensor_name = name.data;  // the name, for the message (no tensor has it)
        error_.tensor_name_size = name.size;
        return fail(error_.code, error_.offset, error_file_);
      }
    }
    for (uint32_t i = 0; i < n; ++i) {
      const StrView name = index_->shard_name(order[i]);
      add_slot(ModelFileKind::Shard, name.data, name.size, false);
    }
  } else {
    uint32_t tensors = 0;
    for (uint32_t l = 0; l < manifest_->layer_count(); ++l) tensors += manifest_->layer(l).is_tensor ? 1 : 0;
    if (!reserve_files(file_count_ + tensors)) return fail_files(uint64_t(file_count_) + tensors, 0, entry_file_);
    for (uint32_t l = 0; l < manifest_->layer_count(); ++l) {
      const ManifestLayer layer = manifest_->layer(l);
      if (!layer.is_tensor) continue;  // config, template, license, ...: not weights
      // "blobs/sha256-<hex>": the parser checked the digest, so the name cannot leave blobs/.
      char* p = static_cast<char*>(take_low(6 + layer.blob_file.size + 1, 1));
      if (!p) return fail_arena(6 + layer.blob_file.size + 1, entry_file_);
      memcpy(p, "blobs/", 6);
      memcpy(p + 6, layer.blob_file.data, layer.blob_file.size);
      p[6 + layer.blob_file.size] = '\0';
      const uint32_t f = add_slot(ModelFileKind::Blob, p, 6 + layer.blob_file.size, false);
      files_[f].layer = l;
    }
    // Content addressing: each blob against the digest its name is (verify_blobs()).
    if (verify_blobs_ && !digest_ops_->blobs(*this))
      return fail_arena((sizeof(FileDigest) + kAlign) * (file_count_ - entry_file_), entry_file_);
  }
  phase_ = Phase::Headers;
  cur_ = entry_file_ + 1;
  return again();
}

// --- Headers ----------------------------------------------------------------------------------

namespace {
bool multi_file(ModelEntry e) { return e == ModelEntry::ShardIndex || e == ModelEntry::OllamaManifest || e == ModelEntry::UqffFiles; }
}  // namespace

ModelEvent ModelLoader::step_headers() {
  if (cur_ >= file_count_) {
    // Every header is in: the index's own checks (a split GGUF model's over all splits), then
    // the convention.
    if (index_ && index_->finish_checks() != Status::Ok) return fail_error(index_->error(), entry_file_);
    ModelEvent e;
    if (split_count_ && !split_finish(&e)) return e;
    return build();
  }
  FileSlot& s = files_[cur_];
  if (answer_ == Answer::Missing) {
    answer_ = Answer::None;
    const Status code = s.kind == ModelFileKind::Shard   ? Status::ShardNotGiven
                        : s.kind == ModelFileKind::Blob  ? Status::ManifestBlobMissing
                        : s.kind == ModelFileKind::Split ? Status::GgufSplitMissing
                                                         : Status::FileMissing;
    fail(code, 0, cur_);
    if (s.kind == ModelFileKind::Blob) {  // the layer's name: what users find in the manifest
      const StrView layer = manifest_->layer(s.layer).name;
      error_.tensor_name = layer.data;
      error_.tensor_name_size = layer.size;
    }
    return fail(error_.code, error_.offset, error_file_);
  }
  if (!s.reader) {
    // The first 8 bytes decide what the file is before any parser sees them.
    if (answer_ == Answer::Data) {
      answer_ = Answer::None;
      const size_t n = answer_size_ < size_t(8 - s.prefix_have) ? answer_size_ : size_t(8 - s.prefix_have);
      memcpy(s.prefix + s.prefix_have, answer_data_, n);
      s.prefix_have = uint8_t(s.prefix_have + n);
      s.pos += n;
    } else if (answer_ == Answer::Eof) {
      answer_ = Answer::None;
    }
    if (s.kind == ModelFileKind::Blob && s.opened && s.size_known) {
      // A blob of another size belongs to another model (or is incomplete): said before its header.
      Error e;
      if (check_manifest_blob_size(*manifest_, s.layer, s.size, &e) != Status::Ok) return fail_error(e, cur_);
    }
    if (s.prefix_have < 8 && !s.ended) return request(cur_, s.pos, 8 - s.prefix_have);
    const bool gguf = s.prefix_have >= 4 && memcmp(s.prefix, "GGUF", 4) == 0;
    if (!gguf && s.kind == ModelFileKind::Split) return fail(Status::GgufSplitNotGguf, 0, cur_);
    if (gguf && multi_file(entry_)) {
      fail(s.kind == ModelFileKind::Blob ? Status::ManifestBlobNotSafetensors : Status::ModelFileNotSafetensors, 0, cur_);
      if (s.kind == ModelFileKind::Blob) {
        const StrView layer = manifest_->layer(s.layer).name;
        error_.tensor_name = layer.data;
        error_.tensor_name_size = layer.size;
      }
      return fail(error_.code, error_.offset, error_file_);
    }
    const uint64_t n = s.prefix_have == 8 ? le64(s.prefix) : 0;
    const uint64_t cap = opt_.limits.max_header_bytes < kMaxSafetensorsHeader ? opt_.limits.max_header_bytes : kMaxSafetensorsHeader;
    if (entry_ == ModelEntry::Auto && cur_ == 0 && s.prefix_have == 8 &&
        file_kind_is_json(detect_file_kind(s.prefix, 8, kUnknownFileSize))) {
      // Not a safetensors file (its length would be absurd) but JSON: an Ollama manifest (the
      // kinds' one rule, file_kind.h; an index is told by its name, model_entry_from_name).
      entry_ = ModelEntry::OllamaManifest;
      s.kind = ModelFileKind::Manifest;
      entry_file_ = cur_;
      phase_ = Phase::EntryDoc;
      return again();
    }
    if (entry_ == ModelEntry::Auto) entry_ = ModelEntry::File;
    if (!gguf && s.prefix_have == 8 && n <= cap) {
      s.header_end = 8 + n;
      // The retry sized from the length (estimate_arena): what the reader's parse would tell
      // after counting the whole header through, estimated before parsing any of it.
      const size_t need = sizeof(Reader) + kAlign + size_t(detail::SafetensorsHeaderParser::arena_estimate(n));
      if (opt_.estimate_arena && need > size_t(hi_ - lo_)) {
        size_t rest = ~size_t(0);
        if (cur_ + 1 == file_count_) {  // the last header: the model's part too, as below
          uint64_t tensors = detail::SafetensorsHeaderParser::tensors_estimate(n);
          for (uint32_t g = 0; g < cur_; ++g)
            if (files_[g].header_done) tensors += files_[g].reader->tensor_count();
          rest = after_headers_need(tensors, false);
        }
        return fail_arena(need, cur_, rest);
      }
    }
    void* mem = take_low(sizeof(Reader), kAlign);
    if (!mem) return fail_arena(sizeof(Reader), cur_);
    s.region_lo = lo_;
    s.region_hi = hi_;
    s.reader = new (mem) Reader(lo_, size_t(hi_ - lo_), opt_.limits);
    if (s.size_known) s.reader->set_input_size(s.size);
    // The prefix goes first (the reader views it until it asks for more: it lives in the slot).
    if (s.reader->next().type != EventType::NeedInput) return fail(Status::UsageError, 0, cur_);
    if (s.prefix_have)
      s.reader->feed(s.prefix, s.prefix_have);
    else
      s.reader->finish();
  } else if (answer_ == Answer::Data) {
    answer_ = Answer::None;
    s.reader->feed(answer_data_, answer_size_);
    s.pos += answer_size_;
  } else if (answer_ == Answer::Eof) {
    answer_ = Answer::None;
    s.reader->finish();
  }
  for (;;) {
    const Event e = s.reader->next();
    switch (e.type) {
      case EventType::NeedInput: {
        if (s.ended) {
          s.reader->finish();
          continue;
        }
        // Safetensors: exactly the header (the data is read later, maybe by range, and a
        // sequential host must not hand over bytes of the data that nothing would keep).
        const uint64_t len = s.header_end > s.pos ? s.header_end - s.pos : opt_.read_size;
        return request(cur_, s.pos, len);
      }
      case EventType::KvBegin:
      case EventType::KvScalar:
      case EventType::KvBytes:
      case EventType::KvEnd: {
        if (s.reader->format() == Format::Gguf) note_kv(s, e);  // split.* keys (model_split.cpp)
        if (e.type == EventType::KvBegin) {
          kv_strings_ = e.value_type == GgufType::Array && e.elem_type == GgufType::String;
          kv_preview_ = kv_strings_ && e.count > opt_.gguf_array_full;
          kv_string_bytes_ = 0;
        } else if (e.type == EventType::KvBytes && kv_strings_) {
          kv_string_bytes_ += e.size;
          // The preview's middle: read and checked by the reader, counted, not handed out (one
          // event through every layer per vocabulary entry was most of inspecting a GGUF).
          if (kv_preview_ && e.index >= opt_.gguf_array_head && e.index + 1 != e.count) continue;
        }
        reader_event_ = e;
        ModelEvent out;
        out.type = ModelEventType::Kv;
        out.file = cur_;
        out.kv = &reader_event_;
        return out;
      }
      case EventType::HeaderReady: return header_ready(cur_);
      case EventType::Error: {
        if (s.reader->error().code == Status::ArenaExhausted) {
          // The reader counted its header through: its need is exact, and so is the count of its
          // tensors. When it is the model's last file, what follows is known too (save the
          // scratch of a selection and a config.json's document), so one retry suffices (but for
          // a GPTQ/AWQ model's composed names: build() asks for them).
          size_t rest = ~size_t(0);
          if (cur_ + 1 == file_count_) {
            uint64_t tensors = s.reader->tensors_seen();
            for (uint32_t g = 0; g < cur_; ++g)
              if (files_[g].header_done) tensors += files_[g].reader->tensor_count();
            rest = after_headers_need(tensors, s.reader->format() == Format::Gguf);
          }
          return fail_arena(s.reader->arena_needed(), cur_, rest);
        }
        Error err = s.reader->error();
        // A tensor index without a name (the reader had not stored it): take it from the table.
        if (!err.tensor_name && err.tensor < s.reader->tensor_count()) {
          const StrView name = s.reader->tensor(err.tensor).name;
          err.tensor_name = name.data;
          err.tensor_name_size = name.size;
        }
        return fail_error(err, cur_);
      }
      default:
        return fail(Status::UsageError, s.pos, cur_);  // no data event comes before HeaderReady
    }
  }
}

ModelEvent ModelLoader::header_ready(uint32_t f) {
  FileSlot& s = files_[f];
  const Reader& r = *s.reader;
  s.header_done = true;
  // Keep the reader's two ends; the free middle goes on to the next file.
  lo_ = align_up(s.region_lo + r.arena_low(), kAlign);
  hi_ = s.region_hi - r.arena_high();
  if (r.format() == Format::Gguf &&
      (split_count_ || entry_ == ModelEntry::File || entry_ == ModelEntry::GgufSplits)) {
    // A split GGUF model's file: its rules, and its table once all splits are in (split order).
    ModelEvent e;
    if (split_header(f, &e)) return e;
  }
  s.table = table_count_;
  table_files_[table_count_++] = f;
  if (s.kind == ModelFileKind::Shard &&
      index_->check_shard(s.name, s.name_size, r.tensors()) != Status::Ok)
    return fail_error(index_->error(), f);
  if (s.kind == ModelFileKind::Blob) {
    Error e;
    if (check_manifest_blob_tensors(*manifest_, s.layer, r.tensors(), &e) != Status::Ok) return fail_error(e, f);
  }
  if (r.format() == Format::Safetensors) {
    signal_bits_ |= convention_signal_bits(r.tensors());
  }
  ++cur_;
  return again();
}

// --- config.json and the model ---------------------------------------------------------------

ModelEvent ModelLoader::step_config() {
  FileSlot& s = files_[config_file_];
  bool done = false, failed = false;
  // Its first request before its parser takes the free middle (a digest may come with it).
  if (!config_ && !s.opened && !s.missing && answer_ == Answer::None) return request(config_file_, s.pos, opt_.read_size);
  if (!config_) {
    void* mem = take_low(sizeof(MlxQuantConfig), kAlign);
    if (!mem) return fail_arena(sizeof(MlxQuantConfig), config_file_);
    config_ = new (mem) MlxQuantConfig(lo_, size_t(hi_ - lo_), opt_.limits);
    config_->set_source(ConfigSource(config_source_));
  }
  if (answer_ == Answer::Missing) {
    answer_ = Answer::None;
    config_ = nullptr;  // no config.json: fine
    return build();
  }
  if (answer_ == Answer::Data) {
    answer_ = Answer::None;
    s.pos += answer_size_;
    if (!config_drain_) failed = config_->feed(answer_data_, answer_size_) != Status::Ok;
  } else if (answer_ == Answer::Eof) {
    answer_ = Answer::None;
    done = true;
  }
  const bool at_end = done || (s.size_known && s.pos >= s.size);
  // A config.json that does not parse is no business of a model the files do not say is MLX (see
  // below), but a digest given for it still checks every byte: the rest is read for the hash alone
  // (Headers mode hashes nothing).
  // The convention the entry and the files' metadata give, before config.json has its say.
  const ConventionDescriptor& signalled = resolve_convention(uint8_t(entry_), signal_bits_, false);
  const bool config_is_params = signalled.config == ConfigRole::ParamSource;
  if (failed && !config_is_params && s.digest && s.digest->state == DigestState::Pending &&
      opt_.mode != ModelLoadMode::Headers)
    config_drain_ = true;
  if (config_drain_) {
    if (!at_end) return request(config_file_, s.pos, opt_.read_size);
    if (digest_failed(config_file_)) return fail_digest(config_file_);
    config_ = nullptr;
    return build();
  }
  if (!failed && !at_end) return request(config_file_, s.pos, opt_.read_size);
  // A digest that failed is the answer, whether or not the bytes parse (a file that is not the one
  // named is the cause of both).
  if (digest_failed(config_file_)) return fail_digest(config_file_);
  const Status st = failed ? config_->error().code : config_->finish();
  if (st == Status::ArenaExhausted) return fail_arena(config_->arena_needed(), config_file_);
  if (st != Status::Ok) {
    // A config.json that does not parse matters only when the files signal a convention whose
    // parameters it holds (MLX): it is then the model's quantization source. Otherwise it is not
    // the model's business.
    if (config_is_params) {
      convention_error_ = true;
      convention_ = signalled.id;  // the files say so; their quantization source is what failed
      return fail_error(config_->error(), config_file_);
    }
    config_ = nullptr;
  } else if (!config_->has_quantization() && !config_->has_method()) {
    config_ = nullptr;
  }
  return build();
}

// GGUF: one weight per tensor, of every table in order (a split model's splits). The type ids
// mean what the first file's dialect says (a later split has no general.architecture).
uint64_t ModelLoader::gguf_tensor_total() const {
  uint64_t n = 0;
  for (uint32_t t = 0; t < table_count_; ++t) n += files_[table_files_[t]].reader->tensor_count();
  return n;
}

bool ModelLoader::gguf_weights() {
  const uint64_t total = gguf_tensor_total();
  if (total >= 0xFFFFFFFFu) return false;
  gguf_count_ = uint32_t(total);
  void* mem = take_low(sizeof(LogicalWeight) * (gguf_count_ ? gguf_count_ : 1), kAlign);
  if (!mem) return false;
  gguf_weights_ = static_cast<LogicalWeight*>(mem);
  const GgmlDialect dialect = files_[table_files_[0]].reader->gguf_dialect();
  uint32_t base = 0;
  for (uint32_t tab = 0; tab < table_count_; ++tab) {
  FileSlot& slot = files_[table_files_[tab]];
  const Reader& r = *slot.reader;
  slot.first_weight = base;
  for (uint32_t i = 0; i < r.tensor_count(); ++i) {
    const TensorInfo t = r.tensor(i);
    LogicalWeight& w = *new (gguf_weights_ + base + i) LogicalWeight();
    w.name = t.name;
    w.piece[uint32_t(PieceRole::Packed)] = TensorRef{tab, i};
    // GGUF lists ne[0], the contiguous dimension, first: row-major order is the reverse.
    uint64_t dims[kMaxLogicalRank] = {};
    w.rank = t.copy_shape(dims, kMaxLogicalRank);
    for (uint32_t d = 0; d < w.rank; ++d) w.shape[d] = dims[w.rank - 1 - d];
    w.elements = t.element_count();
    QuantFormat f;
    if (!quant_format_from_ggml(t.type, dialect, &f)) continue;
    w.format = f;
    // The decoder's own checks, before any byte is read: a kernel this build lacks, a tensor
    // that is not whole blocks, stored bytes that are not what its values take (I2_S: codes
    // plus a 32-byte scale tail), values that would not fit in 64 bits of output.
    DequantSpec spec;
    spec.format = f;
    spec.elements = w.elements;
    spec.has_global_scale = f == QuantFormat::I2_S;
    Dequantizer& probe = dq_;  // idle until the data phase (a second one would be 0.7 KB of stack)
    const uint64_t tail = f == QuantFormat::I2_S ? 32 : 0;
    if (probe.init(spec) != Status::Ok || probe.input_bytes() + tail != t.byte_size()) continue;
    if (w.elements > (~uint64_t(0) >> 2)) continue;
    w.decodable = true;
  }
  base += r.tensor_count();
  }
  return true;
}

ModelEvent ModelLoader::build() {
  const Reader* first = table_count_ ? files_[table_files_[0]].reader : nullptr;
  const bool gguf = first && first->format() == Format::Gguf;
  if (phase_ == Phase::Headers) {
    if (gguf) {
      convention_ = Convention::Plain;
      if (!gguf_weights()) {
        if (gguf_tensor_total() >= 0xFFFFFFFFu) return fail(Status::TooManyTensors, 0, table_files_[0]);
        return fail_arena(size_t(sizeof(LogicalWeight) * (gguf_tensor_total() + 1)), table_files_[0]);
      }
      ModelEvent e;
      if (split_count_ && !split_weights_check(&e)) return e;
      return model_ready();
    }
    // The model: its weights (at most one per tensor) and a name hash of two slots per tensor, so
    // grouping and lookups stay linear whatever the model's size (LogicalModel::set_index_slots).
    // And the names no header string spells (GPTQ/AWQ `<m>.weight`): known only from the names,
    // so after_headers_need() leaves them out and a host's retry may need one more step here.
    uint64_t tensors = 0, names = 0;
    for (uint32_t t = 0; t < table_count_; ++t) {
      const Reader& r = *files_[table_files_[t]].reader;
      tensors += r.tensor_count();
      names += LogicalModel::name_storage_for(r.tensors());
    }
    const uint64_t slots = LogicalModel::index_slots_for(tensors);
    const uint64_t need = round8(sizeof(LogicalModel)) + round8(size_t(sizeof(LogicalWeight) * (tensors + 1))) +
                          (slots > LogicalModel::kInlineSlots ? round8(size_t(4 * slots)) : 0) + table_storage_need() +
                          round8(size_t(names));
    if (tensors >= 0xFFFFFFFFu || need > uint64_t(hi_ - lo_)) return fail_arena(size_t(need), kNoFile);
    void* model_mem = take_low(sizeof(LogicalModel), kAlign);
    LogicalWeight* storage = static_cast<LogicalWeight*>(take_low(size_t(sizeof(LogicalWeight) * (tensors + 1)), kAlign));
    model_ = new (model_mem) LogicalModel(storage, uint32_t(tensors + 1));
    if (table_count_ > LogicalModel::kInlineTables)  // a model of more files than the object holds
      model_->set_table_storage(static_cast<LogicalTable*>(take_low(table_storage_need(), kAlign)), table_count_);
    if (slots > LogicalModel::kInlineSlots) {
      uint32_t* slot_mem = static_cast<uint32_t*>(take_low(size_t(4 * slots), kAlign));
      model_->set_index_slots(slot_mem, uint32_t(slots));
    }
    if (names) model_->set_name_storage(static_cast<char*>(take_low(size_t(names), kAlign)), size_t(names));
    if (!opt_.as_stored && resolve_convention(uint8_t(entry_), signal_bits_, false).config != ConfigRole::Ignored) {
      // config.json beside a model whose convention reads it (MLX's params; a plain model's may
      // make it MLX), asked for by name. Its
      // parser takes the free middle above the model and is dropped after the build.
      config_file_ = add_slot(ModelFileKind::Config, "config.json", 11, false);
      if (config_file_ == kNoFile) return fail(Status::TooManyFiles, 0, kNoFile);
      config_mark_ = lo_;
      phase_ = Phase::Config;
      return again();
    }
  }
  // An MLX quantization section claims the model for MLX; a quant_method section names a scheme
  // refuse_undecoded_quantization() refuses (quant_methods.cpp).
  config_used_ = config_ && config_->has_quantization();
  uint32_t base = 0;
  for (uint32_t t = 0; t < table_count_ && model_->table_count() < table_count_; ++t) {  // once
    FileSlot& slot = files_[table_files_[t]];
    const Reader& r = *slot.reader;
    model_->add_table(&r.tensors(), r.data_start());
    slot.first_weight = base;  // as_stored: weight = first_weight + tensor index (owner_of)
    base += r.tensor_count();
  }
  // A model config.json says nothing of (no quantization section, no quant_method; or none)
  // whose tensor names show a quantization scheme: the files other writers keep its method in,
  // in turn, each missing one fine, until one names it (ConfigSource; vLLM reads the same names).
  // Only then: a plain model costs no extra request.
  static const ConfigSource kOtherConfigs[] = {ConfigSource::HfQuantConfig, ConfigSource::QuantizeConfig,
                                               ConfigSource::QuantConfig};
  bool ask_other = !opt_.as_stored && !config_ && config_mark_ && other_configs_ < 3 &&
                   resolve_convention(uint8_t(entry_), signal_bits_, false).plain &&
                   quantization_named_by_tensors(*model_);
  if (ask_other) {
    lo_ = config_mark_;  // the last parser's bytes (dropped) are free again
    if (other_configs_ == 0) {
      // Slots for all three now, below the mark: a slot table that grew later would sit in the
      // parsers' bytes, which each next file frees. A host's max_files without room for them:
      // the tensor names alone say what the model is.
      if (!reserve_files(file_count_ + 3)) ask_other = false;
      config_mark_ = lo_;
    }
  }
  if (ask_other) {
    const ConfigSource src = kOtherConfigs[other_configs_++];
    const char* name = config_source_file(src);
    config_file_ = add_slot(ModelFileKind::Config, name, strlen(name), false);
    if (config_file_ == kNoFile) return fail(Status::TooManyFiles, 0, kNoFile);
    config_source_ = uint8_t(src);
    config_drain_ = false;
    phase_ = Phase::Config;
    return again();
  }
  Status s;
  if (opt_.as_stored) {
    // Tensors as stored: one weight each, whatever the files' metadata or the entry say.
    convention_ = Convention::Plain;
    s = model_->build_plain();
  } else {
    // The table decides (convention_table.cpp): the config's method, the entry, the files'
    // metadata, a config quantization section, the tensor names.
    bool claimed = false;
    const ConventionDescriptor& d =
        choose_convention(uint8_t(entry_), signal_bits_, config_used_, *model_, config_, &claimed);
    convention_ = d.id;
    // Claimed by the method the config names (choose_convention() asks the names only when the
    // config names none), by a row whose parameters come from there (FP8's weight_block_size):
    // the config is the model's quantization source.
    if (claimed && config_ && config_->has_method() && d.config == ConfigRole::ParamSource) config_used_ = true;
    // A scheme this reader does not decode, named by config.json or (when neither the entry nor
    // the files' metadata say what the model is) by its tensor names, is refused before any build.
    s = claimed ? Status::Ok
                : refuse_undecoded_quantization(*model_, config_,
                                                resolve_convention(uint8_t(entry_), signal_bits_, false).plain);
    if (s == Status::Ok) s = d.build(*model_, config_);
  }
  // The config's parser is dropped (the model keeps no view into it): its bytes are free again.
  config_ = nullptr;
  if (config_mark_) lo_ = config_mark_;
  if (s != Status::Ok) {
    const uint32_t t = model_->error_table();
    convention_error_ = true;

    error_detail_ = model_->error_detail();
    return fail_error(model_->error(), t < table_count_ ? table_files_[t] : kNoFile);
  }
  if (convention_descriptor(convention_).data_phase) {  // (never as_stored: no data is read)
    cur_ = 0;
    sub_ = 0;
    at_ = 0;
    if (opt_.seekable) {
      phase_ = Phase::ConventionData;
    } else if (convention_descriptor(convention_).data_phase->check_only || weight_stream()) {
      // Nothing the weights need (checked as the stream passes after ModelReady: route()), or
      // resolved weight by weight as it passes (a decode or raw load; model_stream.cpp).
      check_stream_ = true;
      return model_ready();
    } else {
      // A stream that cannot seek: the wanted tensors are fed as they pass and the model resolves
      // after the last file, so everything is read (and validated) before ModelReady.
      data_stream_ = true;
      phase_ = Phase::Stream;
    }
    return again();
  }
  return model_ready();
}

// The convention's data phase resolved (its error is the model's), then ModelReady.
ModelEvent ModelLoader::resolve_convention_data() {
  if (convention_descriptor(convention_).data_phase->resolve(*model_) != Status::Ok) {
    const uint32_t t = model_->error_table();
    convention_error_ = true;
    error_detail_ = model_->error_detail();
    return fail_error(model_->error(), t < table_count_ ? table_files_[t] : kNoFile);
  }
  return model_ready();
}

// Seekable: each tensor the convention's data phase wants (UQFF: a few bytes each), read by range
// in table order, then resolved.
ModelEvent ModelLoader::step_convention_data() {
  const ConventionDataPhase& data = *convention_descriptor(convention_).data_phase;
  for (;;) {
    if (cur_ >= table_count_) return resolve_convention_data();
    const TensorTable& tab = model_->table(cur_);
    if (sub_ >= tab.count()) {
      ++cur_;
      sub_ = 0;
      continue;
    }
    if (!data.wants(*model_, cur_, sub_)) {
      ++sub_;
      continue;
    }
    const TensorRef r{cur_, sub_};
    const uint64_t begin = model_->piece_begin(r), end = model_->piece_end(r);
    const uint32_t f = table_files_[cur_];
    if (at_ < begin) at_ = begin;
    if (answer_ == Answer::Data) {
      answer_ = Answer::None;
      if (data.feed(*model_, cur_, sub_, at_, answer_data_, answer_size_) != Status::Ok) {
        convention_error_ = true;  // (bitsandbytes' quant_state JSON: an error of the model's)
        return fail_error(model_->error(), f);
      }
      at_ += answer_size_;
    } else if (answer_ == Answer::Eof || answer_ == Answer::Missing) {
      return fail_piece_read(f, sub_, tab.get(sub_).name);
    }
    if (at_ >= end) {
      ++sub_;
      at_ = 0;
      continue;
    }
    return request(f, at_, end - at_);
  }
}

ModelEvent ModelLoader::model_ready() {
  if (opt_.mode == ModelLoadMode::Decode || opt_.mode == ModelLoadMode::Raw) {
    const uint32_t n = weight_count();
    selected_ = static_cast<uint8_t*>(take_low((n + 7) / 8 + 1, kAlign));
    if (!selected_) return fail_arena((n + 7) / 8 + 1, kNoFile);
    memset(selected_, 0, (n + 7) / 8 + 1);
  }
  stream_rest_ = stream_rest();
  warn_prepare();
  ready_ = true;
  phase_ = Phase::Ready;
  ModelEvent e;
  e.type = ModelEventType::ModelReady;
  return e;
}

// --- Accessors --------------------------------------------------------------------------------

StrView ModelLoader::file_name(uint32_t f) const {
  StrView v;
  if (f < file_count_) {
    v.data = files_[f].name;
    v.size = files_[f].name_size;
  }
  return v;
}

ModelFileKind ModelLoader::file_kind(uint32_t f) const { return f < file_count_ ? files_[f].kind : ModelFileKind::File; }
bool ModelLoader::file_present(uint32_t f) const { return f < file_count_ && !files_[f].missing; }
const Reader* ModelLoader::file_reader(uint32_t f) const { return f < file_count_ ? files_[f].reader : nullptr; }
uint32_t ModelLoader::file_table(uint32_t f) const { return f < file_count_ ? files_[f].table : kNoTensor; }
bool ModelLoader::file_header_ready(uint32_t f) const { return f < file_count_ && files_[f].header_done; }
uint32_t ModelLoader::file_layer(uint32_t f) const { return f < file_count_ ? files_[f].layer : kNoTensor; }

Format ModelLoader::format() const {
  return table_count_ ? files_[table_files_[0]].reader->format() : Format::Unknown;
}

const TensorTable& ModelLoader::table(uint32_t t) const { return files_[table_files_[t]].reader->tensors(); }

uint32_t ModelLoader::weight_count() const { return model_ ? model_->weight_count() : gguf_count_; }

const LogicalWeight& ModelLoader::weight(uint32_t i) const { return model_ ? model_->weight(i) : gguf_weights_[i]; }

uint32_t ModelLoader::weight_file(uint32_t i) const {
  return table_file(weight(i).ref(PieceRole::Packed).table);
}

TensorInfo ModelLoader::tensor(TensorRef r) const { return table(r.table).get(r.index); }

uint64_t ModelLoader::piece_begin(TensorRef r) const {
  return files_[table_files_[r.table]].reader->data_start() + tensor(r).begin;
}
uint64_t ModelLoader::piece_end(TensorRef r) const {
  return files_[table_files_[r.table]].reader->data_start() + tensor(r).end;
}

ModelPlan ModelLoader::plan(uint64_t chunk) const {
  if (!model_) return ModelPlan();
  return plan_model(*model_, chunk ? chunk : 1);
}

}  // namespace ws
