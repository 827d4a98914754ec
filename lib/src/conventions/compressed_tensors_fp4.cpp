// weightstream — compressed-tensors' FP4 formats, `nvfp4-pack-quantized` and `mxfp4-pack-quantized`
// (the compressed-tensors row, compressed_tensors_convention.cpp; this file its FP4 build).
//
// Sources (facts, not code):
// - neuralmagic/compressed-tensors src/compressed_tensors/compressors/quantized_compressors/
//   fp4_quantized.py (at 52792be) and vllm-project/compressed-tensors src/compressed_tensors/
//   compressors/nvfp4/base.py NVFP4PackedCompressor, nvfp4/helpers.py pack_fp4_to_uint8 /
//   unpack_fp4_from_uint8 (at ac8e2ba): `<m>.weight_packed` U8 [out, in / 2], two E2M1 codes a
//   byte, the first (even) value in the low nibble (`indices[:, 0] | (indices[:, 1] << 4)`), code
//   bit 3 the sign; `<m>.weight_scale` F8_E4M3 [out, in / 16] (scale_dtype's default
//   float8_e4m3fn); `<m>.weight_global_scale` F32 [1] (quantization/lifecycle/initialize.py
//   registers it for the tensor_group strategy; utils/helpers.py generate_gparam: 448 * 6 / amax);
//   `<m>.input_global_scale` F32 [1], the activations' (a plain tensor here, as vLLM's
//   compressed_tensors_w4a4_nvfp4.py loads it beside the weight).
// - decompress: unpack_fp4_from_uint8 (E2M1 values, exact in bf16), then dequantize(x_q, scale,
//   global_scale, dtype=bfloat16), which infers the group of 16 from the scale's shape; its
//   _dequantize (quantization/lifecycle/forward.py; forward_helpers.py upstream now) computes
//   scale = f32(weight_scale) / weight_global_scale and x_q * scale, each rounded once in f32 (the
//   newer decompress casts the E4M3 scale to bf16 first: exact, the same f32), and casts the result
//   to bfloat16. The f32 output here is that arithmetic before the cast (DequantSpec::
//   global_scale_divides, the MlxNvfp4 kernels); the bf16 output is upstream's bit for bit. vLLM's
//   kernels multiply by 1 / weight_global_scale instead (an alpha): not what compressed-tensors'
//   decompressor returns, so not followed.
// - mxfp4-pack-quantized (vllm-project/compressed-tensors compressors/mxfp4/base.py
//   MXFP4PackedCompressor, since 717c24d "Add MXFP4 decompression support", 2026-04; 52792be's
//   alias of the nvfp4 compressor read a weight_global_scale MXFP4 files lack): the same packing,
//   `<m>.weight_scale` U8 [out, in / 32] holding E8M0 exponents (compressors/mx_utils.py
//   decompress_mx_scale: 2 ** (e - 127) as bfloat16), no global scale; x_q * scale in bfloat16 is
//   exact (E2M1's two significant bits times a power of two, within bf16's range) and equals MLX's
//   mxfp4 arithmetic, E2M1 * e8m0(s) with 0 -> 2^-127 (QuantFormat::MlxMxfp4). An exponent of 255
//   (2^128 = inf upstream; no scale compress_mx_scale makes) is refused as every E8M0 NaN is, with
//   validate (InvalidBlockData at its byte).
// Refused by name (QuantizationUnsupported): config_groups weights other than 4-bit float, a
// group_size other than the format's (16, 32), asymmetric weights (calculate_qparams raises for
// FP4), and a weight_zero_point, weight_g_idx or weight_shape beside an FP4 weight (no FP4
// compressor writes them); for mxfp4, a weight_global_scale. Malformed (exact statuses): a packed
// tensor not U8 [out, bytes] (ConventionCompanionShape), a row of values not a multiple of the
// group (ConventionGroupNotDividing at the packed tensor), a weight_scale of another dtype or
// shape (ConventionCompanionShape at it, found / expected), a missing weight_scale or global
// scale (ConventionMissingCompanion), a global scale not one F32 (ConventionCompanionShape); a
// global scale of zero, inf or NaN is InvalidBlockData at its bytes when the weight decodes.
// Without config.json, `.weight_packed` beside `.weight_global_scale` is nvfp4-pack-quantized:
// its parameters follow from the dtypes and shapes.
#include <string.h>

#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr Convention kCtId{7};
constexpr uint8_t kNvfp4 = 4;  // LogicalWeight::ct_format (mxfp4: 5)

}  // namespace

