// weightstream — compressed-tensors (config.json quant_method "compressed-tensors"), format
// `pack-quantized`: `<m>.weight_packed` + `<m>.weight_scale` (+ `<m>.weight_zero_point`) +
// `<m>.weight_shape`.
//
// Sources (facts, not code): neuralmagic/compressed-tensors
// - src/compressed_tensors/compressors/quantized_compressors/pack_quantized.py
//   PackedQuantizationCompressor: compression_param_info (weight_packed int32 [out, ceil(in /
//   (32 // num_bits))], weight_shape int32 [2] — compress_weight stores torch.tensor(weight.shape),
//   so int64 files exist too — and, for an asymmetric group or channel strategy, weight_zero_point
//   int32 [ceil(out / (32 // num_bits)), in / group] packed down the rows), compress_weight and
//   decompress_weight; pack_to_int32 / unpack_from_int32 (the word layout: ../kernels/ct_packed.h).
// - src/compressed_tensors/quantization/lifecycle/forward.py _dequantize: (q - zp) * scale.
// - src/compressed_tensors/quantization/quant_args.py QuantizationArgs (num_bits, type,
//   symmetric, strategy, group_size) and quant_config.py QuantizationConfig (format,
//   config_groups, ignore): read by mlx_config.cpp (MlxQuantConfig::ct_weights()).
// The scale is weight_scale [out, in / group] (group), [out, 1] (channel) or one value (tensor),
// in the model's dtype (BF16 usually; F16, F32).
//
// Decoded here: pack-quantized integers of 1..8 bits, symmetric or asymmetric (packed zero points,
// or the int8 [out, groups] ones of files written before compressed-tensors packed them, ed3ac7c),
// group / channel / tensor scales, rows that fill whole words (in a multiple of 32 // num_bits).
// nvfp4- and mxfp4-pack-quantized: compressed_tensors_fp4.cpp (MlxNvfp4 with the global scale
// dividing, MlxMxfp4).
// Refused by name (QuantizationUnsupported, the detail saying what): any other format (the
// sparse ones, mixed-precision, mxfp8-quantized), config groups whose weights
// arguments differ, float types, block strategies, `weight_g_idx` beside channel or tensor
// scales. `weight_g_idx` (actorder "group": the group of each column) with the group strategy is
// decoded (the GlobalScale piece, as GPTQ's g_idx; its meaning and checks: ../kernels/ct_packed.h).
// The logical shape's columns come from the scales (group: groups * group_size) or, for channel and
// tensor scales, from the packed width (packed * 32 // num_bits). weight_shape's values (the
// Linear's [out, in] as compress_weight stored them, and what decompress_weight's unpack_from_int32
// cuts the unpacked rows to) are read in the data phase and must equal that shape, else
// ConventionCompanionShape at the weight_shape's data, found the stored value and expected the
// inferred one (rows first). Seekable: read by range before ModelReady; sequential: checked as
// the stream passes them (upstream files sort the I64 weight_shape before every I32, BF16 or F32
// tensor, so before any quantized weight is handed on; ConventionDataPhase::check_only).
#include <string.h>

#include "convention_descriptor.h"
#include "module_lists.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr Convention kCtId{7};
// LogicalWeight::ct_format.
constexpr uint8_t kPacked = 0, kNaive = 1, kInt = 2, kFloat = 3, kNvfp4 = 4, kMxfp4 = 5;

// config.json names compressed-tensors; else (no quant_method) `.weight_packed` + `.weight_shape`
// (pack-quantized) or `.weight_packed` + `.weight_global_scale` (nvfp4-pack-quantized).
bool ct_claims(const LogicalModel& m, const MlxQuantConfig* config) {
  if (config && config->has_method()) return method_is(config, "compressed-tensors");
  return any_name_ends(m, ".weight_packed") &&
         (any_name_ends(m, ".weight_shape") || any_name_ends(m, ".weight_global_scale"));
}

Status ct_build(LogicalModel& m, const MlxQuantConfig* config) { return m.build_compressed_tensors(config); }

void ct_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.format == QuantFormat::Fp8Block) {  // float-quantized: FP8's block arithmetic (fp8_block.h)
    const uint64_t rows = w.shape[0], cols = w.shape[1];
    s->scale_dtype = w.scale_dtype;
    s->element_dtype = w.fp8_dtype;
    s->row_elems = cols ? cols : 1;
    s->block_rows = w.fp8_block[0] ? w.fp8_block[0] : rows ? rows : 1;
    s->block_cols = w.fp8_block[1] ? w.fp8_block[1] : cols ? cols : 1;
    return;
  }
  // nvfp4-pack-quantized: weight_global_scale divides the block scale (compressed_tensors_fp4.cpp).
  if (w.format == QuantFormat::MlxNvfp4) s->global_scale_divides = true;
  if (w.format != QuantFormat::CtPacked) return;
  s->ct_int8 = w.ct_format == kNaive || w.ct_format == kInt;
  s->bits = w.params.bits;
  s->scale_dtype = w.scale_dtype;
  const uint64_t rows = w.shape[0], cols = w.shape[1];
  s->row_elems = cols ? cols : 1;
  s->group = w.fp8_block[1] ? w.fp8_block[1] : uint32_t(s->row_elems);
  s->block_rows = w.fp8_block[0] ? w.fp8_block[0] : rows ? rows : 1;
  // The zero points' dtype: I32 packed words, I8 unpacked (older files).
  if (w.piece[uint32_t(PieceRole::Biases)].present()) s->element_dtype = w.fp8_dtype;
}

