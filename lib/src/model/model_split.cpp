// ws::ModelLoader, split GGUF models (model_loader.h, gguf_split.h; FORMATS.md §8): the split keys
// as each header streams past, the entry's name and keys deciding the model's files, each split's
// rules at its header, and the rules over all splits after the last (tensor names, the total).
//
// llama.cpp (src/llama-model-loader.cpp) is the oracle: it reads split.count from the first file
// (a model when > 1), requires the first file's split.no to be 0, derives the other names with
// llama_split_prefix / llama_split_path (or takes the caller's list, which must have split.count
// entries), requires each later split's split.no to be its position, rejects a tensor name seen
// in an earlier split, and compares the total with the first file's split.tensors.count. Its
// readers (GGUFMeta, gguf_get_val_u16) reject split keys of another type. We also accept any split
// as the entry (the others are named from it), and require a later split's split.count and
// split.tensors.count, when it states them, to be the first's (gguf-split writes them equal;
// llama.cpp does not read them there): a split of another model is named, not half-loaded.
#include <string.h>

#include "model_loader_internal.h"
#include "weightstream/gguf_split.h"

namespace ws {

namespace {

constexpr size_t kAlign = 8;

ModelEvent again() {
  ModelEvent e;
  e.type = ModelEventType::Done;
  return e;
}

// The types llama.cpp reads the keys as (LLM_KV_SPLIT_*: uint16_t, uint16_t, int).
constexpr GgufType kSplitKeyType[3] = {GgufType::U16, GgufType::U16, GgufType::I32};

// FNV-1a of a tensor name, for the duplicate check across splits.
uint32_t name_hash(const StrView& n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n.size; ++i) h = (h ^ uint8_t(n.data[i])) * 16777619u;
  return h;
}

}  // namespace

// --- Key-values as they stream past ------------------------------------------------------------

void ModelLoader::note_kv(FileSlot& s, const Event& e) {
  if (e.type == EventType::KvBegin) {
    s.kv_now = FileSlot::kNoKey;
    static const char* const kKeys[3] = {kGgufSplitNo, kGgufSplitCount, kGgufSplitTensorsCount};
    for (uint8_t k = 0; k < 3; ++k) {
      if (!e.key.equals(kKeys[k])) continue;
      s.kv_now = k;
      s.split_type[k] = uint8_t(e.value_type);
      s.split_offset[k] = e.offset;
      s.split_value[k] = 0;
      return;
    }
    if (e.key.size < 6 || memcmp(e.key.data, "split.", 6) != 0) {
      if (s.foreign_kvs++ == 0) s.foreign_offset = e.offset;
    }
  } else if (e.type == EventType::KvScalar && s.kv_now < 3) {
    s.split_value[s.kv_now] = s.split_type[s.kv_now] == uint8_t(GgufType::I32) ? e.i : int64_t(e.u);
  }
}

// --- Each split's header -----------------------------------------------------------------------

// The error of split key `key` of file f: at the key-value when the file has it, else where the
// key-values end (where it would have been, at the latest).
ModelEvent ModelLoader::split_key_fail(Status code, uint32_t f, uint32_t key) {
  FileSlot& s = files_[f];
  s.kind = ModelFileKind::Split;  // a file failing a split rule is named as a split
  const bool has = s.split_type[key] != FileSlot::kNoKey;
  fail(code, has ? s.split_offset[key] : s.reader->gguf_tensor_infos_offset(), f);
  return fail(error_.code, error_.offset, error_file_);
}

// Called at every GGUF file's HeaderReady while the model may be a split one (the entry; each
// split). False: the entry is one whole model (header_ready goes on as for any file).
bool ModelLoader::split_header(uint32_t f, ModelEvent* out) {
  const FileSlot& s = files_[f];
  // A split key of another type than llama.cpp reads it as is an error there (GGUFMeta's type
  // check, gguf_get_val_u16's assertion) — split.count in any GGUF file it opens, split.no and
  // split.tensors.count in a split model's files. Checked first, so no value is read through
  // the wrong type.
  const int64_t n = s.split_type[kSplitCount] == FileSlot::kNoKey ? 0 : s.split_value[kSplitCount];
  const bool split = split_count_ || (s.split_type[kSplitCount] == uint8_t(GgufType::U16) && n > 1);
  for (uint32_t k = 0; k < 3; ++k) {
    if (s.split_type[k] == FileSlot::kNoKey || s.split_type[k] == uint8_t(kSplitKeyType[k])) continue;
    if (k != kSplitCount && !split) continue;
    *out = split_key_fail(Status::GgufSplitKeyType, f, k);
    error_.set_found(s.split_type[k]);
    error_.set_expected(uint8_t(kSplitKeyType[k]));
    return true;
  }
  if (split_count_) {
    *out = split_later(f);
    return true;
  }
  if (!split) {
    // One whole model (llama.cpp: n_split > 1 makes a split model) — unless a list of splits
    // was given: then it is as long as split.count says.
    if (entry_ != ModelEntry::GgufSplits || file_count_ <= 1) return false;
    *out = split_key_fail(Status::GgufSplitCountMismatch, f, kSplitCount);
    error_.set_found(file_count_);
    if (s.split_type[kSplitCount] != FileSlot::kNoKey) error_.set_expected(uint64_t(n));
    return true;
  }
  *out = split_entry(f);
  return true;
}

