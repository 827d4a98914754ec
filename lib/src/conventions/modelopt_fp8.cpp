// weightstream — NVIDIA ModelOpt's FP8 checkpoints (quant_method "modelopt", quant_algo "FP8",
// "FP8_PER_CHANNEL_PER_TOKEN" or "FP8_PB_WO"), built for the modelopt row
// (modelopt_nvfp4_convention.cpp) and decoded by the FP8 kernels (QuantFormat::Fp8Block).
//
// Sources (facts, not code):
// - ModelOpt's export (NVIDIA/Model-Optimizer modelopt/torch/export/unified_export_hf.py with
//   quant_utils.py, the QUANTIZATION_FP8 / QUANTIZATION_FP8_PC_PT / QUANTIZATION_FP8_PB_WO
//   formats) writes a quantized linear `<m>` as `<m>.weight` F8_E4M3 [out, in] (the weight
//   divided by its scale, cast to float8_e4m3fn), `<m>.weight_scale` F32 (amax / 448) and, for
//   static activations, `<m>.input_scale` F32; modules in `exclude_modules` keep their BF16 weight
//   and have no scale.
// - vLLM model_executor/layers/quantization/modelopt.py reads them back: ModelOptFp8Config picks
//   the linear method by the (upper-cased) quant_algo — ModelOptFp8LinearMethod ("FP8": one
//   PerTensorScaleParameter a checkpoint tensor, float8_e4m3fn only), ModelOptFp8PcPtLinearMethod
//   ("FP8_PER_CHANNEL_PER_TOKEN": weight_scale [out], no input_scale) and
//   ModelOptFp8PbWoLinearMethod ("FP8_PB_WO": 128 x 128 blocks, out and in each a multiple of 128,
//   weight_scale [out / 128, 1, in / 128, 1] as exported, or [out / 128, in / 128]).
// - The value: f32(e4m3) * weight_scale (vLLM's per_tensor_dequantize and the block kernels;
//   ModelOpt qtensor/fp8_tensor.py FP8QTensor.dequantize multiplies by the scale), one IEEE
//   multiplication — the fp8 row's Fp8Block arithmetic, per tensor, per row or per block.
//
// Every other tensor (input_scale, k_scale / v_scale, norms, excluded modules) is plain; a module
// the config's exclude_modules / ignore name (module_lists.h) is read as stored, and a scale
// beside it is ConventionExcludedQuantized. Any other F8_E4M3 `.weight` without its scale is
// ConventionMissingCompanion (read raw it would be a wrong
// number); a scale beside a weight that is not a 2-D F8_E4M3 matrix, or of the wrong shape or
// dtype, ConventionCompanionShape; a block weight whose dimension is no multiple of 128,
// ConventionGroupNotDividing; a config naming an FP8 algo over files without one such weight,
// QuantizationTensorsAbsent.
#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr uint64_t kPbBlock = 128;  // ModelOptFp8PbWoLinearMethod._WEIGHT_BLOCK_SIZE

// `a` equals the upper-case ASCII `upper`, ignoring the case of a's letters.
bool equals_upper(const StrView& a, const char* upper) {
  size_t i = 0;
  for (; upper[i]; ++i) {
    if (i >= a.size) return false;
    char c = a.data[i];
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return i == a.size;
}

}  // namespace

ModelOptFp8Algo modelopt_fp8_algo(const MlxQuantConfig* config) {
  if (!method_is(config, "modelopt") || !config->has_algo() || config->algo_truncated()) return ModelOptFp8Algo::None;
  const StrView a = config->algo();
  if (equals_upper(a, "FP8")) return ModelOptFp8Algo::Tensor;
  if (equals_upper(a, "FP8_PER_CHANNEL_PER_TOKEN")) return ModelOptFp8Algo::Channel;
  if (equals_upper(a, "FP8_PB_WO")) return ModelOptFp8Algo::Block128;
  return ModelOptFp8Algo::None;
}

