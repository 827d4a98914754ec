// weightstream — AWQ checkpoints (quant_method "awq"; AutoAWQ's GEMM exports, and the exllama /
// ipex versions that load the same tensors): `<m>.qweight` + `<m>.qzeros` + `<m>.scales` are the
// weight `<m>.weight`, [out, in], decoded by GPTQ's kernels (QuantFormat::GptqPacked).
//
// Sources (facts, not code):
// - The layout: AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM (buffers qweight int32
//   [in, out / 8], qzeros int32 [in / group, out / 8], scales float16 [in / group, out]; group_size
//   -1 = in; only w_bit 4: "Only 4-bit are supported for now") and its from_linear: the codes of
//   outputs 8c .. 8c + 7 of one input go into word c in AWQ_ORDER = 0,2,4,6,1,3,5,7 (lane j holds
//   output 8c + AWQ_ORDER[j]), the zero points likewise. The values: awq/utils/packing_utils.py
//   dequantize_gemm (unpack_awq, reverse_awq_order with AWQ_REVERSE_ORDER = 0,4,1,5,2,6,3,7, then
//   (iweight - izeros) * scales: no +1, unlike GPTQ v1).
// - The exllama and ipex versions (awq/modules/linear/exllama.py, gemm_ipex.py) hold the GEMM
//   buffers as stored and repack them only after loading (exllama_post_init, ipex_post_init), so
//   a checkpoint saved with version "exllama" or "ipex" is the GEMM layout.
// - GEMV (gemv.py WQLinear_GEMV and its from_linear): qweight int32 [out, in / 8], word c of row
//   o holding inputs 8c + j in lane j (order_map 0..7: natural order, low nibble first) — already
//   a logical row, decoded as stored; qzeros int32 [out, W] with group 8c + j of output o in lane j
//   of word c, and scales float16 [out, 8 W], both padded past the groups (zeros 0), where W =
//   calculate_zeros_width(in, group): ceil(ceil(in / group) / 8) rounded up to a multiple of 1
//   (group >= 128), 2 (64) or 4 (32) — any other group (group_size -1 among them: from_linear
//   passes it unresolved) raises NotImplementedError there, so no checkpoint has it. The values
//   are scale * (q - zero) as GEMM's (from_linear: q = round((W + zero * scale) / scale)). The
//   readers are AutoAWQ's own WQLinear_GEMV (its CUDA gemv kernels; transformers' autoawq
//   backend loads through it, GPTQModel and ipex-llm carry copies); vLLM does not read GEMV:
//   its quantization/awq.py AWQConfig reads no version and AWQLinearMethod.create_weights makes
//   GEMM's parameters (qweight [in, out / 8], qzeros [in / group, out / 8]).
// - gemv_fast and marlin pack otherwise: refused by name, as are
//   transformers' backend "llm-awq" (MIT llm-awq's WQLinear) and zero_point false (AutoAWQ's
//   quantizer then has no zeros and from_linear asserts zeros is not None: no writer).
// - The config: transformers utils/quantization_config.py AwqConfig (bits, group_size,
//   zero_point, version case-insensitive: AWQLinearVersion.from_str lowers it; backend) in
//   config.json; AutoAWQ's older quant_config.json (awq/models/_config.py AwqConfig.to_dict:
//   w_bit, q_group_size, zero_point, version "GEMM"), which mlx_config.cpp reads as bits and
//   group_size.
// - modules_to_not_convert (AwqConfig; AutoAWQ's exclude_layers_to_not_quantize): those modules
//   are saved as plain `<m>.weight` tensors, which the names alone make plain weights here.
// - Orientation: the logical weight is [out, in] (torch.nn.Linear's weight; dequantize_gemm gives
//   [in, out]); the loader gathers each logical row's codes from the stored words
//   (model_stream.cpp transpose_refill, LogicalWeight::awq_packed).
#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr Convention kAwqId{9};
constexpr uint32_t kAwqBits = 4;        // WQLinear_GEMM's only w_bit
constexpr uint32_t kAwqPerWord = 32 / kAwqBits;

