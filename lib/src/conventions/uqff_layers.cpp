// UQFF layers (FORMATS.md §4): version tensors, `<key>.weight.format` layers with their exact
// companion sets, the scalar companions fed from the stream, and the resolution of each layer into
// a logical weight decoded by the existing kernels (GGUF blocks, MLX affine, MXFP4, F8Q8, dense).
#include <string.h>

#include "weightstream/conventions.h"
#include "weightstream/ggml_types.h"
#include "weightstream/uqff.h"

namespace ws {

namespace {

const char* const kSuffix[kUqffSuffixCount] = {
    ".weight",        ".weight.format",          ".weight.dtype",          ".weight.shape",
    ".weight.scales", ".weight.zeros",           ".weight.bits",           ".weight.group_size",
    ".weight.axis",   ".weight.dequant_w_scale", ".weight.dequant_x_scale", ".weight.quant_scale",
    ".weight.biases", ".weight.num_blocks",      ".weight.optimization_steps", ".weight.round_zeros",
    ".weight.channel_wise",
};

constexpr uint32_t bit(UqffSuffix s) { return 1u << uint32_t(s); }
constexpr uint32_t kBase = bit(UqffSuffix::Weight) | bit(UqffSuffix::Format);

const char* const kVersionNames[3] = {"uqff.version.major", "uqff.version.minor", "uqff.version.patch"};

bool ends_with(const StrView& s, const char* suffix, size_t* base_len) {
  size_t n = strlen(suffix);
  if (s.size < n || memcmp(s.data + s.size - n, suffix, n) != 0) return false;
  *base_len = s.size - n;
  return true;
}

bool all_digits(const StrView& s) {
  if (s.size == 0) return false;
  for (size_t i = 0; i < s.size; ++i)
    if (s.data[i] < '0' || s.data[i] > '9') return false;
  return true;
}

// 0, 1, 2 for uqff.version.major / minor / patch; 3 for any other name.
uint32_t version_index(const StrView& name) {
  uint32_t v = 0;
  while (v < 3 && !name.equals(kVersionNames[v])) ++v;
  return v;
}

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// Where each scalar role's bytes live in LogicalWeight::uqff_scalar, and how many it may hold.
struct Slot {
  uint8_t at, cap;
};
Slot slot_of(PieceRole r) {
  switch (r) {
    case PieceRole::Format: return {0, 1};
    case PieceRole::Bits: return {1, 1};
    case PieceRole::GroupSize: return {2, 1};
    case PieceRole::GgmlType: return {4, 4};
    case PieceRole::NumBlocks: return {8, 8};
    case PieceRole::Shape: return {16, 16};  // U32 vector of rank <= kMaxLogicalRank
    default: return {0, 0};
  }
}

// The role a scalar suffix fills in a weight.
bool role_of(UqffSuffix s, PieceRole* r) {
  switch (s) {
    case UqffSuffix::Format: *r = PieceRole::Format; return true;
    case UqffSuffix::Dtype: *r = PieceRole::GgmlType; return true;
    case UqffSuffix::Shape: *r = PieceRole::Shape; return true;
    case UqffSuffix::Bits: *r = PieceRole::Bits; return true;
    case UqffSuffix::GroupSize: *r = PieceRole::GroupSize; return true;
    case UqffSuffix::NumBlocks: *r = PieceRole::NumBlocks; return true;
    default: return false;
  }
}

// The first error keeps its detail, as fail() keeps the first error.
void set_detail(StrView* d, const char* s, size_t n) {
  if (d->data != nullptr) return;
  d->data = s;
  d->size = n;
}

uint32_t popcount(uint32_t v) {
  uint32_t n = 0;
  for (; v; v &= v - 1) ++n;
  return n;
}

}  // namespace

const char* uqff_type_name(UqffType t) {
  switch (t) {
    case UqffType::Gguf: return "gguf";
    case UqffType::Unquant: return "unquant";
    case UqffType::Hqq: return "hqq";
    case UqffType::Fp8: return "fp8";
    case UqffType::Afq: return "afq";
    case UqffType::F8Q8: return "f8q8";
    case UqffType::Mxfp4: return "mxfp4";
  }
  return "?";
}

const char* uqff_suffix(UqffSuffix s) { return uint32_t(s) < kUqffSuffixCount ? kSuffix[uint32_t(s)] : ""; }

uint32_t uqff_suffix_set(UqffType t) {
  using S = UqffSuffix;
  switch (t) {
    case UqffType::Gguf: return kBase | bit(S::Dtype) | bit(S::Shape);
    case UqffType::Unquant: return kBase;
    case UqffType::Hqq:
      return kBase | bit(S::Scales) | bit(S::Zeros) | bit(S::Shape) | bit(S::Bits) | bit(S::GroupSize) |
             bit(S::Axis);
    case UqffType::Fp8:
      return kBase | bit(S::DequantWScale) | bit(S::DequantXScale) | bit(S::QuantScale) | bit(S::Dtype);
    case UqffType::Afq: return kBase | bit(S::Scales) | bit(S::Biases) | bit(S::Bits) | bit(S::GroupSize);
    case UqffType::F8Q8: return kBase | bit(S::NumBlocks) | bit(S::Shape);
    case UqffType::Mxfp4: return kBase | bit(S::Scales);
  }
  return 0;
}

uint32_t uqff_optional_suffixes(UqffType t) {
  using S = UqffSuffix;
  return t == UqffType::Hqq ? bit(S::OptimizationSteps) | bit(S::RoundZeros) | bit(S::ChannelWise) : 0;
}

Status LogicalModel::fail_data(Status s, TensorRef at, const StrView& name) {
  if (error_.code != Status::Ok) return error_.code;
  fail(s, at, name);
  if (at.present()) error_.offset = piece_begin(at);
  return s;
}

uint32_t LogicalModel::uqff_version(uint32_t i) const { return i < 3 ? le32(version_bytes_ + 4 * i) : 0; }

// One layer, from its `.weight.format` tensor: which tensors it has decides its type.
Status LogicalModel::uqff_layer(TensorRef format_ref, size_t key_len) {
  const StrView fname = tensor(format_ref).name;
  TensorRef refs[kUqffSuffixCount];
  uint32_t mask = 0;
  for (uint32_t s = 0; s < kUqffSuffixCount; ++s) {
    refs[s] = find_concat(fname.data, key_len, kSuffix[s]);
    if (refs[s].present()) mask |= 1u << s;
  }
  const TensorRef wref = refs[uint32_t(UqffSuffix::Weight)];
  const StrView lname = wref.present() ? tensor(wref).name : fname;  // the layer, as errors name it
  const TensorRef lref = wref.present() ? wref : format_ref;
  {
    TensorInfo f = tensor(format_ref);
    if (f.dtype() != DType::U8 || f.rank != 0) return fail(Status::UqffFormatNotScalar, format_ref, lname);
  }
  // The type whose set is exactly this one; else the nearest set (fewest differing suffixes, the
  // lower tag on a tie) says which suffix is unexpected or missing.
  uint32_t type = kUqffTypeCount, best = kUqffTypeCount, best_diff = 99;
  for (uint32_t t = 0; t < kUqffTypeCount; ++t) {
    const uint32_t set = uqff_suffix_set(UqffType(t)), opt = uqff_optional_suffixes(UqffType(t));
    if ((mask & ~opt) == set) type = t;
    const uint32_t diff = popcount((mask & ~opt) ^ set);
    if (diff < best_diff) best_diff = diff, best = t;
  }
  if (type == kUqffTypeCount) {
    const uint32_t set = uqff_suffix_set(UqffType(best));
    const uint32_t extra = mask & ~set & ~uqff_optional_suffixes(UqffType(best)), missing = set & ~mask;
    for (uint32_t s = 0; s < kUqffSuffixCount; ++s) {
      if (extra & (1u << s)) {
        set_detail(&detail_, kSuffix[s], strlen(kSuffix[s]));
        return fail(Status::UqffUnexpectedCompanion, refs[s], tensor(refs[s]).name);
      }
    }
    for (uint32_t s = 0; s < kUqffSuffixCount; ++s) {
      if (missing & (1u << s)) {
        set_detail(&detail_, kSuffix[s], strlen(kSuffix[s]));
        return fail(Status::UqffMissingCompanion, lref, lname);
      }
    }
  }
  if (type == uint32_t(UqffType::Hqq) || type == uint32_t(UqffType::Fp8)) {
    set_detail(&detail_, uqff_type_name(UqffType(type)), strlen(uqff_type_name(UqffType(type))));
    return fail(Status::UqffUnsupportedType, lref, lname);
  }
  LogicalWeight w;
  w.name = lname;
  w.convention = Convention::Uqff;
  w.uqff_type = uint8_t(type);
  w.piece[uint32_t(PieceRole::Packed)] = wref;
  w.piece[uint32_t(PieceRole::Format)] = format_ref;
  const TensorInfo packed = tensor(wref);
  for (uint32_t s = 0; s < kUqffSuffixCount; ++s) {
    if (!(mask & (1u << s))) continue;
    PieceRole role;
    if (UqffSuffix(s) == UqffSuffix::Scales) {
      w.piece[uint32_t(PieceRole::Scales)] = refs[s];
    } else if (UqffSuffix(s) == UqffSuffix::Biases) {
      w.piece[uint32_t(PieceRole::Biases)] = refs[s];
    } else if (role_of(UqffSuffix(s), &role) && role != PieceRole::Format) {
      // Scalars must fit their slots: exact dtypes, rank 0 (the shape: a short U32 vector).
      const TensorInfo c = tensor(refs[s]);
      bool ok = false;
      switch (role) {
        case PieceRole::GgmlType: ok = c.dtype() == DType::U32 && c.rank == 0; break;
        case PieceRole::Bits:
        case PieceRole::GroupSize: ok = c.dtype() == DType::U8 && c.rank == 0; break;
        case PieceRole::NumBlocks: ok = (c.dtype() == DType::U32 || c.dtype() == DType::U64) && c.rank == 0; break;
        case PieceRole::Shape:
          ok = c.dtype() == DType::U32 && c.rank == 1 && c.dim(0) >= 1 && c.dim(0) <= kMaxLogicalRank;
          break;
        default: break;
      }
      if (!ok) return fail(Status::ConventionCompanionShape, refs[s], lname);
      w.piece[uint32_t(role)] = refs[s];
    }
  }
  // Packed dtypes the header already decides.
  const UqffType t = UqffType(type);
  if ((t == UqffType::Gguf || t == UqffType::F8Q8 || t == UqffType::Mxfp4) && packed.dtype() != DType::U8)
    return fail(Status::ConventionCompanionShape, wref, lname);
  if (t == UqffType::Mxfp4 && tensor(w.ref(PieceRole::Scales)).dtype() != DType::U8)
    return fail(Status::ConventionCompanionShape, w.ref(PieceRole::Scales), lname);
  if (t == UqffType::Unquant) {
    // Dense: everything but the tag is known now; resolve only checks the tag.
    w.decodable = quant_format_from_dtype(packed.dtype(), &w.format);
    w.rank = packed.copy_shape(w.shape, kMaxLogicalRank);
    w.elements = packed.element_count();
  }
  return add_weight(w);
}

Status LogicalModel::build_uqff() {
  if (table_count_ == 0) return fail(Status::UsageError, TensorRef(), StrView());
  for (uint32_t t = 0; t < table_count_; ++t) {
    // Pre-1.0 files name their tensors 0, 1, 2, ... (opaque blobs).
    const TensorTable& tab = *tables_[t].table;
    bool numeric = tab.count() > 0;
    for (uint32_t i = 0; i < tab.count() && numeric; ++i) numeric = all_digits(tab.get(i).name);
    if (numeric) return fail(Status::UqffPreV1, TensorRef{t, 0}, tab.get(0).name);
  }
  if (build_index(true) != Status::Ok) return error_.code;
  // The version: in whichever files hold it (mistral.rs repeats it in every shard set), the first
  // copy in table order; every copy must be a U32 scalar (their values are compared once fed).
  for (uint32_t v = 0; v < 3; ++v) {
    version_ref_[v] = TensorRef();
    for (uint32_t t = 0; t < table_count_; ++t) {
      const TensorRef r = find_concat(kVersionNames[v], strlen(kVersionNames[v]), "", t);
      if (!r.present()) continue;
      const TensorInfo info = tensor(r);
      if (info.dtype() != DType::U32 || info.rank != 0) return fail(Status::UqffVersionNotScalar, r, info.name);
      if (!version_ref_[v].present()) version_ref_[v] = r;
    }
    if (!version_ref_[v].present()) {
      StrView n;
      n.data = kVersionNames[v];
      n.size = strlen(kVersionNames[v]);
      return fail(Status::UqffMissingVersion, TensorRef(), n);  // offset 0: it is nowhere
    }
  }
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      if (version_index(name) < 3) continue;
      size_t key = 0;
      if (ends_with(name, kSuffix[uint32_t(UqffSuffix::Format)], &key)) {
        if (uqff_layer(r, key) != Status::Ok) return error_.code;
        continue;
      }
      // A known suffix belongs to the layer of its key (built at the layer's tag); without a tag
      // `<key>.weight` is a plain tensor and the others are orphans.
      bool handled = false;
      for (uint32_t s = 0; s < kUqffSuffixCount && !handled; ++s) {
        if (UqffSuffix(s) == UqffSuffix::Format || !ends_with(name, kSuffix[s], &key)) continue;
        if (find_concat(name.data, key, kSuffix[uint32_t(UqffSuffix::Format)]).present()) {
          handled = true;
        } else if (UqffSuffix(s) != UqffSuffix::Weight) {
          return fail(Status::ConventionOrphanCompanion, r, name);
        }
      }
      if (handled) continue;
      // `<key>.weight.<anything else>` beside a layer's tag: not part of any type's set.
      for (size_t p = 0; p + 8 <= name.size; ++p) {
        if (memcmp(name.data + p, ".weight.", 8) != 0) continue;
        if (find_concat(name.data, p, kSuffix[uint32_t(UqffSuffix::Format)]).present()) {
          set_detail(&detail_, name.data + p, name.size - p);
          return fail(Status::UqffUnexpectedCompanion, r, name);
        }
      }
      LogicalWeight w;
      plain_weight(r, &w);
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  return Status::Ok;
}

// The scalar slot tensor (table, tensor) fills, if it is one.
bool LogicalModel::uqff_scalar_slot(uint32_t table, uint32_t tensor_index, uint8_t** dst, uint8_t** got,
                                    uint64_t* begin) {
  if (table >= table_count_ || tensor_index >= tables_[table].table->count()) return false;
  const TensorRef r{table, tensor_index};
  const StrView name = tables_[table].table->get(tensor_index).name;
  const uint32_t v = version_index(name);
  if (v < 3) {  // any file's copy; its slot holds 4 bytes, so only a U32 scalar has one
    const TensorInfo info = tensor(r);
    if (info.dtype() != DType::U32 || info.rank != 0) return false;
    *dst = tables_[table].version_copy + 4 * v;
    *got = tables_[table].version_got + v;
    *begin = piece_begin(r);
    return true;
  }
  for (uint32_t s = 0; s < kUqffSuffixCount; ++s) {
    PieceRole role;
    size_t key = 0;
    if (!role_of(UqffSuffix(s), &role) || !ends_with(name, kSuffix[s], &key)) continue;
    // The layer's weight is named `<key>.weight`: a prefix of this tensor's name.
    const uint32_t wi = find(name.data, key + 7);
    if (wi == kNoTensor) return false;
    LogicalWeight& w = weights_[wi];
    const TensorRef& pr = w.piece[uint32_t(role)];
    if (w.convention != Convention::Uqff || pr.table != table || pr.index != tensor_index) return false;
    *dst = w.uqff_scalar + slot_of(role).at;
    *got = w.uqff_got + (uint32_t(role) - kFirstScalarRole);
    *begin = piece_begin(r);
    return true;
  }
  return false;
}

bool LogicalModel::uqff_wants(uint32_t table, uint32_t tensor_index) const {
  uint8_t *d, *g;
  uint64_t b;
  return const_cast<LogicalModel*>(this)->uqff_scalar_slot(table, tensor_index, &d, &g, &b);
}

Status LogicalModel::feed_uqff(uint32_t table, uint32_t tensor_index, uint64_t offset, const uint8_t* data,
                               size_t size) {
  uint8_t *dst, *got;
  uint64_t begin;
  if (!uqff_scalar_slot(table, tensor_index, &dst, &got, &begin)) return Status::Ok;
  const uint64_t end = piece_end(TensorRef{table, tensor_index});  // <= 16 bytes past begin
  if (offset < begin || offset > end || size > end - offset) return fail(Status::UsageError, TensorRef(), StrView());
  if (size > 0) memcpy(dst + (offset - begin), data, size);
  *got = uint8_t(*got + size);
  return Status::Ok;
}

Status LogicalModel::resolve_uqff() {
  if (error_.code != Status::Ok) return error_.code;
  for (uint32_t v = 0; v < 3; ++v) {
    const TensorRef first = version_ref_[v];
    if (!first.present()) return fail(Status::UsageError, TensorRef(), StrView());
    // Every copy fed; each later one equal to the first (in table order), else an error at the
    // copy's data with both values.
    for (uint32_t t = first.table; t < table_count_; ++t) {
      const TensorRef r = find_concat(kVersionNames[v], strlen(kVersionNames[v]), "", t);
      if (!r.present()) continue;
      if (tables_[t].version_got[v] != 4) return fail(Status::UqffScalarNotFed, r, tensor(r).name);
      const uint32_t value = le32(tables_[t].version_copy + 4 * v), want = le32(tables_[first.table].version_copy + 4 * v);
      if (value != want) {
        fail_data(Status::UqffVersionMismatch, r, tensor(r).name);
        error_.set_found(value);
        error_.set_expected(want);
        return error_.code;
      }
    }
    memcpy(version_bytes_ + 4 * v, tables_[first.table].version_copy + 4 * v, 4);
  }
  const uint32_t major = uqff_version(0), minor = uqff_version(1);
  if (major != kUqffMajor) {
    fail_data(Status::UqffMajorVersion, version_ref_[0], tensor(version_ref_[0]).name);
    error_.set_found(major);
    error_.set_expected(kUqffMajor);
    return error_.code;
  }
  if (minor > kUqffMaxMinor) {
    fail_data(Status::UqffMinorVersionTooNew, version_ref_[1], tensor(version_ref_[1]).name);
    error_.set_found(minor);
    error_.set_expected(kUqffMaxMinor);
    return error_.code;
  }
  for (uint32_t i = 0; i < count_; ++i)
    if (weights_[i].convention == Convention::Uqff && uqff_resolve_layer(&weights_[i]) != Status::Ok)
      return error_.code;
  return Status::Ok;
}

// Product of a `.weight.shape` vector into the logical shape; false on overflow or a zero rank.
static bool read_shape(const LogicalWeight& w, uint32_t rank, uint64_t* shape, uint64_t* elements) {
  uint64_t n = 1;
  bool zero = false;
  for (uint32_t d = 0; d < rank; ++d) {
    shape[d] = le32(w.uqff_scalar + 16 + 4 * d);
    if (shape[d] == 0) zero = true;
    else if (n > ~uint64_t(0) / shape[d]) return false;
    else n *= shape[d];
  }
  *elements = zero ? 0 : n;
  return true;
}

Status LogicalModel::uqff_resolve_layer(LogicalWeight* w) {
  for (uint32_t r = kFirstScalarRole; r < kPieceRoles; ++r) {
    const TensorRef& pr = w->piece[r];
    if (pr.present() && w->uqff_got[r - kFirstScalarRole] != tensor(pr).byte_size())
      return fail(Status::UqffScalarNotFed, pr, tensor(pr).name);
  }
  const TensorRef fr = w->ref(PieceRole::Format), pr = w->ref(PieceRole::Packed);
  const uint8_t tag = w->uqff_scalar[0];
  if (tag >= kUqffTypeCount) {
    fail_data(Status::UqffUnknownFormatTag, fr, w->name);
    error_.set_found(tag);
    return error_.code;
  }
  if (tag != w->uqff_type) {
    fail_data(Status::UqffFormatTagMismatch, fr, w->name);
    error_.set_found(tag);
    error_.set_expected(w->uqff_type);
    return error_.code;
  }
  const TensorInfo packed = tensor(pr);
  switch (UqffType(tag)) {
    case UqffType::Unquant: return Status::Ok;  // decided from the header
    case UqffType::Gguf: {
      const TensorRef tr = w->ref(PieceRole::GgmlType), sr = w->ref(PieceRole::Shape);
      const uint32_t id = le32(w->uqff_scalar + 4);
      const GgmlTypeInfo info = ggml_type_info(id, GgmlDialect::Upstream);
      if (info.kind == GgmlTypeKind::Unknown || info.kind == GgmlTypeKind::Retired) {
        fail_data(info.kind == GgmlTypeKind::Unknown ? Status::GgufInvalidType : Status::GgufRetiredType, tr, w->name);
        error_.set_found(id);
        return error_.code;
      }
      if (!quant_format_from_ggml(id, GgmlDialect::Upstream, &w->format)) {
        fail_data(Status::UnsupportedFormat, tr, w->name);
        error_.set_found(id);
        return error_.code;
      }
      // `.weight.shape` is row-major (the candle tensor's dims): the last is the contiguous one
      // GGML blocks run along.
      w->rank = uint32_t(tensor(sr).dim(0));
      if (!read_shape(*w, w->rank, w->shape, &w->elements)) return fail_data(Status::ShapeOverflow, sr, w->name);
      if (w->shape[w->rank - 1] % info.block_elems != 0) return fail_data(Status::GgufBlockMisaligned, sr, w->name);
      uint64_t bytes = 0;
      if (!ggml_tensor_bytes(info, w->elements, &bytes)) return fail_data(Status::ShapeOverflow, sr, w->name);
      if (bytes != packed.byte_size()) {
        fail(Status::ConventionCompanionShape, pr, w->name);
        error_.set_found(packed.byte_size());
        error_.set_expected(bytes);
        return error_.code;
      }
      w->decodable = true;
      return Status::Ok;
    }
    case UqffType::Afq: {
      w->params = QuantParams{QuantMode::Affine, w->uqff_scalar[1], w->uqff_scalar[2]};
      // UQFF allows fewer widths than MLX: no 5-bit (FORMATS.md §4).
      const uint32_t bits = w->params.bits, group = w->params.group;
      if (bits != 2 && bits != 3 && bits != 4 && bits != 6 && bits != 8) {
        fail_data(Status::ConventionBitsNotAllowed, w->ref(PieceRole::Bits), w->name);
        error_.set_found(bits);
        return error_.code;
      }
      if (group != 32 && group != 64 && group != 128) {
        fail_data(Status::ConventionBitsNotAllowed, w->ref(PieceRole::GroupSize), w->name);
        error_.set_found(group);
        return error_.code;
      }
      return finish_quantized(w);
    }
    case UqffType::F8Q8: {
      const TensorRef nr = w->ref(PieceRole::NumBlocks), sr = w->ref(PieceRole::Shape);
      uint64_t blocks = le32(w->uqff_scalar + 8);
      if (tensor(nr).dtype() == DType::U64) blocks |= uint64_t(le32(w->uqff_scalar + 12)) << 32;
      w->rank = uint32_t(tensor(sr).dim(0));
      if (!read_shape(*w, w->rank, w->shape, &w->elements)) return fail_data(Status::ShapeOverflow, sr, w->name);
      // mistral.rs pads the flattened weight to whole 32-value blocks (f8q8 from_weight): the
      // last block's tail is dropped when decoding. Fewer blocks cannot hold the values; more
      // are not what the writer makes.
      const uint64_t need = w->elements / 32 + (w->elements % 32 != 0);
      if (blocks != need) {
        fail_data(Status::UqffNumBlocksMismatch, nr, w->name);
        error_.set_found(blocks);
        error_.set_expected(need);
        return error_.code;
      }
      if (blocks > ~uint64_t(0) / 33) return fail_data(Status::ShapeOverflow, sr, w->name);
      if (packed.byte_size() != blocks * 33) {
        fail(Status::ConventionCompanionShape, pr, w->name);
        error_.set_found(packed.byte_size());
        error_.set_expected(blocks * 33);
        return error_.code;
      }
      w->format = QuantFormat::F8Q8;
      w->decodable = true;
      return Status::Ok;
    }
    case UqffType::Mxfp4: {
      // `.weight` U8 [N.., K/2] (two E2M1 values per byte, low nibble first), `.weight.scales` U8
      // E8M0 [N.., K/32]: MLX's mxfp4 bytes, so the MLX mxfp4 kernel decodes them.
      const TensorRef sr = w->ref(PieceRole::Scales);
      const TensorInfo s = tensor(sr);
      if (packed.rank == 0 || packed.rank > kMaxLogicalRank || s.rank != packed.rank)
        return fail(Status::ConventionCompanionShape, packed.rank == 0 ? pr : sr, w->name);
      uint64_t ps[kMaxLogicalRank], ss[kMaxLogicalRank];
      packed.copy_shape(ps, kMaxLogicalRank);
      s.copy_shape(ss, kMaxLogicalRank);
      const uint32_t last = packed.rank - 1;
      for (uint32_t d = 0; d < last; ++d)
        if (ss[d] != ps[d]) return fail(Status::ConventionCompanionShape, sr, w->name);
      const uint64_t k = ps[last] * 2;
      if (k % 32 != 0) return fail(Status::ConventionGroupNotDividing, pr, w->name);
      if (ss[last] != k / 32) return fail(Status::ConventionCompanionShape, sr, w->name);
      w->params = QuantParams{QuantMode::Mxfp4, 4, 32};
      w->scale_dtype = DType::U8;
      w->format = QuantFormat::MlxMxfp4;
      w->decodable = true;
      w->rank = packed.rank;
      for (uint32_t d = 0; d < packed.rank; ++d) w->shape[d] = ps[d];
      w->shape[last] = k;
      w->elements = ps[last] == 0 ? 0 : packed.element_count() * 2;
      return Status::Ok;
    }
    default: break;
  }
  set_detail(&detail_, uqff_type_name(UqffType(tag)), strlen(uqff_type_name(UqffType(tag))));
  return fail(Status::UqffUnsupportedType, pr, w->name);
}

}  // namespace ws
