// weightstream — NVIDIA ModelOpt NVFP4 (quant_method "modelopt", quant_algo "NVFP4").
//
// ModelOpt's Hugging Face export (NVIDIA/Model-Optimizer modelopt/torch/export, read by vLLM
// model_executor/layers/quantization/modelopt.py ModelOptNvFp4LinearMethod) stores a quantized
// linear `<m>` as `<m>.weight` U8 [out, in/2] (two E2M1 codes a byte, the even value in the low
// nibble: NVFP4QTensor.quantize packs q[..., 1::2] << 4 | q[..., 0::2]), `<m>.weight_scale`
// F8_E4M3 [out, in/16] (one scale per 16 values, the linear layout; vLLM swizzles it for its
// kernels after loading), `<m>.weight_scale_2` F32 (one value, the per-tensor scale) and
// `<m>.input_scale` F32 (the activations', handed on as a plain tensor). Modules left out
// (hf_quant_config.json / quantization_config `exclude_modules`, e.g. lm_head) have no scales
// and stay plain.
//
// The values are NVFP4QTensor.dequantize's (modelopt/torch/quantization/qtensor/nvfp4_tensor.py):
// per_block_scale = float32(weight_scale) * weight_scale_2, then E2M1[code] * per_block_scale,
// in f32 — MLX's nvfp4 order with its global scale, without MLX's / (448 * 6)
// (DequantSpec::global_scale_is_modelopt; mlx_quants.cpp MlxNvfp4). A weight_scale_2 of zero,
// inf or NaN is refused when the weight decodes (InvalidBlockData at its bytes); E4M3FN NaN
// scales (0x7F / 0xFF) are refused as for every nvfp4 weight.
//
// The same row (one method, "modelopt") decodes ModelOpt's FP8 quant_algos too: its build and
// its weights' spec and parameters go to modelopt_fp8.cpp's rules when the config names one.
#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

// Config.json (or hf_quant_config.json) names modelopt with quant_algo NVFP4 or one of the FP8
// algos (or no quant_algo, and the NVFP4 companion there); else (no quant_method) a
// `.weight_scale_2` names it (NVFP4). The other quant_algos (NVFP4_AWQ, W4A8_AWQ,
// MIXED_PRECISION, ...) are not decoded: refused by name (quant_methods.cpp).
bool modelopt_claims(const LogicalModel& m, const MlxQuantConfig* config) {
  if (config && config->has_method()) {
    if (!method_is(config, "modelopt")) return false;
    if (config->has_algo())
      return !config->algo_truncated() &&
             (config->algo().equals("NVFP4") || modelopt_fp8_algo(config) != ModelOptFp8Algo::None);
    return any_name_ends(m, ".weight_scale_2");
  }
  return any_name_ends(m, ".weight_scale_2");
}

Status modelopt_build(LogicalModel& m, const MlxQuantConfig* config) {
  const ModelOptFp8Algo fp8 = modelopt_fp8_algo(config);
  if (fp8 != ModelOptFp8Algo::None) return m.build_modelopt_fp8(uint32_t(fp8), config);
  return m.build_modelopt_nvfp4(config);
}

void modelopt_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.format == QuantFormat::Fp8Block) return fp8_scale_spec(w, s);
  if (w.params.mode != QuantMode::None) s->global_scale_is_modelopt = true;
}

uint32_t modelopt_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  if (w.format == QuantFormat::Fp8Block) return fp8_scale_parameters(w, out, cap, "modelopt FP8");
  if (w.params.mode == QuantMode::None) return 0;
  return mlx_layout_parameters(w, out, cap, put_parameter(out, cap, 0, "method", "modelopt NVFP4"));
}

const CompanionName kModelOptCompanions[] = {{".weight_scale", ".weight", false}, {".weight_scale_2", ".weight", false}};

}  // namespace

const ConventionDescriptor kModelOptNvfp4Convention = {
    "modelopt", Convention{6}, false, /*rank*/ 6, kNoEntry, nullptr, ConfigRole::Ignored,
    /*data_phase*/ nullptr, kModelOptCompanions, 2, modelopt_build, modelopt_spec, modelopt_parameters,
    modelopt_claims};

