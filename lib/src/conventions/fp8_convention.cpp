// weightstream — the Hub's FP8 checkpoints: `<p>.weight` F8_E4M3 (or F8_E5M2) with a scale per
// block (`<p>.weight_scale_inv`), per tensor or per channel (`<p>.weight_scale`).
//
// Sources (facts, not code):
// - Block scales: DeepSeek-V3 (deepseek-ai/DeepSeek-V3) inference/fp8_cast_bf16.py main() pairs
//   each 1-byte `<p>.weight` with `<p>.weight_scale_inv` and inference/kernel.py weight_dequant()
//   multiplies each [128, 128] block by its scale over a tl.cdiv grid (ragged edges); transformers
//   (huggingface/transformers) utils/quantization_config.py FineGrainedFP8Config (quant_method
//   "fp8", `weight_block_size`, default (128, 128)) and integrations/finegrained_fp8.py FP8Linear
//   (weight_scale_inv of shape (ceil(out / block[0]), ceil(in / block[1])), F32).
// - Per-tensor / per-channel `weight_scale`: vLLM (vllm-project/vllm)
//   model_executor/layers/quantization/fp8.py Fp8LinearMethod.create_weights (no
//   weight_block_size: a per-tensor `weight_scale`; `input_scale` for a static activation scheme)
//   and utils/w8a8_utils.py; channel scales are [out, 1] (compressed-tensors' channel strategy).
// - `scale_fmt: "ue8m0"` (DeepSeek-V3.1 config.json): scales that are powers of two; a U8 scale
//   tensor then holds the UE8M0 exponent, as an F8_E8M0 one does.
// - Unquantized modules (`modules_to_not_convert`, vLLM's `ignored_layers`): their weights are
//   written in BF16 with no scale (fp8_cast_bf16.py skips what has none). A module the config's
//   lists leave unquantized (matched as transformers and vLLM match them: module_lists.h) is read
//   as stored, whatever its dtype, and a scale beside it contradicts the config:
//   ConventionExcludedQuantized, naming the list and its entry. Any other weight without a scale
//   is plain, except an F8 `.weight`, which without its scale would be a wrong number
//   (fp8_cast_bf16.py warns and passes it on raw): ConventionMissingCompanion.
// - `input_scale` (and every other tensor) is handed on as a plain tensor.
//
// Claimed by config.json's quant_method "fp8" (fp8_claims) or, when nothing else says
// what the model is, by a `.weight_scale_inv` tensor (the header-metadata signal below); then
// without config.json the block is transformers' default 128 x 128, and a grid that does not fit it
// is ConventionUnknownParams (the shapes alone do not give a ragged block's size).
#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr Convention kFp8Id{4};
constexpr uint32_t kDefaultBlock = 128;  // FineGrainedFP8Config's weight_block_size default

bool fp8_signal(const TensorTable& table) {
  for (uint32_t i = 0; i < table.count(); ++i) {
    size_t base = 0;
    if (ends_with(table.get(i).name, ".weight_scale_inv", &base)) return true;
  }
  return false;
}

// The method named: "fp8" (transformers' FineGrainedFP8Config, vLLM's Fp8Config). Without a
// config method, the `.weight_scale_inv` signal above names the model (resolution, not a claim).
bool fp8_claims(const LogicalModel&, const MlxQuantConfig* config) {
  return config && config->has_method() && method_is(config, "fp8");
}

Status fp8_build(LogicalModel& m, const MlxQuantConfig* config) { return m.build_fp8(config); }

void fp8_spec(const LogicalWeight& w, DequantSpec* s) { fp8_scale_spec(w, s); }

uint32_t fp8_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  return fp8_scale_parameters(w, out, cap, "fp8");
}

// transformers' FP8 writers name the scale beside the weight.
const CompanionName kFp8Companions[] = {{".weight_scale_inv", ".weight", false},
                                        {".weight_scale", ".weight", false}};