uint32_t ct_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  const QuantFormat f = w.format;
  if (w.convention != kCtId || (f != QuantFormat::CtPacked && f != QuantFormat::Fp8Block && f != QuantFormat::MlxNvfp4 &&
                                f != QuantFormat::MlxMxfp4))
    return 0;
  static const char* const kMethod[] = {"compressed-tensors pack-quantized", "compressed-tensors naive-quantized",
                                        "compressed-tensors int-quantized", "compressed-tensors float-quantized",
                                        "compressed-tensors nvfp4-pack-quantized", "compressed-tensors mxfp4-pack-quantized"};
  uint32_t n = put_parameter(out, cap, 0, "method", kMethod[w.ct_format < 6 ? w.ct_format : 0]);
  if (w.ct_format == kNvfp4 || w.ct_format == kMxfp4) {  // mode, bits, group, scale_dtype
    n = mlx_layout_parameters(w, out, cap, n);
    if (w.ct_format == kNvfp4) n = put_parameter(out, cap, n, "global_scale", "divides (weight_global_scale)");
    return n;
  }
  const char* strategy = w.fp8_block[0] == 0 ? "tensor"
                         : w.fp8_block[1] == 0 ? "channel"
                         : w.fp8_block[0] > 1  ? "block"
                                               : "group";
  if (w.format == QuantFormat::Fp8Block) {
    n = put_parameter(out, cap, n, "strategy", strategy);
    if (w.fp8_block[0] > 1) n = put_parameter(out, cap, n, "block_rows", nullptr, w.fp8_block[0]);
    if (w.fp8_block[1]) n = put_parameter(out, cap, n, w.fp8_block[0] > 1 ? "block_cols" : "group", nullptr, w.fp8_block[1]);
    n = put_parameter(out, cap, n, "weight_dtype", dtype_name(w.fp8_dtype));
    return put_parameter(out, cap, n, "scale_dtype", dtype_name(w.scale_dtype));
  }
  n = put_parameter(out, cap, n, "strategy", strategy);
  n = put_parameter(out, cap, n, "bits", nullptr, w.params.bits);
  if (w.fp8_block[0] > 1) n = put_parameter(out, cap, n, "block_rows", nullptr, w.fp8_block[0]);
  if (w.fp8_block[1]) n = put_parameter(out, cap, n, w.fp8_block[0] > 1 ? "block_cols" : "group", nullptr, w.fp8_block[1]);
  const bool zp = w.piece[uint32_t(PieceRole::Biases)].present();
  n = put_parameter(out, cap, n, "symmetric", zp ? "false" : "true");
  if (zp && w.fp8_dtype == DType::I8) n = put_parameter(out, cap, n, "zero_points", "unpacked int8");
  if (w.piece[uint32_t(PieceRole::GlobalScale)].present()) n = put_parameter(out, cap, n, "actorder", "group (weight_g_idx)");
  return put_parameter(out, cap, n, "scale_dtype", dtype_name(w.scale_dtype));
}

bool ct_data_wants(const LogicalModel& m, uint32_t table, uint32_t tensor) { return m.ct_wants(table, tensor); }
Status ct_data_feed(LogicalModel& m, uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data,
                    size_t size) {
  return m.feed_ct(table, tensor, offset, data, size);
}
Status ct_data_resolve(LogicalModel& m) { return m.resolve_ct(); }
const ConventionDataPhase kCtDataPhase = {ct_data_wants, ct_data_feed, ct_data_resolve, /*check_only*/ true};

constexpr uint32_t kShapeGot = uint32_t(PieceRole::Shape) - kFirstScalarRole;

// Element d of a weight_shape's bytes (I32 or I64, little-endian), sign-extended: a negative
// value is then a huge one, which no shape equals.
uint64_t shape_value(const uint8_t* b, uint32_t width, uint32_t d) {
  uint64_t v = 0;
  for (uint32_t k = 0; k < width; ++k) v |= uint64_t(b[width * d + k]) << (8 * k);
  if (width == 4 && (v & 0x80000000u)) v |= 0xFFFFFFFF00000000u;
  return v;
}

// compressed-tensors names every parameter `<m>.weight_<x>`.
const CompanionName kCtCompanions[] = {{".weight_packed", ".weight", false},
                                       {".weight_scale", ".weight", false},
                                       {".weight_zero_point", ".weight", false},
                                       {".weight_shape", ".weight", false},
                                       {".weight_g_idx", ".weight", false},
                                       {".weight_global_scale", ".weight", false}};

