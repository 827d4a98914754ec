// Logical weights over validated tensor tables: the tables, the name hash every convention's build
// looks companions up in (mlx_convention.cpp, ollama_convention.cpp, uqff_layers.cpp), plain
// weights, owner() by the descriptors' companion names, and the checks of an MLX-layout packed
// weight (U32 words with scales, and biases for affine) that MLX, Ollama and UQFF share.
#include "weightstream/conventions.h"

#include <string.h>

#include <new>

#include "convention_descriptor.h"
#include "name_match.h"
#include "weightstream/detail/bytes.h"

namespace ws {

using namespace conv;

namespace {

// The name hash over a name given in two parts (a + b), so companions are hashed without building
// their names: eight bytes per multiply, where FNV-1a's one per byte made hashing a DeepSeek-V3
// table's 92k names (≈ 50 bytes each) a quarter of a plain model's header time under wasm. The
// words are the bytes' positions in a + b (little-endian by construction, whatever the CPU), so
// every split of the same bytes gives the same value; the length goes into the last word (a name
// and the same name with NULs after it differ); murmur3's fmix64 at the end, as the tables use the
// low bits.
class NameHash {
 public:
  void add(const char* p, size_t n) {
    len_ += n;
    for (; n > 0 && have_ > 0; --n) put(uint8_t(*p++));
    for (; n >= 8; p += 8, n -= 8) {
      mix(detail::load_u64(reinterpret_cast<const uint8_t*>(p)));  // little-endian (as put)
    }
    if (have_ == 0 && n > 0) {  // the usual tail: one word from overlapping loads, no byte loop
      word_ = detail::load_tail(p, n);
      have_ = unsigned(n);
      return;
    }
    for (; n > 0; --n) put(uint8_t(*p++));
  }
  uint32_t finish() {
    mix(word_ ^ (len_ << 56));
    uint64_t h = h_;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return uint32_t(h);
  }

 private:
  void put(uint8_t c) {
    word_ |= uint64_t(c) << (8 * have_);
    if (++have_ == 8) {
      mix(word_);
      word_ = 0;
      have_ = 0;
    }
  }
  void mix(uint64_t w) {
    h_ = (h_ ^ w) * 0x9e3779b97f4a7c15ull;
    h_ ^= h_ >> 29;
  }
  uint64_t h_ = 0x243f6a8885a308d3ull, word_ = 0, len_ = 0;
  unsigned have_ = 0;
};

uint32_t hash_concat(const char* a, size_t an, const char* b, size_t bn) {
  NameHash h;
  h.add(a, an);
  h.add(b, bn);
  return h.finish();
}

}  // namespace

const char* piece_role_name(PieceRole r) {
  switch (r) {
    case PieceRole::Packed: return "packed";
    case PieceRole::Scales: return "scales";
    case PieceRole::Biases: return "biases";
    case PieceRole::GlobalScale: return "global_scale";
    case PieceRole::Format: return "format";
    case PieceRole::GgmlType: return "ggml_type";
    case PieceRole::Shape: return "shape";
    case PieceRole::Bits: return "bits";
    case PieceRole::GroupSize: return "group_size";
    case PieceRole::NumBlocks: return "num_blocks";
  }
  return "?";
}

LogicalModel::LogicalModel(LogicalWeight* storage, uint32_t capacity)
    : weights_(storage), capacity_(capacity) {}

void LogicalModel::set_table_storage(LogicalTable* storage, uint32_t n) {
  if (storage == nullptr || table_count_ > 0 || n < kInlineTables) return;  // the inline ones are as many
  for (uint32_t t = 0; t < n; ++t) storage[t] = LogicalTable();
  tables_ = storage;
  table_cap_ = n;
}

// The table of tensor number `id` (model-wide: LogicalTable::first + index): the last table whose
// first tensor is at or before it (empty tables share their successor's first; the last of equal
// ones is the one that holds it). Binary search: a lookup costs log2(tables) steps.
TensorRef LogicalModel::ref_of(uint32_t id) const {
  uint32_t lo = 0, hi = table_count_;  // the answer is in [lo, hi)
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (tables_[mid].first <= id)
      lo = mid;
    else
      hi = mid;
  }
  return TensorRef{lo, id - tables_[lo].first};
}

void LogicalModel::set_index_slots(uint32_t* slots, uint32_t n) {
  if (slots == nullptr || n < kInlineSlots) return;  // the inline table is at least as large
  slots_ = slots;
  slot_count_ = n;
}

