// weightstream — GPTQ checkpoints (quant_method "gptq"; AutoGPTQ, GPTQModel, optimum exports):
// `<m>.qweight` + `<m>.qzeros` + `<m>.scales` (+ `<m>.g_idx`) are the weight `<m>`, [out, in].
//
// Sources (facts, not code):
// - The layout: AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py QuantLinear (buffers
//   qweight int32 [in * bits / 32, out], qzeros int32 [ceil(in / group), out * bits / 32],
//   scales float16 [ceil(in / group), out], g_idx int32 [in]; group_size -1 = in) and its `pack`;
//   GPTQModel gptqmodel/nn_modules/qlinear/__init__.py PackableQuantLinear (the same buffers and
//   pack); `checkpoint_format` "gptq" (v1: zero points stored minus one) or "gptq_v2"
//   (gptqmodel/quantization/config.py FORMAT). The packing and the values: lib/src/kernels/gptq_packed.h.
// - The reader: vLLM model_executor/layers/quantization/gptq.py GPTQConfig (bits, group_size,
//   desc_act, checkpoint_format; quantize_config.json) and GPTQLinearMethod.create_weights (the
//   same shapes, qweight packed along the input dimension).
// - Orientation: the logical weight is [out, in] (torch.nn.Linear's weight, what
//   dequantize_weight().T gives in GPTQModel's TorchQuantLinear); the stored qweight is [in, out]
//   packed, so the loader hands the decoder qweight's words down its columns (model_stream.cpp).
// - Bits 2, 3, 4 and 8; 3-bit codes are packed 32 to 3 words (qlinear_cuda_old.py pack's bits
//   == 3 branch: codes straddle words), so in and out are multiples of 32 there, qweight's rows
//   in * 3 / 32 and qzeros' columns out * 3 / 32 (lib/src/kernels/gptq_packed.h). Without a
//   config the bits follow from qzeros' width (out * bits / 32) and the format is v1, vLLM's
//   default.
// - GPTQModel's `dynamic` per-module rules (gptqmodel/quantization/config.py
//   QuantizeConfig.dynamic), applied as vLLM model_executor/layers/quantization/utils/
//   gptq_utils.py get_dynamic_override applies them: for the module `<m>`, the first rule in
//   document order whose regex re.match-es `<m>` decides — "-:" leaves it unquantized (so a
//   `<m>.qweight` contradicts the config: ConventionExcludedQuantized), "+:" or a bare key
//   replaces the bits / group_size it states. A regex outside module_regex.h's subset is refused
//   by name (QuantizationUnsupported) rather than guessed.
// - The logical weight is named `<m>.weight`, the parameter GPTQModel's dequantize gives and
//   transformers loads (composed in the model's name storage: no header string spells it).
#include <string.h>

#include "../kernels/gptq_packed.h"
#include "convention_descriptor.h"
#include "module_regex.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr Convention kGptqId{8};

// The first `.qweight`'s own shape tells GPTQ ([in * bits / 32, out]: its columns are its scales'
// columns) from AWQ ([in, out * bits / 32]).
bool gptq_shapes(const LogicalModel& m) {
  uint64_t qs[2], ss[2];
  return first_qweight_shapes(m, qs, ss) && qs[1] == ss[1];
}

// config.json (or quantize_config.json) names gptq; else (no quant_method) the names `.qweight`,
// `.qzeros` and `.scales` with GPTQ's shapes.
bool gptq_claims(const LogicalModel& m, const MlxQuantConfig* config) {
  if (config && config->has_method()) return method_is(config, "gptq");
  return any_name_ends(m, ".qweight") && any_name_ends(m, ".qzeros") && any_name_ends(m, ".scales") && gptq_shapes(m);
}

Status gptq_build(LogicalModel& m, const MlxQuantConfig* config) { return m.build_gptq(config); }