const char* const kCompanionSuffixes[] = {".weight_scale", ".weight_zero_point", ".weight_shape", ".weight_g_idx"};

// Whether a config group quantizes weights (a `weights: null` group, kv-cache or activations only,
// states none).
bool has_weights(const MlxQuantConfig::CtWeights& a) {
  return a.num_bits != 0 || a.strategy != MlxQuantConfig::CtStrategy::Unset || a.group_size != 0 || a.is_float;
}

bool any_target(const MlxQuantConfig& c) {
  for (uint32_t i = 0; i < c.module_list_count(); ++i)
    if (c.module_list(i) == MlxQuantConfig::ModuleList::CtTargets) return true;
  return false;
}

// The weights arguments of module `m` (compressed-tensors: ct_module_scheme(), module_lists.h):
// its group's. A config that states no targets at all is read as before targets were: its first
// group's arguments for every module. False when the module's weights are not quantized (ignored,
// no target, or a group without weights): *s says which.
bool ct_module_weights_impl(const MlxQuantConfig& c, const char* m, size_t n, MlxQuantConfig::CtWeights* a,
                    conv_detail::CtModuleScheme* s) {
  *s = conv_detail::ct_module_scheme(c, m, n);
  if (s->ignored) return false;
  if (!any_target(c)) {
    s->by_class = true;
    *a = c.ct_weights();
    return has_weights(*a);
  }
  StrView format;
  if (!(s->matched || s->by_class) || !c.ct_group(s->group, a, &format)) return false;
  return has_weights(*a);
}

// A quantized module `m` (tensor r) the config does not quantize: the ignore entry, or no target.
Status ct_refuse_unquantized_impl(LogicalModel& model, TensorRef r, const MlxQuantConfig& c, const conv_detail::CtModuleScheme& s) {
  if (s.ignored) return conv_detail::refuse_excluded(model, r, MlxQuantConfig::ModuleList::Ignore, s.entry, c);
  static const char kWhy[] = "stored quantized, yet no config_groups target with weights matches it (";
  return model.refuse(Status::ConventionExcludedQuantized, r, kWhy, sizeof kWhy - 1, "config.json)");
}

// A plain `<m>.weight` (tensor r) the config quantizes: a target names the module (by name or
// `re:`), or its dtype is the format's quantized one, and it is not ignored. Its companions are
// missing: ConventionMissingCompanion, the target named.
bool quantized_by_name(const conv_detail::CtModuleScheme& s) { return !s.ignored && s.matched; }

Status refuse_missing(LogicalModel& model, TensorRef r, const conv_detail::CtModuleScheme& s, const char* what) {
  char text[128];
  size_t n = 0;
  auto put = [&](const char* x, size_t k) {
    for (size_t i = 0; i < k && n + 1 < sizeof text; ++i) text[n++] = x[i];
  };
  put("config_groups target \"", 22);
  put(s.entry.data, s.entry.size < 48 ? s.entry.size : 48);
  put("\" quantizes it, yet no ", 23);
  put(what, strlen(what));
  put(" is stored", 10);
  return model.refuse(Status::ConventionMissingCompanion, r, text, n, nullptr);
}

// The format the weights are stored in: the section's `format`, or, in a mixed-precision config,
// the one its groups state (compressed-tensors quant_scheme.py QuantizationScheme.format). Groups
// of different formats are refused by name (one format per model is decoded); Ok otherwise.
Status stored_format(LogicalModel& model, TensorRef first, const MlxQuantConfig& c, StrView* fmt, bool* truncated) {
  *fmt = c.ct_format();
  *truncated = c.ct_format_truncated();
  StrView stated;
  MlxQuantConfig::CtWeights a;
  StrView f;
  for (uint32_t g = 0; c.ct_group(g, &a, &f); ++g) {
    if (f.size == 0) continue;
    if (stated.size == 0) {
      stated = f;
      continue;
    }
    if (f.equals(stated.data, stated.size)) continue;
    char text[128];
    size_t n = 0;
    auto put = [&](const char* x, size_t k) {
      for (size_t i = 0; i < k && n + 1 < sizeof text; ++i) text[n++] = x[i];
    };
    put("compressed-tensors config_groups of formats ", 44);
    put(stated.data, stated.size < 24 ? stated.size : 24);
    put(" and ", 5);
    put(f.data, f.size < 24 ? f.size : 24);
    return model.refuse(Status::QuantizationUnsupported, first, text, n, " (config.json; one format a model is decoded)");
  }
  if (stated.size == 0) return Status::Ok;
  if (!fmt->equals(stated.data, stated.size) && !fmt->equals("mixed-precision") && fmt->size != 0) {
    static const char kWhy[] = "compressed-tensors config group format disagreeing with the section's format";
    return model.refuse(Status::QuantizationUnsupported, first, kWhy, sizeof kWhy - 1, " (config.json)");
  }
  *fmt = stated;
  *truncated = false;
  return Status::Ok;
}