// The entry of a split model (or the first of a list): its position, the model's files.
ModelEvent ModelLoader::split_entry(uint32_t f) {
  const uint32_t count = uint32_t(files_[f].split_value[kSplitCount]);
  // A split of a split model from here on, whatever its checks say (hosts name it as one).
  files_[f].kind = ModelFileKind::Split;
  if (files_[f].split_type[kSplitNo] == FileSlot::kNoKey) return split_key_fail(Status::GgufSplitNoMissing, f, kSplitNo);
  const uint32_t no = uint32_t(files_[f].split_value[kSplitNo]);
  uint32_t pos = 0;
  size_t prefix = 0;
  // The caller's list, in name order: its first is the first split (llama.cpp's `splits`).
  if (entry_ != ModelEntry::GgufSplits && !gguf_split_parse(files_[f].name, files_[f].name_size, count, &prefix, &pos)) {
    // llama_split_prefix: the name must end in the suffix its keys give.
    fail(Status::GgufSplitNameMismatch, 0, f);
    char* d = split_detail_;
    if (no < count) {
      gguf_split_name("", 0, no, count, d, sizeof split_detail_);
    } else {
      gguf_split_name("", 0, 0, count, d, sizeof split_detail_);
      memcpy(d + 1, "NNNNN", 5);
    }
    error_detail_.data = d;
    error_detail_.size = kGgufSplitSuffixChars;
    return fail(error_.code, error_.offset, error_file_);
  }
  if (pos == 0 && no != 0) {
    split_key_fail(Status::GgufSplitFirstNotZero, f, kSplitNo);
    error_.set_found(no);
    error_.set_expected(0);
    return fail(error_.code, error_.offset, error_file_);
  }
  if (no != pos) {
    split_key_fail(Status::GgufSplitNoMismatch, f, kSplitNo);
    error_.set_found(no);
    error_.set_expected(pos);
    return fail(error_.code, error_.offset, error_file_);
  }
  if (entry_ == ModelEntry::GgufSplits && file_count_ != count) {  // llama.cpp checks it after split.no
    split_key_fail(Status::GgufSplitCountMismatch, f, kSplitCount);
    error_.set_found(file_count_);
    error_.set_expected(count);
    return fail(error_.code, error_.offset, error_file_);
  }
  split_count_ = count;
  files_[f].split_pos = pos;
  if (!keep_split_tail(f)) return fail(error_.code, error_.offset, error_file_);
  if (entry_ != ModelEntry::GgufSplits) {
    // The others, named from the entry's prefix, in split order after it (the first split is
    // read right after the entry when the entry is not the first).
    split_prefix_ = files_[f].name;
    split_prefix_size_ = uint32_t(prefix);
    const size_t name_cap = prefix + kGgufSplitSuffixChars + 1;
    const uint64_t files = uint64_t(file_count_) + count - 1;
    if (!reserve_files(uint32_t(files))) return fail_files(files, size_t(count) * (name_cap + kAlign), f);
    for (uint32_t i = 0; i < count; ++i) {
      if (i == pos) continue;
      char* name = static_cast<char*>(take_low(name_cap, 1));
      if (!name) return fail_arena(size_t(count - i) * (name_cap + kAlign), f);
      gguf_split_name(split_prefix_, prefix, i, count, name, name_cap);
      const uint32_t g = add_slot(ModelFileKind::Split, name, name_cap - 1, false);
      files_[g].split_pos = i;
    }
  }
  ++cur_;
  return again();
}

// A split after the entry, at its HeaderReady.
ModelEvent ModelLoader::split_later(uint32_t f) {
  const FileSlot& s = files_[f];
  const uint32_t pos = s.split_pos;
  if (s.split_type[kSplitNo] == FileSlot::kNoKey) return split_key_fail(Status::GgufSplitNoMissing, f, kSplitNo);
  const uint32_t no = uint32_t(s.split_value[kSplitNo]);
  if (no != pos) {
    split_key_fail(pos == 0 ? Status::GgufSplitFirstNotZero : Status::GgufSplitNoMismatch, f, kSplitNo);
    error_.set_found(no);
    error_.set_expected(pos);
    return fail(error_.code, error_.offset, error_file_);
  }
  if (s.split_type[kSplitCount] != FileSlot::kNoKey && uint64_t(s.split_value[kSplitCount]) != split_count_) {
    split_key_fail(Status::GgufSplitCountMismatch, f, kSplitCount);
    error_.set_found(uint64_t(s.split_value[kSplitCount]));
    error_.set_expected(split_count_);
    return fail(error_.code, error_.offset, error_file_);
  }
  if (!keep_split_tail(f)) return fail(error_.code, error_.offset, error_file_);
  ++cur_;
  return again();
}