bool is_fp8(DType d) { return d == DType::F8_E4M3 || d == DType::F8_E5M2; }

bool block_scale_dtype(DType d, bool ue8m0) {
  return d == DType::F32 || d == DType::BF16 || d == DType::F16 || d == DType::F8_E8M0 || (ue8m0 && d == DType::U8);
}

// The fixes in FP8's words (transformers' FineGrainedFP8Config: weight_block_size).
const char* fp8_hint(Status s) {
  if (s != Status::ConventionUnknownParams) return nullptr;
  return "Give the model's config.json: its quantization_config states weight_block_size, which the scale grid "
         "does not give when it does not fit transformers' default 128 x 128.";
}

}  // namespace

void fp8_scale_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.format != QuantFormat::Fp8Block) return;
  s->scale_dtype = w.scale_dtype;
  s->element_dtype = w.fp8_dtype;
  const uint64_t cols = w.rank == 2 ? w.shape[1] : 0, rows = w.rank == 2 ? w.shape[0] : 0;
  // An empty weight (no rows or columns) still gets a valid geometry: it decodes nothing.
  s->row_elems = cols ? cols : 1;
  s->block_rows = w.fp8_block[0] ? w.fp8_block[0] : rows ? rows : 1;
  s->block_cols = w.fp8_block[1] ? w.fp8_block[1] : cols ? cols : 1;
}

uint32_t fp8_scale_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap, const char* method) {
  if (w.format != QuantFormat::Fp8Block) return 0;
  uint32_t n = put_parameter(out, cap, 0, "method", method);
  const char* scaling = w.fp8_block[1] == 0 ? (w.fp8_block[0] == 0 ? "tensor" : "channel") : "block";
  n = put_parameter(out, cap, n, "scaling", scaling);
  if (w.fp8_block[1] != 0) {
    n = put_parameter(out, cap, n, "block_rows", nullptr, w.fp8_block[0]);
    n = put_parameter(out, cap, n, "block_cols", nullptr, w.fp8_block[1]);
  }
  n = put_parameter(out, cap, n, "weight_dtype", dtype_name(w.fp8_dtype));
  return put_parameter(out, cap, n, "scale_dtype", dtype_name(w.scale_dtype));
}

const ConventionDescriptor kFp8Convention = {
    "fp8", kFp8Id, false, /*rank*/ 3, kNoEntry, fp8_signal, ConfigRole::ParamSource,
    /*data_phase*/ nullptr, kFp8Companions, 2, fp8_build, fp8_spec, fp8_parameters, fp8_claims,
    /*renamed*/ nullptr, /*data_warning*/ nullptr, fp8_hint};