Status LogicalModel::build_modelopt_fp8(uint32_t algo_value, const MlxQuantConfig* config) {
  const ModelOptFp8Algo algo = ModelOptFp8Algo(algo_value);
  if (build_index(false) != Status::Ok) return error_.code;
  uint32_t quantized = 0;
  TensorRef first;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      if (!first.present()) first = r;
      size_t base = 0;
      static const char* const kScale[] = {".weight_scale"};
      if (is_companion(r, name, kScale, 1, ".weight")) {  // read with its weight
        if (error_.code != Status::Ok) return error_.code;
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      const bool is_weight = ends_with(name, ".weight", &base);
      const TensorRef sr = is_weight ? find_concat(name.data, base, ".weight_scale") : TensorRef{};
      const TensorInfo p = tensor(r);
      // A module exclude_modules / ignore leaves unquantized (module_lists.h): as stored, whatever
      // its dtype; with its scale, the files contradict the config.
      const conv_detail::ModuleExclusion x =
          is_weight ? conv_detail::module_excluded(config, name.data, base) : conv_detail::ModuleExclusion();
      if (x.excluded) {
        if (sr.present()) return conv_detail::refuse_excluded(*this, r, x.list, x.entry, *config);
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      if (!sr.present()) {
        // No scale: an excluded module (BF16), or an FP8 weight whose scale is missing.
        if (is_weight && (p.dtype() == DType::F8_E4M3 || p.dtype() == DType::F8_E5M2))
          return fail(Status::ConventionMissingCompanion, r, name);
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      if (p.dtype() != DType::F8_E4M3 || p.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      const TensorInfo s = tensor(sr);
      if (!is_float_scale(s.dtype())) return fail(Status::ConventionCompanionShape, sr, s.name);
      const uint64_t rows = w.shape[0], cols = w.shape[1], n = s.element_count();
      uint64_t ss[kMaxLogicalRank] = {};
      const uint32_t srank = s.rank <= kMaxLogicalRank ? s.copy_shape(ss, kMaxLogicalRank) : 0;
      uint64_t want = 1;
      bool fits = false;
      switch (algo) {
        case ModelOptFp8Algo::Tensor:  // one value (a scalar or [1])
          fits = n == 1;
          break;
        case ModelOptFp8Algo::Channel:  // [out] (or [out, 1])
          want = rows;
          fits = n == rows && (srank == 1 || (srank == 2 && ss[1] == 1));
          break;
        default: {  // Block128: [out / 128, 1, in / 128, 1] (or [out / 128, in / 128])
          if (rows % kPbBlock != 0 || cols % kPbBlock != 0) {
            fail(Status::ConventionGroupNotDividing, r, name);
            error_.set_found(rows % kPbBlock != 0 ? rows : cols);
            error_.set_expected(kPbBlock);
            return error_.code;
          }
          const uint64_t gr = rows / kPbBlock, gc = cols / kPbBlock;
          want = gr * gc;
          fits = (srank == 4 && ss[0] == gr && ss[1] == 1 && ss[2] == gc && ss[3] == 1) ||
                 (srank == 2 && ss[0] == gr && ss[1] == gc);
          break;
        }
      }
      if (!fits) {
        fail(Status::ConventionCompanionShape, sr, s.name);
        error_.set_expected(want);
        error_.set_found(n);
        return error_.code;
      }
      // fp8_block: [0, 0] the whole tensor, [1, 0] a row, [128, 128] a block (fp8_scale_spec).
      w.fp8_block[0] = algo == ModelOptFp8Algo::Tensor ? 0 : algo == ModelOptFp8Algo::Channel ? 1 : uint32_t(kPbBlock);
      w.fp8_block[1] = algo == ModelOptFp8Algo::Block128 ? uint32_t(kPbBlock) : 0;
      w.convention = kModelOptNvfp4Convention.id;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.scale_dtype = s.dtype();
      w.fp8_dtype = p.dtype();
      w.format = QuantFormat::Fp8Block;
      w.decodable = true;
      ++quantized;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  if (quantized == 0) {
    static const char kWhat[] = "modelopt FP8 (quant_algo): no F8_E4M3 <m>.weight with its <m>.weight_scale";
    return refuse(Status::QuantizationTensorsAbsent, first, kWhat, sizeof kWhat - 1, nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