void LogicalModel::set_name_storage(char* storage, size_t n) {
  names_ = storage;
  names_cap_ = storage ? n : 0;
  names_used_ = 0;
}

// One table's share: for each descriptor's rename (GPTQ and AWQ share one), the bytes its packed
// tensors' weight names take; the most of any, since a model follows one convention.
uint64_t LogicalModel::name_storage_for(const TensorTable& table) {
  uint32_t rows = 0;
  const ConventionDescriptor* const* row = convention_rows(&rows);
  uint64_t most = 0;
  for (uint32_t c = 0; c < rows; ++c) {
    const CompanionName* rn = row[c]->renamed;
    bool seen = rn == nullptr;
    for (uint32_t d = 0; d < c && !seen; ++d) seen = row[d]->renamed == rn;
    if (seen) continue;
    const size_t suffix = strlen(rn->weight_suffix);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < table.count(); ++i) {
      size_t base = 0;
      if (conv::ends_with(table.name(i), rn->text, &base)) bytes += base + suffix;
    }
    if (bytes > most) most = bytes;
  }
  return most;
}

Status LogicalModel::compose_name(TensorRef packed, size_t base, const char* suffix, StrView* out) {
  const StrView stored = tensor(packed).name;
  const size_t n = strlen(suffix);
  if (base > stored.size || names_cap_ - names_used_ < base + n) return fail(Status::ArenaExhausted, packed, stored);
  char* at = names_ + names_used_;
  memcpy(at, stored.data, base);
  memcpy(at + base, suffix, n);
  names_used_ += base + n;
  *out = StrView{at, base + n};
  return Status::Ok;
}

bool LogicalModel::is_companion(TensorRef r, const StrView& name, const char* const* suffixes, size_t n,
                                const char* weight_suffix) {
  size_t base = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!conv::ends_with(name, suffixes[k], &base)) continue;
    if (!find_concat(name.data, base, weight_suffix).present()) fail(Status::ConventionOrphanCompanion, r, name);
    return true;
  }
  return false;
}

uint32_t LogicalModel::index_slots_for(uint64_t tensors) {
  // Two halves (tensors, weights), each a power of two with at least twice as many slots as names.
  uint64_t half = 1;
  while (half < 2 * tensors) half <<= 1;
  return half * 2 > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(half * 2);
}

// UQFF's version tensors, which every shard set repeats (mistral.rs writes them first in each).
static bool is_uqff_version_name(const StrView& n) {
  return n.equals("uqff.version.major") || n.equals("uqff.version.minor") || n.equals("uqff.version.patch");
}

// Fills the tensor half of the hash from every table. Called by each build: tables are complete
// by then. Linear probing without deletion keeps equal names in insertion (table) order along a
// probe chain, so "first" and "last" lookups give what the linear scans gave. `reject_duplicates`
// (UQFF): a name in two tables is an error, except the version tensors (resolve_uqff() compares
// their copies).
uint64_t LogicalModel::number_tables() {
  uint64_t total = 0;
  for (uint32_t t = 0; t < table_count_; ++t) {
    tables_[t].first = uint32_t(total < 0xFFFFFFFFu ? total : 0);
    total += tables_[t].table->count();
  }
  return total;
}

Status LogicalModel::build_index(bool reject_duplicates, bool clear_weight_half) {
  index_pending_ = false;
  const uint64_t total = number_tables();
  half_ = 1;
  while (half_ <= slot_count_ / 2 && half_ < 2 * total) half_ <<= 1;
  indexed_ = half_ >= 2 * total && half_ <= slot_count_ / 2;
  if (!indexed_) {
    // Linear fallback: only UQFF needs the duplicate check (other conventions take the first).
    if (reject_duplicates) {
      for (uint32_t t = 1; t < table_count_; ++t)
        for (uint32_t i = 0; i < tables_[t].table->count(); ++i) {
          StrView n = tables_[t].table->get(i).name;
          if (is_uqff_version_name(n)) continue;
          for (uint32_t u = 0; u < t; ++u)
            if (tables_[u].table->find(n.data, n.size) != kNoTensor)
              return fail(Status::UqffDuplicateKey, TensorRef{t, i}, n);
        }
    }
    return Status::Ok;
  }
  memset(slots_, 0, (clear_weight_half ? 2 : 1) * size_t(half_) * sizeof(uint32_t));
  const uint32_t mask = half_ - 1;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      StrView n = tab.name(i);
      const bool check = reject_duplicates && !is_uqff_version_name(n);
      uint32_t at = hash_concat(n.data, n.size, "", 0) & mask;
      while (slots_[at] != 0) {
        if (check && tensor(ref_of(slots_[at] - 1)).name.equals(n.data, n.size))
          return fail(Status::UqffDuplicateKey, TensorRef{t, i}, n);
        at = (at + 1) & mask;
      }
      slots_[at] = tables_[t].first + i + 1;
    }
  }
  return Status::Ok;
}