Status LogicalModel::build_modelopt_nvfp4(const MlxQuantConfig* config) {
  const bool method_named = method_is(config, "modelopt");
  if (build_index(false) != Status::Ok) return error_.code;
  bool any = false;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (ends_with(name, ".weight_scale_2", &base) || ends_with(name, ".weight_scale", &base)) {
        if (!find_concat(name.data, base, ".weight").present()) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;  // read with its weight
      }
      LogicalWeight w;
      plain_weight(r, &w);
      TensorRef sr, gr;
      if (ends_with(name, ".weight", &base)) {
        sr = find_concat(name.data, base, ".weight_scale");
        gr = find_concat(name.data, base, ".weight_scale_2");
      }
      // A module exclude_modules / ignore leaves unquantized (vLLM modelopt.py is_layer_excluded:
      // module_lists.h): as stored; with its scales, the files contradict the config.
      const conv_detail::ModuleExclusion x =
          ends_with(name, ".weight", &base) ? conv_detail::module_excluded(config, name.data, base) : conv_detail::ModuleExclusion();
      if (x.excluded && (sr.present() || gr.present())) return conv_detail::refuse_excluded(*this, r, x.list, x.entry, *config);
      if (!sr.present() && !gr.present()) {  // not quantized: as stored
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      // One of the two scales without the other: a quantized weight missing a companion.
      if (!sr.present() || !gr.present()) return fail(Status::ConventionMissingCompanion, r, name);
      const TensorInfo p = tensor(r), s = tensor(sr), g = tensor(gr);
      if (p.dtype() != DType::U8 || p.rank == 0 || p.rank > kMaxLogicalRank)
        return fail(Status::ConventionCompanionShape, r, name);
      uint64_t ps[kMaxLogicalRank], ss[kMaxLogicalRank];
      p.copy_shape(ps, kMaxLogicalRank);
      const uint32_t last = p.rank - 1;
      // K = 2 bytes' worth of codes a row, in groups of 16.
      const uint64_t k = ps[last] * 2;  // ps[last] < 2^63: its bytes are in the file
      if (k == 0 || k % 16 != 0) {
        fail(Status::ConventionGroupNotDividing, r, name);
        error_.set_found(k);
        error_.set_expected(16);
        return error_.code;
      }
      if (s.dtype() != DType::F8_E4M3 || s.rank != p.rank) return fail(Status::ConventionCompanionShape, sr, tensor(sr).name);
      s.copy_shape(ss, kMaxLogicalRank);
      for (uint32_t d = 0; d < p.rank; ++d) {
        const uint64_t want = d == last ? k / 16 : ps[d];
        if (ss[d] != want) {
          fail(Status::ConventionCompanionShape, sr, tensor(sr).name);
          error_.set_found(ss[d]);
          error_.set_expected(want);
          return error_.code;
        }
      }
      if (g.dtype() != DType::F32 || g.element_count() != 1) return fail(Status::ConventionCompanionShape, gr, tensor(gr).name);
      w.convention = kModelOptNvfp4Convention.id;
      w.params = QuantParams{QuantMode::Nvfp4, 4, 16};
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.piece[uint32_t(PieceRole::GlobalScale)] = gr;
      w.format = QuantFormat::MlxNvfp4;
      w.decodable = true;
      w.scale_dtype = DType::F8_E4M3;
      w.rank = p.rank;
      for (uint32_t d = 0; d < p.rank; ++d) w.shape[d] = ps[d];
      w.shape[last] = k;
      if (__builtin_mul_overflow(p.element_count(), uint64_t(2), &w.elements)) return fail(Status::ShapeOverflow, r, name);
      if (add_weight(w) != Status::Ok) return error_.code;
      any = true;
    }
  }
  // config.json says modelopt NVFP4, yet no weight has its two scales.
  if (method_named && !any) {
    TensorRef at;
    if (table_count_ && tables_[0].table->count()) at = TensorRef{0, 0};
    static const char kWhy[] =
        "modelopt NVFP4 (config.json quant_method, quant_algo): no <m>.weight with <m>.weight_scale and <m>.weight_scale_2";
    return refuse(Status::ConventionMissingCompanion, at, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