// "<head><mid>): <regex>" into buf (truncated to cap - 1), its length: a refusal naming a rule.
size_t rule_text(char* buf, size_t cap, const char* head, const char* mid, StrView re) {
  size_t n = 0;
  auto put = [&](const char* p, size_t k) {
    const size_t room = cap - 1 - n;
    memcpy(buf + n, p, k < room ? k : room);
    n += k < room ? k : room;
  };
  put(head, strlen(head));
  put(mid, strlen(mid));
  put("): ", 3);
  put(re.data, re.size);
  buf[n] = '\0';
  return n;
}

void gptq_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.format != QuantFormat::GptqPacked) return;
  s->row_elems = w.shape[1];
  s->gptq_groups = w.gptq_groups;
  s->gptq_zero_add = w.gptq_zero_add;
}

uint32_t gptq_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  if (w.format != QuantFormat::GptqPacked) return 0;
  uint32_t n = put_parameter(out, cap, 0, "method", "gptq");
  n = put_parameter(out, cap, n, "bits", nullptr, w.params.bits);
  n = put_parameter(out, cap, n, "group", nullptr, w.params.group);
  n = put_parameter(out, cap, n, "checkpoint_format", w.gptq_zero_add ? "gptq" : "gptq_v2");
  n = put_parameter(out, cap, n, "g_idx", w.ref(PieceRole::GlobalScale).present() ? "stored" : "none");
  return put_parameter(out, cap, n, "scale_dtype", dtype_name(w.scale_dtype));
}

// v1's zero spill (warning.h GptqZeroSpill): a v1 weight's qzeros (the Biases piece), block by
// block (a word; 3 words at 3 bits), each all-ones lane counted. gptq_v2 (zero_add 0) stores a
// zero point of 0 as 0: nothing to warn of.
bool gptq_warn_scans(const LogicalWeight& w, PieceRole role, uint32_t* unit) {
  if (w.format != QuantFormat::GptqPacked || w.gptq_zero_add == 0 || role != PieceRole::Biases) return false;
  *unit = 4 * kernels::gptq_block_words(w.params.bits);
  return true;
}

uint32_t gptq_warn_hits(const LogicalWeight& w, const uint8_t* unit) {
  return kernels::gptq_all_ones_lanes(unit, w.params.bits);
}

const ConventionDataWarning kGptqDataWarning = {WarningCode::GptqZeroSpill, gptq_warn_scans, gptq_warn_hits};

// The weight `<m>.weight` owns `<m>.qweight` (packed), `<m>.scales`, `<m>.qzeros` (the Biases
// piece) and `<m>.g_idx` (the GlobalScale piece: the roles are shared by every convention).
const CompanionName kGptqCompanions[] = {{".qweight", ".weight", false},
                                         {".qzeros", ".weight", false},
                                         {".scales", ".weight", false},
                                         {".g_idx", ".weight", false}};

// The fixes in GPTQ's words (AutoGPTQ / GPTQModel QuantLinear: bits 2, 3, 4, 8).
const char* gptq_hint(Status s) {
  switch (s) {
    case Status::ConventionBitsNotAllowed:
      return "GPTQ packs 2, 3, 4 or 8 bits (AutoGPTQ, GPTQModel and vLLM read no other): check bits in the "
             "quantization config, or the dynamic rule that matches this module.";
    case Status::ConventionUnknownParams:
      return "Give the model's config.json or quantize_config.json (its bits): the qzeros' width gives no GPTQ "
             "bits (2, 3, 4 or 8) here.";
    default: return nullptr;
  }
}

}  // namespace

const ConventionDescriptor kGptqConvention = {
    "gptq", kGptqId, false, /*rank*/ 8, kNoEntry, nullptr, ConfigRole::Ignored,
    /*data_phase*/ nullptr, kGptqCompanions, 4, gptq_build, gptq_spec, gptq_parameters, gptq_claims,
    &kQweightRenamed, &kGptqDataWarning, gptq_hint};