// build_plain's hash, built at the first lookup: a plain model that is only streamed never needs
// it (owner() answers from the numbering), and its 92k names were a fifth of validating a
// DeepSeek-V3 header in the browser. Weight k is tensor k, so the weight half is the tensor half.
void LogicalModel::ensure_index() const {
  if (!index_pending_) return;
  LogicalModel* self = const_cast<LogicalModel*>(this);  // never a const object: the lazy half of build_plain
  self->build_index(false, false);
  if (indexed_) memcpy(slots_ + half_, slots_, half_ * sizeof(uint32_t));
}

void LogicalModel::index_weight(uint32_t w) {
  ensure_index();
  if (!indexed_) return;
  const uint32_t mask = half_ - 1;
  const StrView& n = weights_[w].name;
  uint32_t at = hash_concat(n.data, n.size, "", 0) & mask;
  while (slots_[half_ + at] != 0) at = (at + 1) & mask;
  slots_[half_ + at] = w + 1;
}

TensorRef LogicalModel::find_concat(const char* a, size_t an, const char* b, uint32_t table,
                                    bool last) const {
  ensure_index();
  const size_t bn = strlen(b);
  TensorRef found;
  if (!indexed_) {
    for (uint32_t t = 0; t < table_count_; ++t) {
      if (table != kNoTensor && t != table) continue;
      const TensorTable& tab = *tables_[t].table;
      for (uint32_t i = 0; i < tab.count(); ++i) {
        if (!equals_concat(tab.get(i).name, a, an, b)) continue;
        found = TensorRef{t, i};
        if (!last) return found;
      }
    }
    return found;
  }
  const uint32_t mask = half_ - 1;
  for (uint32_t at = hash_concat(a, an, b, bn) & mask; slots_[at] != 0; at = (at + 1) & mask) {
    const TensorRef r = ref_of(slots_[at] - 1);
    if (table != kNoTensor && r.table != table) continue;
    if (!equals_concat(tensor(r).name, a, an, b)) continue;
    found = r;
    if (!last) return found;
  }
  return found;
}

Status LogicalModel::add_table(const TensorTable* table, uint64_t data_start) {
  if (table_count_ >= table_cap_) return fail(Status::UsageError, TensorRef(), StrView());
  tables_[table_count_] = LogicalTable();
  tables_[table_count_].table = table;
  tables_[table_count_].data_start = data_start;
  ++table_count_;
  return Status::Ok;
}

Status LogicalModel::fail(Status s, TensorRef at, const StrView& name) {
  if (error_.code != Status::Ok) return error_.code;
  error_.code = s;
  if (at.present()) {
    TensorInfo t = tensor(at);
    error_.offset = t.entry_offset;
    error_.tensor = at.index;
    error_table_ = at.table;
  }
  error_.tensor_name = name.data;
  error_.tensor_name_size = name.size;
  return s;
}

TensorRef LogicalModel::find_tensor(const char* name, size_t n) const {
  return find_concat(name, n, "");
}

uint32_t LogicalModel::find(const char* name, size_t n) const {
  ensure_index();
  if (!indexed_) {
    for (uint32_t i = 0; i < count_; ++i)
      if (weights_[i].name.equals(name, n)) return i;
    return kNoTensor;
  }
  const uint32_t mask = half_ - 1;
  for (uint32_t at = hash_concat(name, n, "", 0) & mask; slots_[half_ + at] != 0; at = (at + 1) & mask) {
    const uint32_t w = slots_[half_ + at] - 1;
    if (weights_[w].name.equals(name, n)) return w;
  }
  return kNoTensor;
}