// The fixes in compressed-tensors' words (QuantizationConfig.config_groups: num_bits).
const char* ct_hint(Status s) {
  if (s != Status::ConventionUnknownParams) return nullptr;
  return "Give the model's config.json: compressed-tensors' quantization_config (config_groups) states num_bits, "
         "which the packed shapes do not give.";
}

}  // namespace

const ConventionDescriptor kCompressedTensorsConvention = {
    "compressed-tensors", kCtId, false, /*rank*/ 7, kNoEntry, nullptr, ConfigRole::Ignored,
    &kCtDataPhase, kCtCompanions, 6, ct_build, ct_spec, ct_parameters, ct_claims, /*renamed*/ nullptr,
    /*data_warning*/ nullptr, ct_hint};

// naive- / int- / float-quantized (compressors/quantized_compressors/naive_quantized.py:
// NaiveQuantizationCompressor and its aliases IntQuantizationCompressor and
// FloatQuantizationCompressor): `<m>.weight` stored as quantize() leaves it, in
// QuantizationArgs.pytorch_dtype() (int8 for type int of up to 8 bits, float8_e4m3fn for type
// float of 8), beside `<m>.weight_scale` (+ `<m>.weight_zero_point`, `<m>.weight_g_idx`).
// decompress_weight calls dequantize() without the arguments, which infers the strategy from the
// scale's shape (forward.py dequantize): rank 0 or one value, tensor; [out, 1], channel; [out, G],
// group of in / G; otherwise block of [out / R, in / C] — read so here, every division exact
// (_process_quantization raises otherwise). The values: _dequantize, (q - zp) * scale; an int8
// weight decodes as CtPacked of 8 bits (ct_int8), an F8_E4M3 one as FP8's Fp8Block (f32(q) *
// f32(scale), the arithmetic of the FP8 convention's kernel). Refused by name: float of another
// width, a float weight's zero point or g_idx, an int zero point beside tensor or block scales,
// int rows or groups not a multiple of 4 values (CtPacked's word).
Status LogicalModel::build_ct_stored(const MlxQuantConfig* config, uint8_t kind) {
  TensorRef first;
  if (table_count_ && tables_[0].table->count()) first = TensorRef{0, 0};
  if (config->ct_invalid()) {
    static const char kWhy[] = "config_groups weights (config.json): num_bits, group_size, strategy or symmetric of the wrong type";
    return refuse(Status::ConfigInvalidQuantization, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  // Every group's weights arguments (a mixed-precision config's differ; each module's are its
  // group's: ct_module_weights_impl()).
  MlxQuantConfig::CtWeights ga;
  StrView gf;
  for (uint32_t g = 0; config->ct_group(g, &ga, &gf); ++g) {
    if (!has_weights(ga)) continue;
    const char* unsupported = (ga.is_float && ga.num_bits != 8) ? "compressed-tensors float weights of other than 8 bits"
                              : (!ga.is_float && ga.num_bits > 8) ? "compressed-tensors int weights of more than 8 bits"
                                                                  : nullptr;
    if (unsupported) return refuse(Status::QuantizationUnsupported, first, unsupported, strlen(unsupported), " (config.json)");
  }
  uint32_t quantized = 0;
  static const char* const kCompanions[] = {".weight_scale", ".weight_zero_point", ".weight_g_idx"};
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (is_companion(r, name, kCompanions, 3, ".weight")) {  // read with its weight
        if (error_.code != Status::Ok) return error_.code;
        continue;
      }
      // pack-quantized's names under another format: the config and the files disagree.
      if (ends_with(name, ".weight_packed", &base) || ends_with(name, ".weight_shape", &base))
        return fail(Status::ConventionOrphanCompanion, r, name);
      LogicalWeight w;
      plain_weight(r, &w);
      const bool is_weight = ends_with(name, ".weight", &base);
      const TensorRef sr = is_weight ? find_concat(name.data, base, ".weight_scale") : TensorRef();
      // The module's scheme: its config group's arguments, unless `ignore` or no target leaves it
      // unquantized (module_lists.h).
      MlxQuantConfig::CtWeights a;
      conv_detail::CtModuleScheme sch;
      const bool quantizes = is_weight && ct_module_weights_impl(*config, name.data, base, &a, &sch);
      const DType want = a.is_float ? DType::F8_E4M3 : DType::I8;
      if (!sr.present()) {
        // Not quantized (`ignore`d, a norm, ...): as stored. A module a target names, or a weight
        // of the quantized dtype its group gives, without its scale would be a wrong number.
        if (quantizes && ((quantized_by_name(sch) && tensor(r).rank == 2) || tensor(r).dtype() == want))
          return refuse_missing(*this, r, sch, "weight_scale");
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      if (!quantizes) return ct_refuse_unquantized_impl(*this, r, *config, sch);
      const TensorRef zr = find_concat(name.data, base, ".weight_zero_point");
      const TensorRef gr = find_concat(name.data, base, ".weight_g_idx");
      const TensorInfo q = tensor(r), s = tensor(sr);
      uint64_t qs[2] = {}, ss[kMaxLogicalRank] = {};
      if (q.dtype() != want || q.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      q.copy_shape(qs, 2);
      const uint64_t rows = qs[0], cols = qs[1];
      if (!is_float_scale(s.dtype()) || s.rank > 2) return fail(Status::ConventionCompanionShape, sr, s.name);
      const uint32_t srank = s.copy_shape(ss, kMaxLogicalRank);
      // The strategy, as dequantize() infers it: fp8_block [rows a scale row (0: all), columns a
      // scale (0: all)].
      uint64_t br = 0, bc = 0;
      if (srank < 2) {
        if (s.element_count() != 1) {
          fail(Status::ConventionCompanionShape, sr, s.name);
          error_.set_found(s.element_count());
          error_.set_expected(1);
          return error_.code;
        }
      } else if (ss[1] == 1 && ss[0] == rows) {
        br = 1;
      } else if (ss[0] == rows) {
        br = 1;
        bc = ss[1] && cols % ss[1] == 0 ? cols / ss[1] : 0;
        if (bc == 0) {
          fail(Status::ConventionGroupNotDividing, sr, s.name);
          error_.set_found(cols);
          error_.set_expected(ss[1]);
          return error_.code;
        }
      } else {
        const bool fits = ss[0] && ss[1] && rows % ss[0] == 0 && cols % ss[1] == 0;
        if (!fits) {
          fail(Status::ConventionCompanionShape, sr, s.name);
          error_.set_found(ss[0]);
          error_.set_expected(rows);
          return error_.code;
        }
        br = rows / ss[0];
        bc = cols / ss[1];
      }
      const uint64_t groups = bc ? cols / bc : 1;
      const char* why = nullptr;
      if (a.is_float && zr.present()) why = "compressed-tensors float-quantized weight with a weight_zero_point";
      else if (a.is_float && gr.present()) why = "compressed-tensors float-quantized weight with a weight_g_idx";
      else if (zr.present() && (br != 1)) why = "compressed-tensors int weight_zero_point beside tensor or block scales";
      else if (gr.present() && !(br == 1 && bc)) why = "compressed-tensors weight_g_idx with channel, tensor or block scales";
      else if (!a.is_float && (cols % 4 != 0 || (bc && bc % 4 != 0)))
        why = "compressed-tensors int8 rows or groups not a multiple of 4 values";
      if (why) return refuse(Status::QuantizationUnsupported, zr.present() && a.is_float ? zr : gr.present() && a.is_float ? gr : r, why, strlen(why), nullptr);
      if (zr.present()) {  // int8, the scale's shape [rows, groups]
        const TensorInfo z = tensor(zr);
        uint64_t zs[2] = {};
        if (z.dtype() != DType::I8 || z.rank != 2 || (z.copy_shape(zs, 2), zs[0] != rows || zs[1] != groups)) {
          fail(Status::ConventionCompanionShape, zr, z.name);
          error_.set_found(z.element_count());
          error_.set_expected(rows * groups);
          return error_.code;
        }
        w.piece[uint32_t(PieceRole::Biases)] = zr;
        w.fp8_dtype = DType::I8;
      }
      if (gr.present()) {
        const TensorInfo g = tensor(gr);
        uint64_t gs[1] = {};
        if (g.dtype() != DType::I32 || g.rank != 1 || (g.copy_shape(gs, 1), gs[0] != cols)) {
          fail(Status::ConventionCompanionShape, gr, g.name);
          error_.set_found(g.element_count());
          error_.set_expected(cols);
          return error_.code;
        }
        w.piece[uint32_t(PieceRole::GlobalScale)] = gr;
      }
      w.convention = kCtId;
      w.ct_format = kind;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      w.scale_dtype = s.dtype();
      w.fp8_block[0] = uint32_t(br);
      w.fp8_block[1] = uint32_t(bc);
      if (a.is_float) {
        w.format = QuantFormat::Fp8Block;
        w.fp8_dtype = DType::F8_E4M3;
      } else {
        w.format = QuantFormat::CtPacked;
        w.params.bits = 8;  // the stored width (the values are of num_bits)
      }
      w.params.group = uint32_t(bc);
      w.decodable = true;
      ++quantized;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  if (quantized == 0) {
    static const char kWhy[] = "compressed-tensors (config.json quant_method): no <m>.weight with its weight_scale";
    return refuse(Status::QuantizationTensorsAbsent, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

bool LogicalModel::ct_wants(uint32_t table, uint32_t tensor_index) const {
  PieceRole role;
  const uint32_t w = owner(TensorRef{table, tensor_index}, &role);
  return w != kNoTensor && weights_[w].convention == kCtId && role == PieceRole::Shape;
}

Status LogicalModel::feed_ct(uint32_t table, uint32_t tensor_index, uint64_t offset, const uint8_t* data,
                             size_t size) {
  if (error_.code != Status::Ok) return error_.code;
  const TensorRef r{table, tensor_index};
  PieceRole role;
  const uint32_t wi = owner(r, &role);
  if (wi == kNoTensor || weights_[wi].convention != kCtId || role != PieceRole::Shape) return Status::Ok;
  LogicalWeight& w = weights_[wi];
  const uint64_t begin = piece_begin(r), end = piece_end(r);  // 8 or 16 bytes (the build's check)
  if (offset < begin || offset > end || size > end - offset || end - begin > 16)
    return fail(Status::UsageError, TensorRef(), StrView());
  if (size > 0) memcpy(w.uqff_scalar + (offset - begin), data, size);
  w.uqff_got[kShapeGot] = uint8_t(offset - begin + size);
  if (offset + size != end) return Status::Ok;
  // All in: [rows, cols] against the inferred shape.
  const uint32_t width = uint32_t(end - begin) / 2;
  for (uint32_t d = 0; d < 2; ++d) {
    const uint64_t v = shape_value(w.uqff_scalar, width, d);
    if (v == w.shape[d]) continue;
    fail_data(Status::ConventionCompanionShape, r, tensor(r).name);
    error_.set_found(v);
    error_.set_expected(w.shape[d]);
    return error_.code;
  }
  return Status::Ok;
}

// Every weight_shape fed whole (the loader's duty: a piece it skipped is its bug).
Status LogicalModel::resolve_ct() {
  if (error_.code != Status::Ok) return error_.code;
  for (uint32_t i = 0; i < count_; ++i) {
    const LogicalWeight& w = weights_[i];
    if (w.convention != kCtId) continue;
    const TensorRef r = w.ref(PieceRole::Shape);
    if (r.present() && w.uqff_got[kShapeGot] != tensor(r).byte_size()) return fail(Status::UsageError, r, tensor(r).name);
  }
  return Status::Ok;
}

Status LogicalModel::build_compressed_tensors(const MlxQuantConfig* config) {
  if (build_index(false) != Status::Ok) return error_.code;
  TensorRef first;
  if (table_count_ && tables_[0].table->count()) first = TensorRef{0, 0};
  // The parameters are config.json's (the shapes do not give num_bits), except nvfp4's: U8 codes,
  // E4M3 scales and an F32 global scale say it all.
  if ((!config || !config->has_method()) && any_name_ends(*this, ".weight_global_scale")) return build_ct_fp4(nullptr, kNvfp4);
  if (!config || !config->has_method()) {
    static const char kWhy[] = "compressed-tensors (.weight_packed + .weight_shape): no config.json states num_bits";
    return refuse(Status::ConventionUnknownParams, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  if (conv_detail::refuse_unread_lists(*this, config) != Status::Ok) return error_.code;
  StrView fmt;
  bool fmt_truncated = false;
  if (stored_format(*this, first, *config, &fmt, &fmt_truncated) != Status::Ok) return error_.code;
  const uint8_t stored = fmt.equals("naive-quantized") ? kNaive
                         : fmt.equals("int-quantized") ? kInt
                         : fmt.equals("float-quantized") ? kFloat
                         : fmt.equals("nvfp4-pack-quantized") ? kNvfp4
                         : fmt.equals("mxfp4-pack-quantized") ? kMxfp4
                                                         : kPacked;
  if ((stored == kNvfp4 || stored == kMxfp4) && !fmt_truncated) return build_ct_fp4(config, stored);
  if (stored != kPacked && !fmt_truncated) return build_ct_stored(config, stored);
  if (!fmt.equals("pack-quantized") || fmt_truncated) {
    const StrView f = fmt;
    static const char kHead[] = "compressed-tensors format ";
    char what[64] = {};
    size_t n = sizeof kHead - 1;
    memcpy(what, kHead, n);
    const size_t fn = f.size < 24 ? f.size : 24;
    if (fn) memcpy(what + n, f.data, fn);
    else memcpy(what + n, "(none)", 6);
    n += fn ? fn : 6;
    return refuse(Status::QuantizationUnsupported, first, what, n, " (config.json quantization_config.format)");
  }
  if (config->ct_invalid()) {
    static const char kWhy[] = "config_groups weights (config.json): num_bits, group_size, strategy or symmetric of the wrong type";
    return refuse(Status::ConfigInvalidQuantization, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  using S = MlxQuantConfig::CtStrategy;
  // Every group's weights arguments, each checked (a mixed-precision config's differ; each
  // module's are its group's: ct_module_weights_impl()).
  MlxQuantConfig::CtWeights ga;
  StrView gf;
  for (uint32_t g = 0; config->ct_group(g, &ga, &gf); ++g) {
    if (!has_weights(ga)) continue;
    const MlxQuantConfig::CtWeights& a = ga;
    const char* unsupported = a.is_float ? "compressed-tensors pack-quantized of type float"
                              : a.strategy != S::Group && a.strategy != S::Channel && a.strategy != S::Tensor
                                  ? "compressed-tensors pack-quantized strategy other than group, channel or tensor"
                              : (!a.symmetric && a.strategy == S::Tensor) ? "compressed-tensors asymmetric tensor strategy"
                                                                          : nullptr;
    if (unsupported) return refuse(Status::QuantizationUnsupported, first, unsupported, strlen(unsupported), " (config.json)");
    if (a.num_bits == 0 || (a.strategy == S::Group && a.group_size == 0)) {
      static const char kWhy[] = "config_groups weights (config.json): num_bits, or group_size for the group strategy, not stated";
      return refuse(Status::ConfigInvalidQuantization, first, kWhy, sizeof kWhy - 1, nullptr);
    }
    // 3, 5, 6 and 7 bits leave bits of every word unused and pad nearly every row: its length is
    // then only in weight_shape's data, unread here (the group strategy's comes from the scales).
    if (32 % a.num_bits != 0 && a.strategy != S::Group) {
      static const char kWhy[] = "compressed-tensors num_bits not dividing 32 with channel or tensor scales";
      return refuse(Status::QuantizationUnsupported, first, kWhy, sizeof kWhy - 1, " (config.json)");
    }
  }
  uint32_t quantized = 0;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      if (is_companion(r, name, kCompanionSuffixes, 4, ".weight_packed")) {  // read with its weight
        if (error_.code != Status::Ok) return error_.code;
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      MlxQuantConfig::CtWeights a;
      conv_detail::CtModuleScheme sch;
      if (!ends_with(name, ".weight_packed", &base)) {
        // A plain `<m>.weight` of a module a target names (not ignored): its packed tensors are
        // missing.
        if (ends_with(name, ".weight", &base) && tensor(r).rank == 2 &&
            ct_module_weights_impl(*config, name.data, base, &a, &sch) && quantized_by_name(sch))
          return refuse_missing(*this, r, sch, "weight_packed");
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      // The module's scheme: its config group's arguments, unless `ignore` or no target leaves it
      // unquantized (module_lists.h).
      if (!ct_module_weights_impl(*config, name.data, base, &a, &sch)) return ct_refuse_unquantized_impl(*this, r, *config, sch);
      const uint32_t bits = a.num_bits, pf = 32 / bits;
      // The weight `<m>.weight` (a prefix of the packed name) must not be a tensor too.
      if (find_concat(name.data, base, ".weight").present()) return fail(Status::DuplicateTensorName, r, name);
      const TensorRef sr = find_concat(name.data, base, ".weight_scale");
      const TensorRef zr = find_concat(name.data, base, ".weight_zero_point");
      const TensorRef shr = find_concat(name.data, base, ".weight_shape");
      const TensorRef gr = find_concat(name.data, base, ".weight_g_idx");
      // Activation ordering is of the group strategy (quant_args.py QuantizationArgs refuses
      // actorder otherwise; _process_quantization reads g_idx only there).
      if (gr.present() && a.strategy != S::Group) {
        static const char kWhy[] = "compressed-tensors weight_g_idx with channel or tensor scales";
        return refuse(Status::QuantizationUnsupported, gr, kWhy, sizeof kWhy - 1, nullptr);
      }
      if (!sr.present() || !shr.present() || (!a.symmetric && !zr.present()))
        return fail(Status::ConventionMissingCompanion, r, name);
      // A symmetric weight has no zero point, except the int8 ones older writers kept (zeros,
      // subtracted all the same by decompress_weight's dequantize).
      if (a.symmetric && zr.present() && tensor(zr).dtype() != DType::I8)
        return fail(Status::ConventionOrphanCompanion, zr, tensor(zr).name);
      const TensorInfo p = tensor(r), s = tensor(sr), sh = tensor(shr);
      uint64_t ps[kMaxLogicalRank] = {}, ss[kMaxLogicalRank] = {};
      if (p.dtype() != DType::I32 || p.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
      p.copy_shape(ps, kMaxLogicalRank);
      if ((sh.dtype() != DType::I32 && sh.dtype() != DType::I64) || sh.rank != 1 || sh.element_count() != 2)
        return fail(Status::ConventionCompanionShape, shr, sh.name);
      if (!is_float_scale(s.dtype()) || s.rank > kMaxLogicalRank) return fail(Status::ConventionCompanionShape, sr, s.name);
      const uint32_t srank = s.copy_shape(ss, kMaxLogicalRank);
      const uint64_t rows = ps[0], words = ps[1];
      uint64_t cols = 0, groups = 1;
      if (a.strategy == S::Group) {
        groups = srank == 2 ? ss[1] : 0;
        if (srank != 2 || ss[0] != rows) {
          fail(Status::ConventionCompanionShape, sr, s.name);
          error_.set_found(srank == 2 ? ss[0] : s.element_count());
          error_.set_expected(rows);
          return error_.code;
        }
        // A word of the kernel's unit spans one group: a group of fewer values than a word (a
        // valid file) is not decoded yet.
        if (a.group_size % pf != 0) {
          static const char kWhy[] = "compressed-tensors group_size not a multiple of the values in an int32 word";
          return refuse(Status::QuantizationUnsupported, r, kWhy, sizeof kWhy - 1, nullptr);
        }
        // The row's columns: the scale groups' (groups * group_size) filling the packed words; a
        // row the group size does not divide (its last group short) is the same number of groups.
        const uint64_t in_max = words * pf;  // words < 2^61: its bytes are in the file
        if (__builtin_mul_overflow(groups, uint64_t(a.group_size), &cols)) return fail(Status::ShapeOverflow, r, name);
        if (cols != in_max) {
          const bool short_group = groups == in_max / a.group_size + (in_max % a.group_size != 0);
          fail(short_group ? Status::ConventionGroupNotDividing : Status::ConventionCompanionShape, r, name);
          error_.set_found(short_group ? in_max : words);
          error_.set_expected(short_group ? a.group_size : cols / pf);
          return error_.code;
        }
      } else {
        const bool channel = a.strategy == S::Channel;
        const bool fits = channel ? (s.element_count() == rows && ((srank == 2 && ss[1] == 1) || srank == 1))
                                  : s.element_count() == 1;
        if (!fits) {
          fail(Status::ConventionCompanionShape, sr, s.name);
          error_.set_found(s.element_count());
          error_.set_expected(channel ? rows : 1);
          return error_.code;
        }
        if (__builtin_mul_overflow(words, uint64_t(pf), &cols)) return fail(Status::ShapeOverflow, r, name);
      }
      if (zr.present()) {
        // Zero points packed down the rows: I32 [ceil(rows / pf), groups]; or, as files written
        // before compressed-tensors packed them hold them, int8 [rows, groups].
        const TensorInfo z = tensor(zr);
        uint64_t zs[kMaxLogicalRank] = {};
        const bool unpacked = z.dtype() == DType::I8;
        const uint64_t zrows = unpacked ? rows : rows / pf + (rows % pf != 0);
        const bool ok = (z.dtype() == DType::I32 || unpacked) && z.rank == 2 &&
                        z.copy_shape(zs, kMaxLogicalRank) == 2 && zs[0] == zrows && zs[1] == groups;
        if (!ok) {
          fail(Status::ConventionCompanionShape, zr, z.name);
          error_.set_found(z.element_count());
          error_.set_expected(zrows * groups);
          return error_.code;
        }
        w.fp8_dtype = z.dtype();
      }
      if (gr.present()) {
        // weight_g_idx: int32 [in] (initialize.py registers it so), one group a column; its
        // values are checked when the weight decodes (the Dequantizer: QuantGroupIndexOutOfRange).
        const TensorInfo g = tensor(gr);
        uint64_t gs[1] = {};
        if (g.dtype() != DType::I32 || g.rank != 1 || (g.copy_shape(gs, 1), gs[0] != cols)) {
          fail(Status::ConventionCompanionShape, gr, g.name);
          error_.set_found(g.element_count());
          error_.set_expected(cols);
          return error_.code;
        }
        w.piece[uint32_t(PieceRole::GlobalScale)] = gr;  // the role GPTQ's g_idx takes too
      }
      w.name = StrView{name.data, base + 7};  // `<m>.weight`
      w.convention = kCtId;
      w.piece[uint32_t(PieceRole::Scales)] = sr;
      if (zr.present()) w.piece[uint32_t(PieceRole::Biases)] = zr;
      w.piece[uint32_t(PieceRole::Shape)] = shr;
      w.params.bits = bits;
      w.params.group = a.strategy == S::Group ? a.group_size : 0;
      w.fp8_block[0] = a.strategy == S::Tensor ? 0 : 1;
      w.fp8_block[1] = a.strategy == S::Group ? a.group_size : 0;
      w.scale_dtype = s.dtype();
      w.format = QuantFormat::CtPacked;
      w.decodable = true;
      w.rank = 2;
      w.shape[0] = rows;
      w.shape[1] = cols;
      if (__builtin_mul_overflow(rows, cols, &w.elements)) return fail(Status::ShapeOverflow, r, name);
      ++quantized;
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  // config.json names compressed-tensors pack-quantized, yet no tensor is a packed weight.
  if (quantized == 0) {
    static const char kWhy[] = "compressed-tensors (config.json quant_method): no <m>.weight_packed tensor";
    return refuse(Status::QuantizationTensorsAbsent, first, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

namespace conv_detail {

bool ct_module_weights(const MlxQuantConfig& c, const char* m, size_t n, MlxQuantConfig::CtWeights* a,
                       CtModuleScheme* s) {
  return ct_module_weights_impl(c, m, n, a, s);
}

Status ct_refuse_unquantized(LogicalModel& model, TensorRef r, const MlxQuantConfig& c, const CtModuleScheme& s) {
  return ct_refuse_unquantized_impl(model, r, c, s);
}

}  // namespace conv_detail

}  // namespace ws