Status LogicalModel::build_ct_fp4(const MlxQuantConfig* config, uint8_t kind) {
  TensorRef first;
  if (table_count_ && tables_[0].table->count()) first = TensorRef{0, 0};
  const bool nv = kind == kNvfp4;
  const uint32_t group = nv ? 16 : 32;
  if (config && config->ct_invalid()) {
    static const char kWhy[] = "config_groups weights (config.json): num_bits, group_size, strategy or symmetric of the wrong type";
    return refuse(Status::ConfigInvalidQuantization, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  if (config) {
    const MlxQuantConfig::CtWeights& a = config->ct_weights();
    const char* unsupported =
        config->ct_groups_differ() ? "compressed-tensors config_groups with different weights arguments"
        : !a.is_float || a.num_bits != 4
            ? (nv ? "compressed-tensors nvfp4-pack-quantized weights other than 4-bit float"
                  : "compressed-tensors mxfp4-pack-quantized weights other than 4-bit float")
        : a.group_size != 0 && a.group_size != group
            ? (nv ? "compressed-tensors nvfp4-pack-quantized group_size other than 16"
                  : "compressed-tensors mxfp4-pack-quantized group_size other than 32")
        : !a.symmetric ? "compressed-tensors FP4 asymmetric weights"
                       : nullptr;
    if (unsupported) return refuse(Status::QuantizationUnsupported, first, unsupported, strlen(unsupported), " (config.json)");
  }
  static const char* const kCompanions[] = {".weight_scale", ".weight_global_scale"};
  uint32_t quantized = 0;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (is_companion(r, name, kCompanions, 2, ".weight_packed")) {  // read with its weight
        if (error_.code != Status::Ok) return error_.code;
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      if (!ends_with(name, ".weight_packed", &base)) {  // input_global_scale, norms, `ignore`d
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      if (find_concat(name.data, base, ".weight").present()) return fail(Status::DuplicateTensorName, r, name);
      // A module the config's `ignore` or targets leave unquantized, stored packed: the files
      // contradict the config (module_lists.h, as the pack-quantized build checks it).
      if (config) {
        MlxQuantConfig::CtWeights args;
        conv_detail::CtModuleScheme scheme;
        if (!conv_detail::ct_module_weights(*config, name.data, base, &args, &scheme))
          return conv_detail::ct_refuse_unquantized(*this, r, *config, scheme);
      }
      const TensorRef sr = find_concat(name.data, base, ".weight_scale");
      const TensorRef gr = find_concat(name.data, base, ".weight_global_scale");
      // Parameters no FP4 compressor writes (pack-quantized's, and mxfp4's absent global scale).
      static const char* const kForeign[] = {".weight_zero_point", ".weight_g_idx", ".weight_shape"};
      static const char* const kForeignWhy[] = {"compressed-tensors FP4 weight with a weight_zero_point",
                                                "compressed-tensors FP4 weight with a weight_g_idx",
                                                "compressed-tensors FP4 weight with a weight_shape"};
      for (size_t k = 0; k < 3; ++k) {
        const TensorRef x = find_concat(name.data, base, kForeign[k]);
        if (x.present()) return refuse(Status::QuantizationUnsupported, x, kForeignWhy[k], strlen(kForeignWhy[k]), nullptr);
      }
      if (!nv && gr.present()) {
        static const char kWhy[] = "compressed-tensors mxfp4-pack-quantized weight with a weight_global_scale";
        return refuse(Status::QuantizationUnsupported, gr, kWhy, sizeof kWhy - 1, nullptr);
      }
      if (!sr.present() || (nv && !gr.present())) return fail(Status::ConventionMissingCompanion, r, name);
      const TensorInfo p = tensor(r), s = tensor(sr);
      uint64_t ps[2] = {}, ss[2] = {};
      if (p.dtype() != DType::U8 || p.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      p.copy_shape(ps, 2);
      const uint64_t rows = ps[0], cols = ps[1] * 2;  // ps[1] < 2^63: its bytes are in the file
      if (cols == 0 || cols % group != 0) {
        fail(Status::ConventionGroupNotDividing, r, name);
        error_.set_found(cols);
        error_.set_expected(group);
        return error_.code;
      }
      // The scale grid: one scale a group of a row, of the format's dtype.
      if (s.dtype() != (nv ? DType::F8_E4M3 : DType::U8) || s.rank != 2) return fail(Status::ConventionCompanionShape, sr, s.name);
      s.copy_shape(ss, 2);
      for (uint32_t d = 0; d < 2; ++d) {
        const uint64_t want = d == 0 ? rows : cols / group;
        if (ss[d] == want) continue;
        fail(Status::ConventionCompanionShape, sr, s.name);
        error_.set_found(ss[d]);
        error_.set_expected(want);
        return error_.code;
      }
      if (nv) {
        const TensorInfo g = tensor(gr);
        if (g.dtype() != DType::F32 || g.element_count() != 1 || g.rank > 1) {
          fail(Status::ConventionCompanionShape, gr, g.name);
          error_.set_found(g.element_count());
          error_.set_expected(1);
          return error_.code;
        }
        w.piece[uint32_t(PieceRole::GlobalScale)] = gr;
      }
      w.name = StrView{name.data, base + 7};  // `<m>.weight`
      w.convention = kCtId;
      w.ct_format = kind;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.params = nv ? QuantParams{QuantMode::Nvfp4, 4, 16} : QuantParams{QuantMode::Mxfp4, 4, 32};
      w.format = nv ? QuantFormat::MlxNvfp4 : QuantFormat::MlxMxfp4;
      w.scale_dtype = s.dtype();
      w.decodable = true;
      w.rank = 2;
      w.shape[0] = rows;
      w.shape[1] = cols;
      if (__builtin_mul_overflow(rows, cols, &w.elements)) return fail(Status::ShapeOverflow, r, name);
      ++quantized;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  if (quantized == 0) {
    const char* why = nv ? "compressed-tensors nvfp4-pack-quantized (config.json): no <m>.weight_packed tensor"
                         : "compressed-tensors mxfp4-pack-quantized (config.json): no <m>.weight_packed tensor";
    return refuse(Status::QuantizationTensorsAbsent, first, why, strlen(why), nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
