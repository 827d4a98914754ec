// weightstream — Ollama's safetensors blobs (FORMATS.md §3): `{name}` + `{name}.scale` (+ `.bias`,
// `.global_scale`), the type and group from `__metadata__` quant_type / group_size.
//
// Signalled by an Ollama manifest as the entry, or by a `quant_type` / `<tensor>.quant_type`
// metadata key (ollama x/mlxrunner/model root.go readBlobTensorQuantInfo). config.json is not read.
#include "convention_descriptor.h"
#include "name_match.h"
#include "weightstream/model_loader.h"
#include "weightstream/ollama_quant.h"

namespace ws {

using namespace conv;

namespace {

// The key itself or a `.`-separated suffix of it (`<tensor>.quant_type`).
bool is_quant_type_key(const StrView& key) {
  static const char kKey[] = "quant_type";
  const size_t n = sizeof kKey - 1;
  if (key.size < n || memcmp(key.data + key.size - n, kKey, n) != 0) return false;
  return key.size == n || key.data[key.size - n - 1] == '.';
}

bool ollama_signal(const TensorTable& table) {
  uint32_t cursor = 0;
  for (uint32_t i = 0; i < table.metadata_count(); ++i)
    if (is_quant_type_key(table.metadata_at(&cursor).key)) return true;
  return false;
}

Status ollama_build(LogicalModel& m, const MlxQuantConfig*) { return m.build_ollama(); }

// Ollama's nvfp4 global scale multiplies the output as is (x/mlxrunner), where MLX's is divided by
// 448 * 6 (DequantSpec::global_scale_is_ollama).
void ollama_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.params.mode != QuantMode::None) s->global_scale_is_ollama = true;
}

uint32_t ollama_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  return mlx_layout_parameters(w, out, cap, 0);
}

const CompanionName kOllamaCompanions[] = {
    {".scale", "", false}, {".bias", "", false}, {".global_scale", "", false}};

// The fixes in Ollama's words: a blob states its quantization in its metadata (quant_type,
// group_size), which ollama create writes.
const char* ollama_hint(Status s) {
  switch (s) {
    case Status::ConventionBitsNotAllowed:
      return "The blob's quant_type and group_size give bits and a group its format does not have: check the "
             "blob's metadata, or re-import the model (ollama create).";
    case Status::ConventionUnknownParams:
      return "The blob's group_size metadata is not a group size: state it as a number, or re-import the model "
             "(ollama create).";
    default: return nullptr;
  }
}

}  // namespace

const ConventionDescriptor kOllamaConvention = {
    "ollama", Convention::Ollama, false, /*rank*/ 1, uint8_t(ModelEntry::OllamaManifest), ollama_signal,
    ConfigRole::Ignored, /*data_phase*/ nullptr, kOllamaCompanions, 3, ollama_build, ollama_spec,
    ollama_parameters, /*claims*/ nullptr, /*renamed*/ nullptr, /*data_warning*/ nullptr, ollama_hint};

// A metadata group_size: "" = not stated (Ollama tests gs != ""), "0" too (strconv.Atoi gives 0,
// the value Ollama treats as unset). Anything but digits is rejected: Ollama ignores a per-tensor
// value Atoi cannot parse and uses a negative one as "default"; a corrupt number is an error here.
static bool group_size_value(const StrView& s, uint32_t* out) {
  if (s.size == 0) {
    *out = 0;
    return true;
  }
  return parse_u32(s, out);
}

// Ollama blobs (FORMATS.md §3; ollama x/mlxrunner/model root.go readBlobTensorQuantInfo, x/quant
// quant.go). A main tensor is one whose name does not end in ".scale" or ".bias"; it is quantized
// iff "<name>.scale" is in its blob. A ".scale", ".bias" or ".global_scale" is a companion only of
// a quantized main tensor; otherwise it is an ordinary tensor (Gemma-4 MoE blobs hold
// model.layers.N.router.scale, a plain [2816] vector).
Status LogicalModel::build_ollama() {
  if (build_index(false) != Status::Ok) return error_.code;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    auto is_main = [](const StrView& n) {
      size_t b;
      return !ends_with(n, ".scale", &b) && !ends_with(n, ".bias", &b);
    };
    // `n` (its first `len` bytes) is a quantized main tensor of this blob.
    auto quantized_main = [&](const char* n, size_t len) {
      StrView v;
      v.data = n;
      v.size = len;
      return is_main(v) && find_concat(n, len, "", t).present() && find_concat(n, len, ".scale", t).present();
    };
    for (uint32_t i = 0; i < tab.count(); ++i) {
      TensorRef r{t, i};
      StrView name = tab.get(i).name;
      size_t base = 0;
      if ((ends_with(name, ".scale", &base) || ends_with(name, ".bias", &base) ||
           ends_with(name, ".global_scale", &base)) &&
          quantized_main(name.data, base))
        continue;  // read with its weight
      LogicalWeight w;
      plain_weight(r, &w);
      // Names are unique within a table (the reader rejects duplicates): one match at most.
      const TensorRef sr = is_main(name) ? find_concat(name.data, name.size, ".scale", t) : TensorRef();
      if (!sr.present()) {
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      // The type: "<name>.quant_type" when not empty, else the blob's quant_type, else the shapes.
      StrView qt, gs;
      const bool own_type = find_meta_concat(tab, name.data, name.size, ".quant_type", &qt) && qt.size != 0;
      if (!own_type && !tab.find_metadata("quant_type", &qt)) qt = StrView();
      // The group: "<name>.group_size", else the blob's group_size, else the group the shapes give
      // (with the stated type as the hint, so early int4 g32 blobs without group_size read right),
      // else the type's default.
      uint32_t group = 0;
      const bool own_group = find_meta_concat(tab, name.data, name.size, ".group_size", &gs) && gs.size != 0;
      if ((own_group || tab.find_metadata("group_size", &gs)) && !group_size_value(gs, &group))
        return fail(Status::ConventionUnknownParams, r, name);
      const TensorInfo pi = tensor(r), si = tensor(sr);
      const OllamaInferred inferred =
          pi.rank == 0 || si.rank == 0 ? OllamaInferred()
                                       : ollama_infer_from_shapes(pi.dim(pi.rank - 1), si.dim(si.rank - 1), qt.data, qt.size);
      OllamaQuantType type = inferred.type;
      if (qt.size != 0) {
        type = ollama_quant_type(qt.data, qt.size);
        if (type == OllamaQuantType::Unknown) return fail(Status::ConventionUnknownQuantType, r, name);
      } else if (type == OllamaQuantType::Unknown) {
        fail(Status::ConventionGroupNotInferable, r, name);
        if (pi.rank != 0 && si.rank != 0) {
          error_.set_found(pi.dim(pi.rank - 1));
          error_.set_expected(si.dim(si.rank - 1));
        }
        return error_.code;
      }
      QuantParams p = ollama_quant_params(type);
      if (group == 0) group = inferred.group;
      if (group != 0) p.group = group;
      w.convention = Convention::Ollama;
      w.params = p;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.piece[uint32_t(PieceRole::Biases)] = find_concat(name.data, name.size, ".bias", t);
      w.piece[uint32_t(PieceRole::GlobalScale)] = find_concat(name.data, name.size, ".global_scale", t);
      if (finish_quantized(&w) != Status::Ok) return error_.code;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  return Status::Ok;
}

}  // namespace ws