uint32_t LogicalModel::find_weight_concat(const char* a, size_t an, const char* b) const {
  ensure_index();
  const size_t bn = strlen(b);
  if (!indexed_) {
    for (uint32_t i = 0; i < count_; ++i)
      if (equals_concat(weights_[i].name, a, an, b)) return i;
    return kNoTensor;
  }
  const uint32_t mask = half_ - 1;
  for (uint32_t at = hash_concat(a, an, b, bn) & mask; slots_[half_ + at] != 0; at = (at + 1) & mask) {
    const uint32_t w = slots_[half_ + at] - 1;
    if (equals_concat(weights_[w].name, a, an, b)) return w;
  }
  return kNoTensor;
}

uint32_t LogicalModel::owner(TensorRef r, PieceRole* role) const {
  if (single_pieces_) {  // build_plain: weight k is tensor k, numbered across the tables
    *role = PieceRole::Packed;
    return tables_[r.table].first + r.index;
  }
  const StrView name = tensor(r).name;
  auto check = [&](uint32_t w) {
    if (w == kNoTensor) return false;
    for (uint32_t k = 0; k < kPieceRoles; ++k) {
      if (weights_[w].piece[k].table == r.table && weights_[w].piece[k].index == r.index) {
        *role = PieceRole(k);
        return true;
      }
    }
    return false;
  };
  // One lookup, not two: plan_model() asks the owner of every tensor (92k for a DeepSeek-V3 header).
  const uint32_t by_name = find(name.data, name.size);
  if (check(by_name)) return by_name;
  // A companion's weight, by the name rules of every convention's descriptor (MLX `<p>.scales` ->
  // `<p>.weight`, Ollama `{n}.scale` -> `{n}`, UQFF `<key>.weight.<x>` -> `<key>.weight`, ...).
  uint32_t rows = 0;
  const ConventionDescriptor* const* table = convention_rows(&rows);
  for (uint32_t c = 0; c < rows; ++c) {
    for (uint32_t k = 0; k < table[c]->companion_count; ++k) {
      const CompanionName& cn = table[c]->companions[k];
      size_t base = 0;
      if (!cn.infix) {
        if (!ends_with(name, cn.text, &base)) continue;
        const uint32_t w = find_weight_concat(name.data, base, cn.weight_suffix);
        if (check(w)) return w;
        continue;
      }
      const size_t tn = strlen(cn.text);
      for (size_t p = 0; p + tn <= name.size; ++p) {
        if (memcmp(name.data + p, cn.text, tn) != 0) continue;
        const uint32_t w = find_weight_concat(name.data, p, cn.weight_suffix);
        if (check(w)) return w;
      }
    }
  }
  return kNoTensor;
}

Status LogicalModel::add_weight(const LogicalWeight& w, bool index) {
  if (count_ >= capacity_) return fail(Status::ConventionTooManyWeights, w.ref(PieceRole::Packed), w.name);
  single_pieces_ = false;
  weights_[count_] = w;
  if (index) index_weight(count_);
  ++count_;
  return Status::Ok;
}

Status LogicalModel::plain_weight(TensorRef r, LogicalWeight* w) const {
  TensorInfo t = tensor(r);
  ::new (static_cast<void*>(w)) LogicalWeight();  // in place: assigning a temporary is a second pass
  w->name = t.name;
  w->piece[uint32_t(PieceRole::Packed)] = r;
  w->decodable = quant_format_from_dtype(t.dtype(), &w->format);
  w->rank = t.copy_shape(w->shape, kMaxLogicalRank);
  if (w->rank <= kMaxLogicalRank) {  // the product of the dims just copied: no second decode
    uint64_t n = 1;
    for (uint32_t d = 0; d < w->rank; ++d) n *= w->shape[d];
    w->elements = n;
  } else {
    w->elements = t.element_count();
  }
  return Status::Ok;
}