// A companion's shape check: [rows, cols] of `dtype` (any of `dtypes` when several are allowed).
Status LogicalModel::gptq_shape(TensorRef r, bool dtype_ok, uint64_t rows, uint64_t cols, uint32_t rank) {
  const TensorInfo c = tensor(r);
  uint64_t s[2] = {};
  if (!dtype_ok || c.rank != rank) return fail(Status::ConventionCompanionShape, r, c.name);
  c.copy_shape(s, 2);
  const uint64_t want[2] = {rows, cols};
  for (uint32_t d = 0; d < rank; ++d)
    if (s[d] != want[d]) {
      fail(Status::ConventionCompanionShape, r, c.name);
      error_.set_found(s[d]);
      error_.set_expected(want[d]);
      return error_.code;
    }
  return Status::Ok;
}

Status LogicalModel::build_gptq(const MlxQuantConfig* config) {
  if (build_index(false) != Status::Ok) return error_.code;
  names_used_ = 0;  // a rebuild composes its names again
  const bool named = method_is(config, "gptq");
  const uint32_t stated_bits = named ? config->defaults().bits : 0;
  const uint32_t stated_group = named ? config->defaults().group : 0;  // 0: -1 or not stated
  const uint8_t zero_add = named && config->gptq_v2() ? 0 : 1;
  const uint32_t rules = named ? config->dynamic_count() : 0;
  for (uint32_t k = 0; k < rules; ++k) {
    const StrView re = config->dynamic_pattern(k);
    if (const char* why = conv_detail::regex_unsupported(re.data, re.size)) {
      TensorRef at;
      if (table_count_ && tables_[0].table->count()) at = TensorRef{0, 0};
      char text[200];
      const size_t n = rule_text(text, sizeof text, "gptq dynamic: regex not read (", why, re);
      return refuse(Status::QuantizationUnsupported, at, text, n, nullptr);
    }
  }
  bool any = false;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (ends_with(name, ".qzeros", &base) || ends_with(name, ".scales", &base) || ends_with(name, ".g_idx", &base)) {
        if (!find_concat(name.data, base, ".qweight").present()) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;  // read with its qweight
      }
      LogicalWeight w;
      plain_weight(r, &w);
      if (!ends_with(name, ".qweight", &base)) {
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      const TensorRef zr = find_concat(name.data, base, ".qzeros"), sr = find_concat(name.data, base, ".scales");
      const TensorRef gr = find_concat(name.data, base, ".g_idx");
      if (!zr.present() || !sr.present()) return fail(Status::ConventionMissingCompanion, r, name);
      // The weight's name `<m>.weight` must not be a tensor's too.
      if (find_concat(name.data, base, ".weight").present())
        return refuse(Status::DuplicateTensorName, r, name.data, base, ".weight is stored too: it names this qweight's weight");
      // GPTQModel's dynamic: the first rule matching the module decides.
      uint32_t rule_bits = 0, rule_group = 0;
      for (uint32_t k = 0; k < rules; ++k) {
        const StrView re = config->dynamic_pattern(k);
        if (!conv_detail::regex_match(re.data, re.size, name.data, base)) continue;
        if (config->dynamic_excludes(k)) {
          char text[200];
          const size_t n = rule_text(text, sizeof text, "gptq dynamic: quantized, yet a rule leaves it unquantized (",
                                     "-:", re);
          return refuse(Status::ConventionExcludedQuantized, r, text, n, nullptr);
        }
        rule_bits = config->dynamic_params(k).bits;
        rule_group = config->dynamic_params(k).group;
        break;
      }
      // qweight int32 [in * bits / 32, out]: out is its columns.
      const TensorInfo q = tensor(r), s = tensor(sr), z = tensor(zr);
      uint64_t qs[2] = {}, ss[2] = {}, zs[2] = {};
      if ((q.dtype() != DType::I32 && q.dtype() != DType::U32) || q.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      q.copy_shape(qs, 2);
      if (!is_float_scale(s.dtype()) || s.rank != 2) return fail(Status::ConventionCompanionShape, sr, s.name);
      s.copy_shape(ss, 2);
      const uint64_t out = qs[1];
      // Bits: stated, else from qzeros' width (out * bits / 32 words a group).
      uint32_t bits = rule_bits ? rule_bits : stated_bits;
      if (bits == 0) {
        if (z.rank == 2 && out != 0) {
          z.copy_shape(zs, 2);
          if ((zs[1] * 32) % out == 0) bits = uint32_t((zs[1] * 32) / out);
        }
        if (bits == 0) return fail(Status::ConventionUnknownParams, zr, z.name);
      }
      if (bits != 2 && bits != 3 && bits != 4 && bits != 8) {
        fail(Status::ConventionBitsNotAllowed, r, name);
        error_.set_found(bits);
        return error_.code;
      }
      // A block: `bw` words of `per` codes (one word of 32 / bits; 3 words of 32 for 3 bits).
      const uint32_t bw = bits == 3 ? 3 : 1, per = bits == 3 ? 32 : 32 / bits;
      if (out % per != 0) return fail(Status::ConventionCompanionShape, r, name);  // qzeros pack the outputs
      // in: qweight's rows * 32 / bits (whole blocks); g_idx, when stored, has one entry an input.
      uint64_t in = 0;
      if (__builtin_mul_overflow(qs[0] / bw, uint64_t(per), &in)) return fail(Status::ShapeOverflow, r, name);
      const bool whole = qs[0] % bw == 0;
      if (gr.present()) {
        const TensorInfo g = tensor(gr);
        uint64_t gs[2] = {};
        if (g.dtype() != DType::I32 || g.rank != 1) return fail(Status::ConventionCompanionShape, gr, g.name);
        g.copy_shape(gs, 1);
        if (gs[0] != in || !whole) {
          fail(Status::ConventionCompanionShape, r, name);
          error_.set_found(qs[0]);
          error_.set_expected(gs[0] / per * bw);
          return error_.code;
        }
      }
      if (!whole) {  // 3 bits: rows of qweight not whole 3-word blocks
        fail(Status::ConventionCompanionShape, r, name);
        error_.set_found(qs[0]);
        return error_.code;
      }
      // The groups: ceil(in / group) for a stated group_size (AutoGPTQ's QuantLinear buffers),
      // else the scales' rows (one: group_size -1).
      const uint32_t want_group = rule_group ? rule_group : stated_group;
      const uint64_t groups = want_group ? (in + want_group - 1) / want_group : ss[0];
      if (groups == 0 || groups > 0xFFFFFFFFu) return fail(Status::ConventionCompanionShape, sr, s.name);
      if (gptq_shape(sr, true, groups, out, 2) != Status::Ok) return error_.code;
      if (gptq_shape(zr, z.dtype() == DType::I32 || z.dtype() == DType::U32, groups, out / per * bw, 2) != Status::Ok)
        return error_.code;
      uint64_t group = want_group;
      if (group == 0) group = groups == 1 ? in : (in % groups == 0 ? in / groups : 0);
      if (group == 0) return fail(Status::ConventionGroupNotDividing, sr, s.name);
      if (compose_name(r, base, kQweightRenamed.weight_suffix, &w.name) != Status::Ok) return error_.code;
      w.convention = kGptqId;
      w.params = QuantParams{QuantMode::Affine, bits, uint32_t(group > 0xFFFFFFFFu ? 0 : group)};
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.piece[uint32_t(PieceRole::Biases)] = zr;
      if (gr.present()) w.piece[uint32_t(PieceRole::GlobalScale)] = gr;
      w.format = QuantFormat::GptqPacked;
      w.decodable = true;
      w.scale_dtype = s.dtype();
      w.gptq_groups = uint32_t(groups);
      w.gptq_zero_add = zero_add;
      w.rank = 2;
      w.shape[0] = out;
      w.shape[1] = in;
      if (__builtin_mul_overflow(out, in, &w.elements)) return fail(Status::ShapeOverflow, r, name);
      if (add_weight(w) != Status::Ok) return error_.code;
      any = true;
    }
  }
  if (named && !any) {
    TensorRef at;
    if (table_count_ && tables_[0].table->count()) at = TensorRef{0, 0};
    static const char kWhy[] = "gptq (quant_method): no <m>.qweight with its <m>.qzeros and <m>.scales";
    return refuse(Status::QuantizationTensorsAbsent, at, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

}  // namespace ws
