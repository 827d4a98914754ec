// weightstream — gpt-oss MXFP4 (config.json quant_method "mxfp4"): `<p>_blocks` + `<p>_scales`.
//
// OpenAI's gpt-oss checkpoints on the Hub store each MoE expert projection as two U8 tensors
// (huggingface/transformers integrations/mxfp4.py, Mxfp4GptOssExperts: `gate_up_proj_blocks`
// [E, 2I, H/32, 16] and `gate_up_proj_scales` [E, 2I, H/32]; `down_proj_*` likewise). Every
// other tensor (attention, router, embeddings, lm_head: quantizer_mxfp4.py's
// modules_to_not_convert) is stored as is, BF16, and stays a plain weight here.
//
// transformers dequantizes them in convert_moe_packed_tensors: scales minus 127 as int32, a
// 16-entry E2M1 table (FP4_VALUES: +0, 0.5, 1, 1.5, 2, 3, 4, 6, then the same negated), every
// block byte's low nibble value 2j and high nibble value 2j + 1 of its 32-value row, each
// ldexp'ed by its row's exponent; the [..., G, 32] result viewed as [..., G * 32]. That is MLX's
// mxfp4 arithmetic on the same bytes (E2M1[nibble] * 2^(s - 127), low nibble first, 32 values per
// E8M0 scale: mlx_quants.cpp MlxMxfp4), exact in f32 for every scale below 0xFF (the products
// are powers of two times 2-bit significands, 2^-128 * 0.5 the smallest, a subnormal f32 holds),
// so the weight decodes with QuantFormat::MlxMxfp4 and its SIMD128 and WGSL kernels. A scale of
// 0xFF is where they part (ldexp by 128 against MLX's +inf): the decoder's validation refuses it
// (InvalidBlockData at the scale's byte), as it refuses E8M0 NaN everywhere.
//
// Orientation: the logical weight is `<p>`, [..., G * 32], in the stored order — the rows are
// the output features (2I for gate_up_proj, H for down_proj), the last axis the inputs.
// convert_moe_packed_tensors ends with .transpose(1, 2), so transformers' parameter is this
// tensor with axes 1 and 2 swapped ([E, H, 2I] for gate_up_proj); a transpose is no streaming
// decode, and the rows are the ones gpt-oss's own reference (and vLLM) multiply.
#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

// Config.json names mxfp4; else (no quant_method) a `_blocks` and a `_scales` tensor name it.
bool mxfp4_claims(const LogicalModel& m, const MlxQuantConfig* config) {
  if (config && config->has_method()) return method_is(config, "mxfp4");
  return any_name_ends(m, "_blocks") && any_name_ends(m, "_scales");
}

Status mxfp4_build(LogicalModel& m, const MlxQuantConfig* config) {
  return m.build_mxfp4_blocks(config);
}

uint32_t mxfp4_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  if (w.params.mode == QuantMode::None) return 0;
  return mlx_layout_parameters(w, out, cap, put_parameter(out, cap, 0, "method", "mxfp4 (gpt-oss)"));
}

// The weight `<p>` owns `<p>_blocks` (packed) and `<p>_scales`.
const CompanionName kMxfp4Companions[] = {{"_blocks", "", false}, {"_scales", "", false}};

}  // namespace

const ConventionDescriptor kMxfp4BlocksConvention = {
    "mxfp4", Convention{5}, false, /*rank*/ 5, kNoEntry, nullptr, ConfigRole::Ignored,
    /*data_phase*/ nullptr, kMxfp4Companions, 2, mxfp4_build, nullptr, mxfp4_parameters, mxfp4_claims};