// The split's header read ran into its data, and other files are read before that data: a
// seekable source reads those bytes again; a sequential one's are kept in the arena (they passed
// once; the host's buffer need not stay valid).
bool ModelLoader::keep_split_tail(uint32_t f) {
  FileSlot& s = files_[f];
  const uint8_t* rest = nullptr;
  const size_t n = s.reader->release_input(&rest);
  if (n == 0) return true;
  if (opt_.seekable) {
    s.pos -= n;
    return true;
  }
  uint8_t* p = static_cast<uint8_t*>(take_low(n, 1));
  if (!p) {
    fail_arena(n, f);
    return false;
  }
  memcpy(p, rest, n);
  s.tail = p;
  s.tail_size = uint32_t(n);
  return true;
}

// --- After the last header ---------------------------------------------------------------------

// Tables in split order; the first split's split.tensors.count is there.
bool ModelLoader::split_finish(ModelEvent* out) {
  table_count_ = 0;
  for (uint32_t f = 0; f < file_count_; ++f) {
    if (files_[f].kind != ModelFileKind::Split) continue;
    files_[f].table = files_[f].split_pos;
    table_files_[files_[f].split_pos] = f;
    ++table_count_;
  }
  const uint32_t first = table_files_[0];
  if (files_[first].split_type[kSplitTensors] == FileSlot::kNoKey) {
    *out = split_key_fail(Status::GgufSplitTensorCountMissing, first, kSplitTensors);
    return false;
  }
  return true;
}

// Over the model's weights (one per tensor of every split, gguf_weights()): no name twice (the
// later split named, with its tensor), then the total against split.tensors.count. The name hash
// lives in the free middle only while it is used.
bool ModelLoader::split_weights_check(ModelEvent* out) {
  uint32_t half = 1;
  while (half < 2 * uint64_t(gguf_count_) && half < 0x40000000u) half <<= 1;
  uint32_t* slots = reinterpret_cast<uint32_t*>((reinterpret_cast<uintptr_t>(lo_) + 7) & ~uintptr_t(7));
  if (lo_ > hi_ || uint64_t(half) * 4 + 8 > uint64_t(hi_ - lo_)) {
    *out = fail_arena(size_t(half) * 4 + 8, kNoFile);
    return false;
  }
  memset(slots, 0, size_t(half) * 4);
  for (uint32_t w = 0; w < gguf_count_; ++w) {
    const StrView& name = gguf_weights_[w].name;
    uint32_t at = name_hash(name) & (half - 1);
    for (; slots[at] != 0; at = (at + 1) & (half - 1)) {
      if (!gguf_weights_[slots[at] - 1].name.equals(name.data, name.size)) continue;
      const TensorRef r = gguf_weights_[w].piece[uint32_t(PieceRole::Packed)];
      fail(Status::GgufSplitDuplicateTensor, tensor(r).entry_offset, table_files_[r.table]);
      error_.tensor = r.index;
      error_.tensor_name = name.data;
      error_.tensor_name_size = name.size;
      *out = fail(error_.code, error_.offset, error_file_);
      return false;
    }
    slots[at] = w + 1;
  }
  // The first split's total is the model's (llama.cpp reads only it); a later split that states
  // another one belongs to another split set.
  const int64_t want = files_[table_files_[0]].split_value[kSplitTensors];
  if (int64_t(gguf_count_) != want) {
    *out = split_key_fail(Status::GgufSplitTensorCountMismatch, table_files_[0], kSplitTensors);
    error_.set_found(gguf_count_);
    error_.set_expected(uint64_t(want));
    return false;
  }
  for (uint32_t t = 1; t < table_count_; ++t) {
    const FileSlot& s = files_[table_files_[t]];
    if (s.split_type[kSplitTensors] == FileSlot::kNoKey || s.split_value[kSplitTensors] == want) continue;
    *out = split_key_fail(Status::GgufSplitTensorCountMismatch, table_files_[t], kSplitTensors);
    error_.set_found(uint64_t(s.split_value[kSplitTensors]));
    error_.set_expected(uint64_t(want));
    return false;
  }
  return true;
}

// --- Accessors ---------------------------------------------------------------------------------

uint32_t ModelLoader::file_split(uint32_t f) const {
  return f < file_count_ && files_[f].kind == ModelFileKind::Split ? files_[f].split_pos : kNoFile;
}
uint32_t ModelLoader::split_foreign_kvs(uint32_t f) const {
  return f < file_count_ && files_[f].kind == ModelFileKind::Split && files_[f].split_pos > 0 ? files_[f].foreign_kvs : 0;
}
uint64_t ModelLoader::split_foreign_offset(uint32_t f) const {
  return split_foreign_kvs(f) ? files_[f].foreign_offset : 0;
}

}  // namespace ws