Status LogicalModel::build_fp8(const MlxQuantConfig* config) {
  if (build_index(false) != Status::Ok) return error_.code;
  if (conv_detail::refuse_unread_lists(*this, config) != Status::Ok) return error_.code;
  const bool stated = config && config->has_block_size();
  uint32_t quantized = 0;
  TensorRef first;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      if (!first.present()) first = r;
      size_t base = 0;
      // A scale belongs to its weight; one without it is an error naming it.
      static const char* const kScales[] = {".weight_scale_inv", ".weight_scale"};
      if (is_companion(r, name, kScales, 2, ".weight")) {
        if (error_.code != Status::Ok) return error_.code;
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      TensorRef inv, per;
      const bool is_weight = ends_with(name, ".weight", &base);
      if (is_weight) {
        inv = find_concat(name.data, base, ".weight_scale_inv");
        per = find_concat(name.data, base, ".weight_scale");
      }
      const TensorInfo p = tensor(r);
      // A module the config leaves unquantized: as stored; with a scale, the files contradict it.
      const conv_detail::ModuleExclusion x =
          is_weight ? conv_detail::module_excluded(config, name.data, base) : conv_detail::ModuleExclusion();
      if (x.excluded) {
        if (inv.present() || per.present()) return conv_detail::refuse_excluded(*this, r, x.list, x.entry, *config);
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      if (!inv.present() && !per.present()) {
        // No scale: an unquantized module (BF16), or an FP8 weight whose scale is missing.
        if (is_weight && is_fp8(p.dtype())) return fail(Status::ConventionMissingCompanion, r, name);
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      if (inv.present() && per.present()) return fail(Status::ConventionCompanionShape, per, tensor(per).name);
      const TensorRef sr = inv.present() ? inv : per;
      const TensorInfo s = tensor(sr);
      // The weight: a 2-D FP8 matrix [out, in].
      if (!is_fp8(p.dtype()) || p.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      const uint64_t rows = w.shape[0], cols = w.shape[1];
      if (inv.present()) {
        if (config && config->block_size_invalid()) {
          static const char kWhat[] = "weight_block_size (config.json): not two positive integers";
          return refuse(Status::ConfigInvalidQuantization, r, kWhat, sizeof kWhat - 1, nullptr);
        }
        if (!block_scale_dtype(s.dtype(), config && config->scale_fmt_ue8m0()))
          return fail(Status::ConventionCompanionShape, sr, s.name);
        const uint64_t br = stated ? config->block_size(0) : kDefaultBlock;
        const uint64_t bc = stated ? config->block_size(1) : kDefaultBlock;
        const uint64_t grid_rows = rows / br + (rows % br != 0), grid_cols = cols / bc + (cols % bc != 0);
        uint64_t sshape[kMaxLogicalRank] = {};
        const bool fits = s.rank == 2 && s.copy_shape(sshape, kMaxLogicalRank) == 2 && sshape[0] == grid_rows &&
                          sshape[1] == grid_cols;
        if (!fits) {
          if (!stated) {
            static const char kWhat[] =
                "weight_block_size: no config.json states it, and the scale grid does not fit 128 x 128";
            return refuse(Status::ConventionUnknownParams, r, kWhat, sizeof kWhat - 1, nullptr);
          }
          fail(Status::ConventionCompanionShape, sr, s.name);
          error_.set_expected(grid_rows * grid_cols);
          error_.set_found(s.element_count());
          return error_.code;
        }
        w.fp8_block[0] = uint32_t(br);
        w.fp8_block[1] = uint32_t(bc);
      } else {
        // weight_scale: one scale (a scalar or [1]), or one per output channel ([out, 1] / [out]).
        if (!is_float_scale(s.dtype())) return fail(Status::ConventionCompanionShape, sr, s.name);
        uint64_t sshape[kMaxLogicalRank] = {};
        const uint32_t srank = s.rank <= kMaxLogicalRank ? s.copy_shape(sshape, kMaxLogicalRank) : 0;
        const uint64_t n = s.element_count();
        const bool channel = n == rows && ((srank == 2 && sshape[1] == 1) || srank == 1) && rows != 1;
        if (n != 1 && !channel) {
          fail(Status::ConventionCompanionShape, sr, s.name);
          error_.set_expected(rows);
          error_.set_found(n);
          return error_.code;
        }
        w.fp8_block[0] = channel ? 1 : 0;
        w.fp8_block[1] = 0;
      }
      w.convention = kFp8Id;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.scale_dtype = s.dtype();
      w.fp8_dtype = p.dtype();
      w.format = QuantFormat::Fp8Block;
      w.decodable = true;
      ++quantized;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  // config.json names fp8 but no tensor is an FP8 weight with its scale: the files are not the
  // model it describes (a dequantized copy beside the original config, or the wrong files).
  if (config && config->has_method() && quantized == 0) {
    static const char kWhat[] = "fp8 (config.json quant_method): no tensor is an FP8 weight with a scale";
    return refuse(Status::QuantizationTensorsAbsent, first, kWhat, sizeof kWhat - 1, nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