// The first `.qweight` with a `.scales` beside it has AWQ's shapes: [in, out / 8] and
// [groups, out] (GPTQ's qweight shares its scales' columns: gptq_convention.cpp).
bool awq_shapes(const LogicalModel& m) {
  uint64_t qs[2], ss[2];
  return first_qweight_shapes(m, qs, ss) && qs[1] != ss[1] && qs[1] <= (~uint64_t(0) >> 3) &&
         qs[1] * kAwqPerWord == ss[1];
}

// config.json (or quant_config.json) names awq; else (no quant_method) the names `.qweight`,
// `.qzeros` and `.scales` with AWQ's GEMM shapes.
bool awq_claims(const LogicalModel& m, const MlxQuantConfig* config) {
  if (config && config->has_method()) return method_is(config, "awq");
  return any_name_ends(m, ".qweight") && any_name_ends(m, ".qzeros") && any_name_ends(m, ".scales") && awq_shapes(m);
}

Status awq_build(LogicalModel& m, const MlxQuantConfig* config) { return m.build_awq(config); }

void awq_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.format != QuantFormat::GptqPacked || (!w.awq_packed && !w.awq_gemv_zero_words)) return;
  s->row_elems = w.shape[1];
  s->gptq_groups = w.gptq_groups;
  s->gptq_zero_add = 0;  // dequantize_gemm: iweight - izeros
  s->gptq_awq_zeros = w.awq_packed;  // GEMM's interleaved zeros
  s->gptq_zero_words = w.awq_gemv_zero_words;  // GEMV's row-major, padded zeros and scales
}

uint32_t awq_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  if (w.format != QuantFormat::GptqPacked) return 0;
  uint32_t n = put_parameter(out, cap, 0, "method", "awq");
  n = put_parameter(out, cap, n, "bits", nullptr, w.params.bits);
  n = put_parameter(out, cap, n, "group", nullptr, w.params.group);
  n = put_parameter(out, cap, n, "version", w.awq_gemv_zero_words ? "gemv" : "gemm");
  return put_parameter(out, cap, n, "scale_dtype", dtype_name(w.scale_dtype));
}

// The weight `<m>.weight` owns `<m>.qweight` (packed), `<m>.scales` and `<m>.qzeros` (the Biases piece,
// as GPTQ's).
const CompanionName kAwqCompanions[] = {
    {".qweight", ".weight", false}, {".qzeros", ".weight", false}, {".scales", ".weight", false}};