Status LogicalModel::build_mxfp4_blocks(const MlxQuantConfig* config) {
  const bool method_named = method_is(config, "mxfp4");
  if (build_index(false) != Status::Ok) return error_.code;
  if (method_named && conv_detail::refuse_unread_lists(*this, config) != Status::Ok) return error_.code;
  bool any = false;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (ends_with(name, "_scales", &base)) {
        if (!find_concat(name.data, base, "_blocks").present()) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;  // read with its blocks
      }
      LogicalWeight w;
      plain_weight(r, &w);
      if (!ends_with(name, "_blocks", &base)) {
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      // Its module (`<p>` up to the last dot: gpt-oss's `...mlp.experts` for `...experts.down_proj`),
      // which modules_to_not_convert must not leave unquantized (transformers
      // should_convert_module over named_modules(): module_lists.h).
      size_t dot = base;
      while (dot > 0 && name.data[dot - 1] != '.') --dot;
      const conv_detail::ModuleExclusion x =
          dot > 0 ? conv_detail::module_excluded(config, name.data, dot - 1) : conv_detail::ModuleExclusion();
      if (x.excluded) return conv_detail::refuse_excluded(*this, r, x.list, x.entry, *config);
      const TensorRef sr = find_concat(name.data, base, "_scales");
      if (!sr.present()) return fail(Status::ConventionMissingCompanion, r, name);
      // The weight's name `<p>` must not be a tensor's too (two weights of one name).
      if (find_tensor(name.data, base).present()) return fail(Status::DuplicateTensorName, r, name);
      // Blocks: U8 [..., G, 16] (16 bytes = 32 values); scales: U8 [..., G].
      const TensorInfo p = tensor(r), s = tensor(sr);
      if (p.dtype() != DType::U8 || p.rank < 2 || p.rank > kMaxLogicalRank + 1)
        return fail(Status::ConventionCompanionShape, r, name);
      uint64_t ps[kMaxLogicalRank + 1], ss[kMaxLogicalRank + 1];
      p.copy_shape(ps, kMaxLogicalRank + 1);
      if (ps[p.rank - 1] != 16) {
        fail(Status::ConventionCompanionShape, r, name);
        error_.set_found(ps[p.rank - 1]);
        error_.set_expected(16);
        return error_.code;
      }
      if (s.dtype() != DType::U8 || s.rank != p.rank - 1) return fail(Status::ConventionCompanionShape, sr, tensor(sr).name);
      s.copy_shape(ss, kMaxLogicalRank + 1);
      for (uint32_t d = 0; d < s.rank; ++d)
        if (ss[d] != ps[d]) {
          fail(Status::ConventionCompanionShape, sr, tensor(sr).name);
          error_.set_found(ss[d]);
          error_.set_expected(ps[d]);
          return error_.code;
        }
      w.name = StrView{name.data, base};
      w.convention = kMxfp4BlocksConvention.id;
      w.params = QuantParams{QuantMode::Mxfp4, 4, 32};
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.format = QuantFormat::MlxMxfp4;
      w.decodable = true;
      w.scale_dtype = DType::U8;
      w.rank = p.rank - 1;
      for (uint32_t d = 0; d < w.rank; ++d) w.shape[d] = ps[d];
      uint64_t n = 1;
      for (uint32_t d = 0; d + 1 < p.rank; ++d)
        if (__builtin_mul_overflow(n, ps[d], &n)) return fail(Status::ShapeOverflow, r, name);
      if (__builtin_mul_overflow(w.shape[w.rank - 1], uint64_t(32), &w.shape[w.rank - 1]) ||
          __builtin_mul_overflow(n, uint64_t(32), &w.elements))
        return fail(Status::ShapeOverflow, r, name);
      if (add_weight(w) != Status::Ok) return error_.code;
      any = true;
    }
  }
  // config.json says mxfp4, yet no tensor is a `<p>_blocks` with its `<p>_scales`.
  if (method_named && !any) {
    TensorRef at;
    if (table_count_ && tables_[0].table->count()) at = TensorRef{0, 0};
    static const char kWhy[] = "mxfp4 (config.json quant_method): no <p>_blocks tensor with its <p>_scales";
    return refuse(Status::ConventionMissingCompanion, at, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