// Checks a quantized weight's companions against its params and fills the logical shape.
Status LogicalModel::finish_quantized(LogicalWeight* w) {
  TensorRef pr = w->ref(PieceRole::Packed), sr = w->ref(PieceRole::Scales), br = w->ref(PieceRole::Biases);
  TensorInfo p = tensor(pr), s = tensor(sr);
  const bool affine = w->params.mode == QuantMode::Affine;
  // The params first: MLX rejects them when it builds the layer (to_quantized), before it looks
  // at any tensor.
  if (!quant_params_allowed(w->params)) {
    fail(Status::ConventionBitsNotAllowed, pr, w->name);
    error_.set_found(w->params.bits);
    return error_.code;
  }
  if (affine && !br.present()) return fail(Status::ConventionMissingCompanion, pr, w->name);
  if (!affine && br.present()) return fail(Status::ConventionCompanionShape, br, w->name);
  if (p.dtype() != DType::U32 || p.rank == 0 || p.rank > kMaxLogicalRank)
    return fail(Status::ConventionCompanionShape, pr, w->name);
  // Scales: float for affine (biases the same dtype and shape), U8 (E8M0 / E4M3) otherwise.
  if (affine ? !is_float_scale(s.dtype()) : s.dtype() != DType::U8)
    return fail(Status::ConventionCompanionShape, sr, w->name);
  uint64_t pshape[kMaxLogicalRank], sshape[kMaxLogicalRank];
  p.copy_shape(pshape, kMaxLogicalRank);
  if (s.rank != p.rank) return fail(Status::ConventionCompanionShape, sr, w->name);
  s.copy_shape(sshape, kMaxLogicalRank);
  const uint32_t last = p.rank - 1;
  for (uint32_t d = 0; d < last; ++d)
    if (sshape[d] != pshape[d]) return fail(Status::ConventionCompanionShape, sr, w->name);
  // Rows of no words have no group to check the params against, and no MLX writer makes them
  // (mx.quantize reshapes each row into groups, which an empty row cannot be). Issue #16: the
  // element count below divided by this dimension.
  if (pshape[last] == 0) {
    fail(Status::ConventionCompanionShape, pr, w->name);
    error_.set_found(0);
    return error_.code;
  }
  // K values per row: the row's words hold K*bits bits.
  uint64_t row_bits = 0;
  if (__builtin_mul_overflow(pshape[last], uint64_t(32), &row_bits)) return fail(Status::ShapeOverflow, pr, w->name);
  if (row_bits % w->params.bits != 0) return fail(Status::ConventionCompanionShape, pr, w->name);
  const uint64_t k = row_bits / w->params.bits;
  if (k % w->params.group != 0) return fail(Status::ConventionGroupNotDividing, pr, w->name);
  if (sshape[last] != k / w->params.group) return fail(Status::ConventionCompanionShape, sr, w->name);
  if (br.present()) {
    TensorInfo b = tensor(br);
    uint64_t bshape[kMaxLogicalRank];
    if (b.dtype() != s.dtype() || b.rank != s.rank) return fail(Status::ConventionCompanionShape, br, w->name);
    b.copy_shape(bshape, kMaxLogicalRank);
    for (uint32_t d = 0; d < b.rank; ++d)
      if (bshape[d] != sshape[d]) return fail(Status::ConventionCompanionShape, br, w->name);
  }
  TensorRef gr = w->ref(PieceRole::GlobalScale);
  if (gr.present()) {
    TensorInfo g = tensor(gr);
    if (w->params.mode != QuantMode::Nvfp4 || g.dtype() != DType::F32 || g.element_count() != 1)
      return fail(Status::ConventionCompanionShape, gr, w->name);
  }
  w->scale_dtype = s.dtype();
  w->format = format_of(w->params.mode);
  w->decodable = true;
  w->rank = p.rank;
  for (uint32_t d = 0; d < p.rank; ++d) w->shape[d] = pshape[d];
  w->shape[last] = k;
  // rows * K: K values in the words of each row (pshape[last] > 0 here).
  if (__builtin_mul_overflow(p.element_count() / pshape[last], k, &w->elements))
    return fail(Status::ShapeOverflow, pr, w->name);
  return Status::Ok;
}

Status LogicalModel::build_plain() {
  // Weight k is tensor k (the tables in order) under the same name, so its slot in the weight half
  // of the hash is its tensor's in the tensor half: on a fresh model both halves are built at the
  // first lookup (ensure_index), the weight half copied, not hashed again.
  const bool fresh = count_ == 0;
  if (fresh) {
    number_tables();
    indexed_ = false;
  } else if (build_index(false) != Status::Ok) {
    return error_.code;
  }
  for (uint32_t t = 0; t < table_count_; ++t) {
    for (uint32_t i = 0; i < tables_[t].table->count(); ++i) {
      // Built in place: a weight is 200 bytes, and a copy of each was 7 % of validating DeepSeek-V3
      // in the browser.
      const TensorRef r{t, i};
      // A failure leaves a fresh model unindexed: lookups scan the weights there are.
      if (count_ >= capacity_) return fail(Status::ConventionTooManyWeights, r, tensor(r).name);
      plain_weight(r, &weights_[count_]);
      if (!fresh) index_weight(count_);
      ++count_;
    }
  }
  single_pieces_ = index_pending_ = fresh;
  return Status::Ok;
}

}  // namespace ws