// `s` equals `lower` ignoring ASCII case (AWQLinearVersion.from_str lowers the version).
bool equals_lower(StrView s, const char* lower) {
  size_t i = 0;
  for (; i < s.size && lower[i]; ++i) {
    char c = s.data[i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return i == s.size && lower[i] == '\0';
}

// AutoAWQ gemv.py calculate_zeros_width's size_multiplier (0: a group it raises
// NotImplementedError for, group_size -1 among them).
uint64_t gemv_multiple(uint64_t group) { return group >= 128 ? 1 : group == 64 ? 2 : group == 32 ? 4 : 0; }

// calculate_zeros_width: the int32 words of a GEMV qzeros row, for a group gemv_multiple takes.
uint64_t gemv_zero_words(uint64_t in, uint64_t group) {
  const uint64_t multiple = gemv_multiple(group), base = (in / group + 7) / 8;
  return (base + multiple - 1) / multiple * multiple;
}

// The fixes in AWQ's words (AutoAWQ's WQLinear_GEMM / _GEMV pack 4 bits: w_bit).
const char* awq_hint(Status s) {
  if (s != Status::ConventionBitsNotAllowed) return nullptr;
  return "AutoAWQ's GEMM and GEMV layouts pack 4 bits: check bits (w_bit) in the quantization config.";
}

}  // namespace

const ConventionDescriptor kAwqConvention = {
    "awq", kAwqId, false, /*rank*/ 9, kNoEntry, nullptr, ConfigRole::Ignored,
    /*data_phase*/ nullptr, kAwqCompanions, 3, awq_build, awq_spec, awq_parameters, awq_claims,
    &kQweightRenamed, /*data_warning*/ nullptr, awq_hint};

Status LogicalModel::build_awq(const MlxQuantConfig* config) {
  if (build_index(false) != Status::Ok) return error_.code;
  names_used_ = 0;  // a rebuild composes its names again
  const bool named = method_is(config, "awq");
  TensorRef first;
  if (table_count_ && tables_[0].table->count()) first = TensorRef{0, 0};
  if (named) {
    // What the GEMM layout is not: refused by name before any tensor is read as it.
    const StrView v = config->awq_version();
    const bool gemm = v.size == 0 || equals_lower(v, "gemm") || equals_lower(v, "exllama") || equals_lower(v, "ipex");
    if (config->awq_version_truncated() || (!gemm && !equals_lower(v, "gemv"))) {
      static const char kWhy[] = "awq version ";
      char text[48];
      size_t n = 0;
      for (const char* p = kWhy; *p; ++p) text[n++] = *p;
      for (size_t i = 0; i < v.size && n < sizeof text - 1; ++i) text[n++] = v.data[i];
      return refuse(Status::QuantizationUnsupported, first, text, n,
                    " (the GEMM layout, exllama/ipex which store it, and GEMV are decoded)");
    }
    if (config->awq_llm_backend()) {
      static const char kWhy[] = "awq backend llm-awq (MIT llm-awq's packing; AutoAWQ's GEMM layout is decoded)";
      return refuse(Status::QuantizationUnsupported, first, kWhy, sizeof kWhy - 1, nullptr);
    }
    if (config->zero_point_false()) {
      static const char kWhy[] = "awq zero_point false (AutoAWQ writes no GEMM checkpoint without zero points)";
      return refuse(Status::QuantizationUnsupported, first, kWhy, sizeof kWhy - 1, nullptr);
    }
    if (conv_detail::refuse_unread_lists(*this, config) != Status::Ok) return error_.code;
  }
  const uint32_t stated_bits = named ? config->defaults().bits : 0;  // 0: not stated (4)
  const uint32_t stated_group = named ? config->defaults().group : 0;  // 0: -1 or not stated
  const bool gemv = named && equals_lower(config->awq_version(), "gemv");
  if (gemv && gemv_multiple(stated_group) == 0) {
    // from_linear's calculate_zeros_width raises for it: no writer made such a checkpoint.
    static const char kWhy[] = "awq gemv group_size not 32, 64 or >= 128 (calculate_zeros_width takes no other)";
    return refuse(Status::QuantizationUnsupported, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  bool any = false;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (ends_with(name, ".qzeros", &base) || ends_with(name, ".scales", &base)) {
        if (!find_concat(name.data, base, ".qweight").present()) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;  // read with its qweight
      }
      LogicalWeight w;
      plain_weight(r, &w);
      if (!ends_with(name, ".qweight", &base)) {
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      // A module modules_to_not_convert leaves unquantized (transformers should_convert_module, vLLM
      // awq.py is_layer_skipped by substring: module_lists.h) has no qweight.
      const conv_detail::ModuleExclusion x = conv_detail::module_excluded(config, name.data, base);
      if (x.excluded) return conv_detail::refuse_excluded(*this, r, x.list, x.entry, *config);
      const TensorRef zr = find_concat(name.data, base, ".qzeros"), sr = find_concat(name.data, base, ".scales");
      if (!zr.present() || !sr.present()) return fail(Status::ConventionMissingCompanion, r, name);
      if (stated_bits != 0 && stated_bits != kAwqBits) {
        fail(Status::ConventionBitsNotAllowed, r, name);
        error_.set_found(stated_bits);
        return error_.code;
      }
      // The weight's name `<m>.weight` must not be a tensor's too.
      if (find_concat(name.data, base, ".weight").present())
        return refuse(Status::DuplicateTensorName, r, name.data, base, ".weight is stored too: it names this qweight's weight");
      const TensorInfo q = tensor(r), s = tensor(sr), z = tensor(zr);
      uint64_t qs[2] = {}, ss[2] = {};
      if ((q.dtype() != DType::I32 && q.dtype() != DType::U32) || q.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      q.copy_shape(qs, 2);
      if (!is_float_scale(s.dtype()) || s.rank != 2) return fail(Status::ConventionCompanionShape, sr, s.name);
      s.copy_shape(ss, 2);
      uint64_t in = 0, out = 0, groups = 0, group = 0, zero_words = 0;
      if (gemv) {
        // WQLinear_GEMV: qweight [out, in / 8] (out a multiple of 8, asserted in __init__), the
        // group stated (checked above), in a multiple of it (asserted), the companions padded.
        out = qs[0];
        in = qs[1] * kAwqPerWord;
        if (out == 0 || out % kAwqPerWord != 0 || qs[1] == 0 || qs[1] > (~uint64_t(0) >> 4)) {
          fail(Status::ConventionCompanionShape, r, name);
          error_.set_found(out);
          return error_.code;
        }
        if (in % stated_group != 0) return fail(Status::ConventionGroupNotDividing, sr, s.name);
        group = stated_group;
        groups = in / group;
        zero_words = gemv_zero_words(in, group);
        if (groups > 0xFFFFFFFFu || zero_words > 0xFFFFFFFFu / kAwqPerWord)
          return fail(Status::ConventionCompanionShape, sr, s.name);
        if (gptq_shape(sr, true, out, zero_words * kAwqPerWord, 2) != Status::Ok) return error_.code;
        if (gptq_shape(zr, z.dtype() == DType::I32 || z.dtype() == DType::U32, out, zero_words, 2) != Status::Ok)
          return error_.code;
      } else {
        // out: the scales' columns (the one unpacked dimension); qweight holds out / 8 words a row.
        in = qs[0];
        out = ss[1];
        if (out == 0 || out % kAwqPerWord != 0) return fail(Status::ConventionCompanionShape, sr, s.name);
        if (qs[1] != out / kAwqPerWord) {
          fail(Status::ConventionCompanionShape, r, name);
          error_.set_found(qs[1]);
          error_.set_expected(out / kAwqPerWord);
          return error_.code;
      }
      // The groups: in / group for a stated group_size (WQLinear_GEMM asserts in % group == 0),
      // else the scales' rows (one: group_size -1).
      if (stated_group && (in == 0 || in % stated_group != 0)) return fail(Status::ConventionGroupNotDividing, sr, s.name);
      groups = stated_group ? in / stated_group : ss[0];
      if (groups == 0 || groups > 0xFFFFFFFFu) return fail(Status::ConventionCompanionShape, sr, s.name);
      if (gptq_shape(sr, true, groups, out, 2) != Status::Ok) return error_.code;
      if (gptq_shape(zr, z.dtype() == DType::I32 || z.dtype() == DType::U32, groups, out / kAwqPerWord, 2) != Status::Ok)
        return error_.code;
      group = stated_group ? stated_group : (in % groups == 0 ? in / groups : 0);
      // GptqPacked decodes whole words of a logical row: in must be a multiple of 8 too.
      if (group == 0 || in % kAwqPerWord != 0) return fail(Status::ConventionGroupNotDividing, sr, s.name);
      }
      if (compose_name(r, base, kQweightRenamed.weight_suffix, &w.name) != Status::Ok) return error_.code;
      w.convention = kAwqId;
      w.params = QuantParams{QuantMode::Affine, kAwqBits, uint32_t(group > 0xFFFFFFFFu ? 0 : group)};
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.piece[uint32_t(PieceRole::Biases)] = zr;
      w.format = QuantFormat::GptqPacked;
      w.decodable = true;
      w.scale_dtype = s.dtype();
      w.gptq_groups = uint32_t(groups);
      w.gptq_zero_add = 0;
      w.awq_packed = !gemv;
      w.awq_gemv_zero_words = uint32_t(zero_words);
      w.rank = 2;
      w.shape[0] = out;
      w.shape[1] = in;
      if (__builtin_mul_overflow(out, in, &w.elements)) return fail(Status::ShapeOverflow, r, name);
      if (add_weight(w) != Status::Ok) return error_.code;
      any = true;
    }
  }
  if (named && !any) {
    static const char kWhy[] = "awq (quant_method): no <m>.qweight with its <m>.qzeros and <m>.scales";
    return refuse(Status::QuantizationTensorsAbsent, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
