// Logical weights: MLX and Ollama companion grouping over validated tensor tables.
#include "weightstream/conventions.h"

#include <string.h>

namespace ws {

namespace {

bool ends_with(const StrView& s, const char* suffix, size_t* base_len) {
  size_t n = strlen(suffix);
  if (s.size < n || memcmp(s.data + s.size - n, suffix, n) != 0) return false;
  *base_len = s.size - n;
  return true;
}

// s == a + b, without building the concatenation (names may be of any length).
bool equals_concat(const StrView& s, const char* a, size_t an, const char* b) {
  size_t bn = strlen(b);
  return s.size == an + bn && memcmp(s.data, a, an) == 0 && memcmp(s.data + an, b, bn) == 0;
}

bool parse_u32(const StrView& s, uint32_t* out) {
  if (s.size == 0 || s.size > 9) return false;
  uint32_t v = 0;
  for (size_t i = 0; i < s.size; ++i) {
    if (s.data[i] < '0' || s.data[i] > '9') return false;
    v = v * 10 + uint32_t(s.data[i] - '0');
  }
  *out = v;
  return true;
}

// Metadata value of key a + b in `t`.
bool find_meta_concat(const TensorTable& t, const char* a, size_t an, const char* b, StrView* out) {
  uint32_t cursor = 0;
  for (uint32_t i = 0; i < t.metadata_count(); ++i) {
    MetadataEntry e = t.metadata_at(&cursor);
    if (equals_concat(e.key, a, an, b)) {
      *out = e.value;
      return true;
    }
  }
  return false;
}

bool is_float_scale(DType d) { return d == DType::BF16 || d == DType::F16 || d == DType::F32; }

QuantFormat format_of(QuantMode m) {
  switch (m) {
    case QuantMode::Mxfp4: return QuantFormat::MlxMxfp4;
    case QuantMode::Mxfp8: return QuantFormat::MlxMxfp8;
    case QuantMode::Nvfp4: return QuantFormat::MlxNvfp4;
    default: return QuantFormat::MlxAffine;
  }
}

}  // namespace

const char* convention_name(Convention c) {
  switch (c) {
    case Convention::Plain: return "plain";
    case Convention::Mlx: return "mlx";
    case Convention::Ollama: return "ollama";
  }
  return "?";
}

const char* piece_role_name(PieceRole r) {
  switch (r) {
    case PieceRole::Packed: return "packed";
    case PieceRole::Scales: return "scales";
    case PieceRole::Biases: return "biases";
    case PieceRole::GlobalScale: return "global_scale";
  }
  return "?";
}

DequantSpec LogicalWeight::spec() const {
  DequantSpec s;
  s.format = format;
  s.elements = elements;
  if (params.mode != QuantMode::None) {
    s.bits = params.bits;
    s.group = params.group;
    s.scale_dtype = scale_dtype;
    s.global_scale_is_ollama = global_scale_is_ollama;
  }
  return s;
}

LogicalModel::LogicalModel(LogicalWeight* storage, uint32_t capacity)
    : weights_(storage), capacity_(capacity) {}

Status LogicalModel::add_table(const TensorTable* table, uint64_t data_start) {
  if (table_count_ >= kMaxTables) return fail(Status::UsageError, TensorRef(), StrView());
  tables_[table_count_] = table;
  data_start_[table_count_] = data_start;
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
  }
  error_.tensor_name = name.data;
  error_.tensor_name_size = name.size;
  return s;
}

// Linear over all tables: fine for the sizes tested here; a hashed lookup is left for large
// models (see the report in tests/conventions).
TensorRef LogicalModel::find_tensor(const char* name, size_t n) const {
  TensorRef r;
  for (uint32_t t = 0; t < table_count_; ++t) {
    uint32_t i = tables_[t]->find(name, n);
    if (i != kNoTensor) {
      r.table = t;
      r.index = i;
      return r;
    }
  }
  return r;
}

uint32_t LogicalModel::find(const char* name, size_t n) const {
  for (uint32_t i = 0; i < count_; ++i)
    if (weights_[i].name.equals(name, n)) return i;
  return kNoTensor;
}

Status LogicalModel::add_weight(const LogicalWeight& w) {
  if (count_ >= capacity_) return fail(Status::ConventionTooManyWeights, w.ref(PieceRole::Packed), w.name);
  weights_[count_++] = w;
  return Status::Ok;
}

Status LogicalModel::plain_weight(TensorRef r, LogicalWeight* w) const {
  TensorInfo t = tensor(r);
  *w = LogicalWeight();
  w->name = t.name;
  w->piece[uint32_t(PieceRole::Packed)] = r;
  w->decodable = quant_format_from_dtype(t.dtype(), &w->format);
  w->rank = t.copy_shape(w->shape, kMaxLogicalRank);
  w->elements = t.element_count();
  return Status::Ok;
}

