// weightstream — MLX (FORMATS.md §2): `<p>.weight` U32 + `<p>.scales` (+ `<p>.biases`, affine).
//
// Signalled by mlx.core's save_safetensors metadata `"format": "mlx"` or by a config.json
// "quantization" section (mlx-lm utils.py load_model reads it), which is also where its
// parameters come from; else `__metadata__` bits / group_size / mode, else the shapes.
#include "convention_descriptor.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

bool mlx_signal(const TensorTable& table) {
  StrView format;
  return table.find_metadata("format", &format) && format.equals("mlx");
}

Status mlx_build(LogicalModel& m, const MlxQuantConfig* config) { return m.build_mlx(config); }

uint32_t mlx_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  return mlx_layout_parameters(w, out, cap, 0);
}

// mlx nn/layers/quantized.py: `<p>.scales` and `<p>.biases` sit beside the layer's `<p>.weight`.
const CompanionName kMlxCompanions[] = {{".scales", ".weight", false}, {".biases", ".weight", false}};

// The fixes in MLX's words (mlx-lm's quantize: mx.quantize's bits and group_size).
const char* mlx_hint(Status s) {
  switch (s) {
    case Status::ConventionBitsNotAllowed: return "MLX cannot produce this bits/group combination: check the quantization config.";
    case Status::ConventionUnknownParams:
      return "Give the model's config.json (quantization group_size and bits), or metadata stating them.";
    default: return nullptr;
  }
}

}  // namespace

const ConventionDescriptor kMlxConvention = {
    "mlx", Convention::Mlx, false, /*rank*/ 2, kNoEntry, mlx_signal, ConfigRole::ParamSource,
    /*data_phase*/ nullptr, kMlxCompanions, 2, mlx_build, nullptr, mlx_parameters, /*claims*/ nullptr,
    /*renamed*/ nullptr, /*data_warning*/ nullptr, mlx_hint};

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
  if (build_index(false) != Status::Ok) return error_.code;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      TensorRef r{t, i};
      StrView name = tab.get(i).name;
      size_t base = 0;
      // Companions belong to their weight; one without it is an error naming it.
      if (ends_with(name, ".scales", &base)) {
        if (!find_concat(name.data, base, ".weight").present())
          return fail(Status::ConventionOrphanCompanion, r, name);
        continue;
      }
      if (ends_with(name, ".biases", &base)) {
        if (!find_concat(name.data, base, ".scales").present())
          return fail(Status::ConventionOrphanCompanion, r, name);
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      TensorRef sr, br;
      if (ends_with(name, ".weight", &base)) {
        // The last match across tables, as the former full scan kept it.
        sr = find_concat(name.data, base, ".scales", kNoTensor, true);
        br = find_concat(name.data, base, ".biases", kNoTensor, true);
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

}  // namespace ws