// Checks a quantized weight's companions against its params and fills the logical shape.
Status LogicalModel::finish_quantized(LogicalWeight* w) {
  TensorRef pr = w->ref(PieceRole::Packed), sr = w->ref(PieceRole::Scales), br = w->ref(PieceRole::Biases);
  TensorInfo p = tensor(pr), s = tensor(sr);
  const bool affine = w->params.mode == QuantMode::Affine;
  if (affine && !br.present()) return fail(Status::ConventionMissingCompanion, pr, w->name);
  if (!affine && br.present()) return fail(Status::ConventionCompanionShape, br, w->name);
  if (!quant_params_allowed(w->params)) return fail(Status::ConventionBitsNotAllowed, pr, w->name);
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
  // K values per row: the row's words hold K*bits bits.
  const uint64_t row_bits = pshape[last] * 32;
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
  w->elements = p.element_count() / pshape[last] * k;
  if (pshape[last] == 0) {  // an empty row count: the product is 0 either way
    w->elements = 0;
  }
  return Status::Ok;
}

Status LogicalModel::build_plain() {
  for (uint32_t t = 0; t < table_count_; ++t) {
    for (uint32_t i = 0; i < tables_[t]->count(); ++i) {
      LogicalWeight w;
      plain_weight(TensorRef{t, i}, &w);
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  return Status::Ok;
}

// MLX params from shapes alone: exactly one (mode, bits, group) must fit the packed words per row
// (W) and scales per row (S). U8 scales: W/S = 2 nvfp4, 4 mxfp4, 8 mxfp8. Float scales (affine):
// group*bits = 32*W/S, unique only for some products (e.g. 96 = 32x3; 256 is 64x4 or 32x8).
static bool params_from_shapes(uint64_t w, uint64_t s, bool u8_scales, QuantParams* out) {
  if (s == 0 || w % s != 0) return false;
  const uint64_t ratio = w / s;
  if (u8_scales) {
    if (ratio == 2) *out = QuantParams{QuantMode::Nvfp4, 4, 16};
    else if (ratio == 4) *out = QuantParams{QuantMode::Mxfp4, 4, 32};
    else if (ratio == 8) *out = QuantParams{QuantMode::Mxfp8, 8, 32};
    else return false;
    return true;
  }
  static const uint32_t kBits[] = {2, 3, 4, 5, 6, 8};
  static const uint32_t kGroups[] = {32, 64, 128};
  uint32_t found = 0;
  for (uint32_t g : kGroups)
    for (uint32_t b : kBits)
      if (uint64_t(g) * b == 32 * ratio) {
        *out = QuantParams{QuantMode::Affine, b, g};
        ++found;
      }
  return found == 1;
}

Status LogicalModel::build_mlx(const MlxQuantConfig* config) {
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t];
    for (uint32_t i = 0; i < tab.count(); ++i) {
      TensorRef r{t, i};
      StrView name = tab.get(i).name;
      size_t base = 0;
      // Companions belong to their weight; one without it is an error naming it.
      if (ends_with(name, ".scales", &base)) {
        char suffix[] = ".weight";
        bool found = false;
        for (uint32_t u = 0; u < table_count_ && !found; ++u)
          for (uint32_t j = 0; j < tables_[u]->count() && !found; ++j)
            found = equals_concat(tables_[u]->get(j).name, name.data, base, suffix);
        if (!found) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;
      }
      if (ends_with(name, ".biases", &base)) {
        bool found = false;
        for (uint32_t u = 0; u < table_count_ && !found; ++u)
          for (uint32_t j = 0; j < tables_[u]->count() && !found; ++j)
            found = equals_concat(tables_[u]->get(j).name, name.data, base, ".scales");
        if (!found) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      TensorRef sr, br;
      if (ends_with(name, ".weight", &base)) {
        for (uint32_t u = 0; u < table_count_; ++u)
          for (uint32_t j = 0; j < tables_[u]->count(); ++j) {
            StrView o = tables_[u]->get(j).name;
            if (equals_concat(o, name.data, base, ".scales")) sr = TensorRef{u, j};
            if (equals_concat(o, name.data, base, ".biases")) br = TensorRef{u, j};
          }
      }
      QuantParams cfg;
      const bool has_cfg = config && config->lookup(name.data, base, &cfg);
      if (!sr.present()) {
        // A layer is quantized iff its scales exist (FORMATS.md §2): without, a plain tensor.
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      w.convention = Convention::Mlx;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.piece[uint32_t(PieceRole::Biases)] = br;
      QuantParams p;
      StrView mv;
      if (has_cfg) {
        if (cfg.mode == QuantMode::None) return fail(Status::ConventionUnknownParams, r, name);
        p = cfg;
      } else if (tab.find_metadata("bits", &mv) && parse_u32(mv, &p.bits) &&
                 tab.find_metadata("group_size", &mv) && parse_u32(mv, &p.group)) {
        p.mode = QuantMode::Affine;
        if (tab.find_metadata("mode", &mv) &&
            !quant_mode_from_name(mv.data, uint32_t(mv.size), &p.mode))
          return fail(Status::ConfigUnknownMode, r, name);
      } else {
        TensorInfo pi = tensor(r), si = tensor(sr);
        if (pi.rank == 0 || si.rank == 0 ||
            !params_from_shapes(pi.dim(pi.rank - 1), si.dim(si.rank - 1), si.dtype() == DType::U8, &p))
          return fail(Status::ConventionUnknownParams, r, name);
      }
      if (p.bits == 0 || p.group == 0) return fail(Status::ConventionUnknownParams, r, name);
      w.params = p;
      if (finish_quantized(&w) != Status::Ok) return error_.code;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  return Status::Ok;
}

// Ollama quant_type (with the aliases of FORMATS.md §3) to params; group 0 = the type's default.
static bool ollama_type(const StrView& s, QuantParams* p) {
  struct Row { const char* name; QuantMode mode; uint32_t bits, group; };
  static const Row kRows[] = {
      {"int4", QuantMode::Affine, 4, 64}, {"FP4", QuantMode::Affine, 4, 64},
      {"Q4", QuantMode::Affine, 4, 64},   {"int8", QuantMode::Affine, 8, 64},
      {"FP8", QuantMode::Affine, 8, 64},  {"Q8", QuantMode::Affine, 8, 64},
      {"nvfp4", QuantMode::Nvfp4, 4, 16}, {"mxfp4", QuantMode::Mxfp4, 4, 32},
      {"mxfp8", QuantMode::Mxfp8, 8, 32},
  };
  for (const Row& r : kRows) {
    if (s.equals(r.name)) {
      *p = QuantParams{r.mode, r.bits, r.group};
      return true;
    }
  }
  return false;
}

Status LogicalModel::build_ollama() {
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t];
    for (uint32_t i = 0; i < tab.count(); ++i) {
      TensorRef r{t, i};
      StrView name = tab.get(i).name;
      size_t base = 0;
      // Companions: `.scale` and `.global_scale` always; `.bias` only beside a `.scale`
      // (otherwise it is a linear's plain bias).
      bool companion = false;
      if (ends_with(name, ".scale", &base) || ends_with(name, ".global_scale", &base)) {
        if (tab.find(name.data, base) == kNoTensor) return fail(Status::ConventionOrphanCompanion, r, name);
        companion = true;
      } else if (ends_with(name, ".bias", &base)) {
        for (uint32_t j = 0; j < tab.count() && !companion; ++j)
          companion = equals_concat(tab.get(j).name, name.data, base, ".scale");
      }
      if (companion) continue;
      LogicalWeight w;
      plain_weight(r, &w);
      TensorRef sr, br, gr;
      for (uint32_t j = 0; j < tab.count(); ++j) {
        StrView o = tab.get(j).name;
        if (equals_concat(o, name.data, name.size, ".scale")) sr = TensorRef{t, j};
        if (equals_concat(o, name.data, name.size, ".bias")) br = TensorRef{t, j};
        if (equals_concat(o, name.data, name.size, ".global_scale")) gr = TensorRef{t, j};
      }
      if (!sr.present()) {
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      StrView qt, gs;
      if (!find_meta_concat(tab, name.data, name.size, ".quant_type", &qt) &&
          !tab.find_metadata("quant_type", &qt))
        return fail(Status::ConventionUnknownParams, r, name);
      QuantParams p;
      if (!ollama_type(qt, &p)) return fail(Status::ConventionUnknownQuantType, r, name);
      // Always trust an explicit group_size (early int4 files used 32).
      if (find_meta_concat(tab, name.data, name.size, ".group_size", &gs) ||
          tab.find_metadata("group_size", &gs)) {
        if (!parse_u32(gs, &p.group) || p.group == 0) return fail(Status::ConventionUnknownParams, r, name);
      }
      w.convention = Convention::Ollama;
      w.params = p;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.piece[uint32_t(PieceRole::Biases)] = br;
      w.piece[uint32_t(PieceRole::GlobalScale)] = gr;
      w.global_scale_is_ollama = true;
      if (finish_quantized(&w) != Status::Ok) return error_.code;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  return Status::Ok;
}

}  // namespace ws
