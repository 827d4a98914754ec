// weightstream — bitsandbytes checkpoints (quant_method "bitsandbytes"; transformers'
// BitsAndBytesConfig load_in_4bit / load_in_8bit, unsloth's `*-bnb-4bit` uploads): the weight
// `<m>.weight` is decoded from its packed bytes and the companions bitsandbytes saves beside it.
//
// Sources (facts, not code):
// - 4-bit: bitsandbytes (bitsandbytes-foundation/bitsandbytes) nn/modules.py
//   Linear4bit._save_to_state_dict writes `<m>.weight` (Params4bit's packed data, quant_storage
//   uint8 by default: [ceil(n / 2), 1]; another quant_storage dtype is a view of the same bytes)
//   and, under `<m>.weight.`, every item of functional.py QuantState.as_dict(packed=True):
//   `absmax` (F32, or with double quantization U8 codes), `quant_map` (the code, F32[16]),
//   `nested_absmax` (F32) + `nested_quant_map` (F32[256]) when nested, and
//   `quant_state.bitsandbytes__nf4|fp4`: the JSON of quant_type, blocksize, dtype, shape and the
//   nested_* numbers (bnb_quant_state.h reads it). transformers quantizers/quantizer_bnb_4bit.py
//   loads them back through Params4bit.from_prequantized / QuantState.from_dict.
// - 8-bit: nn/modules.py Linear8bitLt._save_to_state_dict writes `<m>.weight` (Int8Params' CB,
//   int8 [out, in]), `<m>.SCB` (F32 [out]) and `<m>.weight_format` (a uint8 scalar, 0 = "row";
//   maybe_rearrange_weight refuses any other, utils.py LINEAR_8BIT_WEIGHTS_FORMAT_MAPPING);
//   transformers quantizers/quantizer_bnb_8bit.py.
// - The values: lib/src/kernels/bnb4.h and bnb_int8.h.
//
// Decisions:
// - The logical weight is the dequantized parameter `<m>.weight` with the JSON's shape (a 4-bit
//   weight's shape is only in its JSON). A seekable source reads the JSONs, quant_maps and
//   weight_formats by range in the data phase, before ModelReady. A sequential one (a Decode or
//   Raw load) gets ModelReady after the header and resolves each weight as the stream passes its
//   JSON (`waits_for` / `resolve_weight`): safetensors' writer sorts tensors by dtype, then name
//   (safetensors `serialize` / `prepare`), so the JSON (U8) follows its packed weight (U8,
//   `<m>.weight` < `<m>.weight.absmax` < `<m>.weight.quant_state...`) and the loader holds the
//   packed bytes until it has passed; the F32 absmax / nested tensors come first of all and are
//   held from the file's start. Headers and Validate from a sequential source still read it whole
//   before ModelReady (their shapes are final there).
// - The kernels decode with their built-in code tables (as bitsandbytes' CUDA and CPU kernels do;
//   the saved quant_map is not read by them), so a quant_map that is not its quant_type's table
//   (value for value: the CPU-built FP4 map has +0.0 where the CUDA table has -0.0) is refused,
//   BnbQuantMapMismatch, rather than decoded with other numbers than the runtimes'. FP4 is the
//   CUDA kernels' table (get_4bit_type's values, which the saved quant_map holds); bitsandbytes'
//   CPU backend (backends/utils.py _FP4_QUANT_TABLE) rounds it to 4 decimals, so its FP4 output
//   differs from its own CUDA kernels' and from ours (NF4's tables agree).
// - The JSON must agree with the tensors: its element count with the packed bytes (a packed byte
//   holds two values), its blocks with absmax, its nested items with the nested tensors.
#include <new>
#include <string.h>

#include "../kernels/bnb4.h"
#include "bnb_quant_state.h"
#include "convention_descriptor.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

constexpr Convention kBnbId{10};

// LogicalWeight::bnb_flags.
constexpr uint8_t kBnbStateRead = 1;   // the quant_state JSON parsed, its items in the weight
constexpr uint8_t kBnbMapNotNf4 = 2;   // a quant_map value differs from the NF4 table
constexpr uint8_t kBnbMapNotFp4 = 4;   // ... from the FP4 table
constexpr uint8_t kBnbFp4 = 8;         // quant_type "fp4"
constexpr uint8_t kBnbNested = 16;     // double quantization
constexpr uint8_t kBnbFormatRead = 32;  // 8-bit: the weight_format byte arrived

const char kNf4State[] = ".quant_state.bitsandbytes__nf4";
const char kFp4State[] = ".quant_state.bitsandbytes__fp4";

// The companions of `<m>.weight`, by suffix (the 4-bit ones follow `<m>.weight`, the 8-bit ones
// `<m>`).
const char* const kFourBitSuffixes[] = {".weight.absmax", ".weight.quant_map", ".weight.nested_absmax",
                                        ".weight.nested_quant_map", ".weight.quant_state.bitsandbytes__nf4",
                                        ".weight.quant_state.bitsandbytes__fp4"};
const char* const kEightBitSuffixes[] = {".SCB", ".weight_format"};

// config.json names bitsandbytes; else (no quant_method) a `.quant_state.bitsandbytes__nf4|fp4`
// with an `.absmax`, or an `.SCB`.
bool bnb_claims(const LogicalModel& m, const MlxQuantConfig* config) {
  if (config && config->has_method()) return method_is(config, "bitsandbytes");
  for (uint32_t t = 0; t < m.table_count(); ++t)
    for (uint32_t i = 0; i < m.table(t).count(); ++i) {
      const StrView name = m.table(t).get(i).name;
      size_t base = 0;
      if (ends_with(name, ".SCB", &base)) return true;
      if ((ends_with(name, kNf4State, &base) || ends_with(name, kFp4State, &base)) && any_name_ends(m, ".absmax"))
        return true;
    }
  return false;
}

Status bnb_build(LogicalModel& m, const MlxQuantConfig* config) { return m.build_bnb(method_is(config, "bitsandbytes")); }

void bnb_spec(const LogicalWeight& w, DequantSpec* s) {
  if (w.format == QuantFormat::Bnb4) {
    s->group = w.params.group;  // the blocksize
    s->scale_dtype = w.scale_dtype;
    s->bnb_fp4 = (w.bnb_flags & kBnbFp4) != 0;
    s->nested_group = w.bnb_nested_group;
    s->nested_offset = w.bnb_nested_offset;
  } else if (w.format == QuantFormat::BnbInt8) {
    s->scale_dtype = DType::F32;
    s->row_elems = w.shape[1];
  }
}

uint32_t bnb_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  if (w.format == QuantFormat::BnbInt8) {
    const uint32_t n = put_parameter(out, cap, 0, "method", "bitsandbytes");
    return put_parameter(out, cap, n, "bits", nullptr, 8);
  }
  if (w.format != QuantFormat::Bnb4) return 0;
  uint32_t n = put_parameter(out, cap, 0, "method", "bitsandbytes");
  n = put_parameter(out, cap, n, "quant_type", (w.bnb_flags & kBnbFp4) ? "fp4" : "nf4");
  n = put_parameter(out, cap, n, "blocksize", nullptr, w.params.group);
  n = put_parameter(out, cap, n, "double_quant", (w.bnb_flags & kBnbNested) ? "true" : "false");
  return put_parameter(out, cap, n, "dtype", dtype_name(w.bnb_dtype));
}

// `<m>.weight.<x>` -> `<m>.weight`; `<m>.SCB`, `<m>.weight_format` -> `<m>.weight`.
const CompanionName kBnbCompanions[] = {
    {".weight.", ".weight", true}, {".SCB", ".weight", false}, {".weight_format", ".weight", false}};

bool bnb_data_wants(const LogicalModel& m, uint32_t table, uint32_t tensor) { return m.bnb_wants(table, tensor); }
Status bnb_data_feed(LogicalModel& m, uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data,
                     size_t size) {
  return m.feed_bnb(table, tensor, offset, data, size);
}
Status bnb_data_resolve(LogicalModel& m) { return m.resolve_bnb(); }
// A forward stream (issue #28): a 4-bit weight's decode needs its quant_state JSON, which
// safetensors' writer places after the packed weight (it sorts by dtype, then name: the F32
// absmax / quant_map / nested tensors first, then `<m>.weight` < `<m>.weight.absmax` (U8, nested)
// < `<m>.weight.quant_state.bitsandbytes__nf4`), so the loader holds the packed bytes until the
// JSON has passed. The quant_map only checks (the kernels' tables decode) and an 8-bit weight's
// weight_format only refuses (safetensors places every U8 weight_format after every I8 weight:
// waiting for it would hold them all): they are checked as they pass, the model's error then.
TensorRef bnb_waits_for(const LogicalModel& m, uint32_t weight) {
  const LogicalWeight& w = m.weight(weight);
  return w.convention == kBnbId && w.format == QuantFormat::Bnb4 ? w.ref(PieceRole::Format) : TensorRef();
}
Status bnb_data_resolve_weight(LogicalModel& m, uint32_t weight) { return m.resolve_bnb_weight(weight); }
const ConventionDataPhase kBnbDataPhase = {bnb_data_wants,  bnb_data_feed, bnb_data_resolve, false,
                                           bnb_waits_for, bnb_data_resolve_weight};

BnbQuantStateParser& parser_at(uint8_t* storage) { return *reinterpret_cast<BnbQuantStateParser*>(storage); }

// The quant_map bytes [at, at + n) of `table` against the same bytes of an f32 table, value for
// value: +0.0 and -0.0 are one value (only a zero's last byte may differ, by the sign bit).
bool map_bytes_equal(const float* table, uint64_t at, const uint8_t* data, size_t n) {
  uint8_t want[64];
  memcpy(want, table, sizeof want);  // little-endian, as safetensors stores F32
  for (size_t k = 0; k < n; ++k) {
    const uint64_t b = at + k;
    if (data[k] == want[b]) continue;
    const uint64_t v = b / 4;
    uint32_t bits;
    memcpy(&bits, want + 4 * v, 4);
    if ((bits & 0x7FFFFFFFu) == 0 && b % 4 == 3 && (data[k] & 0x7F) == 0) continue;
    return false;
  }
  return true;
}

}  // namespace

const ConventionDescriptor kBnbConvention = {
    "bitsandbytes", kBnbId, false, /*rank*/ 10, kNoEntry, nullptr, ConfigRole::Ignored,
    &kBnbDataPhase, kBnbCompanions, 3, bnb_build, bnb_spec, bnb_parameters, bnb_claims};

Status LogicalModel::bnb_companion_count(TensorRef r, DType dtype, uint64_t count) {
  const TensorInfo c = tensor(r);
  if (c.dtype() != dtype || c.rank != 1) return fail(Status::ConventionCompanionShape, r, c.name);
  uint64_t s[1] = {};
  c.copy_shape(s, 1);
  if (s[0] != count) {
    fail(Status::ConventionCompanionShape, r, c.name);
    error_.set_found(s[0]);
    error_.set_expected(count);
    return error_.code;
  }
  return Status::Ok;
}

Status LogicalModel::build_bnb(bool method_named) {
  static_assert(sizeof(BnbQuantStateParser) <= sizeof bnb_parser_ && alignof(BnbQuantStateParser) <= 8,
                "LogicalModel::bnb_parser_ must hold a BnbQuantStateParser");
  if (build_index(false) != Status::Ok) return error_.code;
  bnb_parsing_ = kNoTensor;
  bool any = false;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const TensorTable& tab = *tables_[t].table;
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const TensorRef r{t, i};
      const StrView name = tab.get(i).name;
      size_t base = 0;
      // A companion: read with its weight, which must be there.
      bool companion = false;
      for (const char* sfx : kFourBitSuffixes)
        if (ends_with(name, sfx, &base)) companion = true;
      for (const char* sfx : kEightBitSuffixes)
        if (!companion && ends_with(name, sfx, &base)) companion = true;
      if (companion) {
        if (!find_concat(name.data, base, ".weight").present()) return fail(Status::ConventionOrphanCompanion, r, name);
        continue;
      }
      LogicalWeight w;
      plain_weight(r, &w);
      if (!ends_with(name, ".weight", &base)) {
        if (add_weight(w) != Status::Ok) return error_.code;
        continue;
      }
      const TensorRef nf4 = find_concat(name.data, name.size, kNf4State), fp4 = find_concat(name.data, name.size, kFp4State);
      const TensorRef absmax = find_concat(name.data, name.size, ".absmax");
      const TensorRef map = find_concat(name.data, name.size, ".quant_map");
      const TensorRef nested_absmax = find_concat(name.data, name.size, ".nested_absmax");
      const TensorRef nested_map = find_concat(name.data, name.size, ".nested_quant_map");
      const TensorRef scb = find_concat(name.data, base, ".SCB"), format = find_concat(name.data, base, ".weight_format");
      const bool four = nf4.present() || fp4.present() || absmax.present() || map.present() ||
                        nested_absmax.present() || nested_map.present();
      if (four && (scb.present() || format.present()))  // one weight, both layouts
        return fail(Status::ConventionOrphanCompanion, scb.present() ? scb : format, tensor(scb.present() ? scb : format).name);
      if (four) {
        // Two quant states for one weight: which one from_dict would take is undefined.
        if (nf4.present() && fp4.present()) return fail(Status::BnbQuantStateInvalid, fp4, tensor(fp4).name);
        const TensorRef state = nf4.present() ? nf4 : fp4;
        if (!state.present() || !absmax.present() || !map.present() || nested_absmax.present() != nested_map.present())
          return fail(Status::ConventionMissingCompanion, r, name);
        const TensorInfo st = tensor(state), a = tensor(absmax);
        if (st.dtype() != DType::U8 || st.rank != 1) return fail(Status::ConventionCompanionShape, state, st.name);
        if (bnb_companion_count(map, DType::F32, 16) != Status::Ok) return error_.code;
        // absmax: F32, or U8 codes when nested (its count is checked against the JSON's blocks).
        const DType absmax_dtype = nested_absmax.present() ? DType::U8 : DType::F32;
        if (a.dtype() != absmax_dtype || a.rank != 1) return fail(Status::ConventionCompanionShape, absmax, a.name);
        if (nested_absmax.present()) {
          const TensorInfo na = tensor(nested_absmax);
          if (na.dtype() != DType::F32 || na.rank != 1) return fail(Status::ConventionCompanionShape, nested_absmax, na.name);
          if (bnb_companion_count(nested_map, DType::F32, 256) != Status::Ok) return error_.code;
        }
        // The packed bytes hold two values each; the shape is the JSON's (resolve_bnb()).
        const uint64_t bytes = tensor(r).byte_size();
        w.convention = kBnbId;
        w.format = QuantFormat::Bnb4;
        w.decodable = true;
        w.scale_dtype = absmax_dtype;
        w.piece[uint32_t(PieceRole::Scales)] = absmax;
        if (nested_absmax.present()) {
          w.piece[uint32_t(PieceRole::Biases)] = nested_absmax;
          w.piece[uint32_t(PieceRole::GlobalScale)] = nested_map;
        }
        w.piece[uint32_t(PieceRole::Format)] = state;
        w.piece[uint32_t(PieceRole::Shape)] = map;
        w.rank = 1;
        w.shape[0] = bytes * 2;
        w.elements = bytes * 2;
        if (add_weight(w) != Status::Ok) return error_.code;
        any = true;
        continue;
      }
      if (scb.present()) {
        // 8-bit: weight I8 [out, in], SCB F32 [out], weight_format (optional) a U8 scalar.
        const TensorInfo q = tensor(r);
        uint64_t qs[2] = {};
        if (q.dtype() != DType::I8 || q.rank != 2) return fail(Status::ConventionCompanionShape, r, name);
        q.copy_shape(qs, 2);
        if (bnb_companion_count(scb, DType::F32, qs[0]) != Status::Ok) return error_.code;
        if (format.present()) {
          const TensorInfo f = tensor(format);
          if (f.dtype() != DType::U8 || f.byte_size() != 1) return fail(Status::ConventionCompanionShape, format, f.name);
          w.piece[uint32_t(PieceRole::Format)] = format;
        }
        w.convention = kBnbId;
        w.format = QuantFormat::BnbInt8;
        w.decodable = true;
        w.scale_dtype = DType::F32;
        w.piece[uint32_t(PieceRole::Scales)] = scb;
        if (add_weight(w) != Status::Ok) return error_.code;
        any = true;
        continue;
      }
      if (format.present()) return fail(Status::ConventionMissingCompanion, r, name);  // weight_format, no SCB
      if (add_weight(w) != Status::Ok) return error_.code;
    }
  }
  if (method_named && !any) {
    TensorRef at;
    if (table_count_ && tables_[0].table->count()) at = TensorRef{0, 0};
    static const char kWhy[] =
        "bitsandbytes (quant_method): no <m>.weight with its quant_state and absmax (4-bit) or SCB (8-bit)";
    return refuse(Status::QuantizationTensorsAbsent, at, kWhy, sizeof kWhy - 1, nullptr);
  }
  return Status::Ok;
}

// The quant_state JSON, the quant_map and the weight_format: the bytes the weight's shape and
// parameters depend on.
bool LogicalModel::bnb_wants(uint32_t table, uint32_t tensor_index) const {
  PieceRole role;
  const uint32_t w = owner(TensorRef{table, tensor_index}, &role);
  if (w == kNoTensor || weights_[w].convention != kBnbId) return false;
  return role == PieceRole::Format || (role == PieceRole::Shape && weights_[w].format == QuantFormat::Bnb4);
}

Status LogicalModel::feed_bnb(uint32_t table, uint32_t tensor_index, uint64_t offset, const uint8_t* data,
                              size_t size) {
  if (error_.code != Status::Ok) return error_.code;
  const TensorRef r{table, tensor_index};
  PieceRole role;
  const uint32_t wi = owner(r, &role);
  if (wi == kNoTensor || weights_[wi].convention != kBnbId) return Status::Ok;
  LogicalWeight& w = weights_[wi];
  const uint64_t begin = piece_begin(r), end = piece_end(r);
  if (offset < begin || offset > end || size > end - offset) return fail(Status::UsageError, TensorRef(), StrView());
  if (w.format == QuantFormat::BnbInt8) {  // weight_format: one byte
    if (role == PieceRole::Format && size > 0) {
      w.bnb_flags |= kBnbFormatRead;
      w.bnb_nested_group = data[0];  // (8-bit: the weight_format value)
    }
    return Status::Ok;
  }
  if (role == PieceRole::Shape) {  // quant_map, against both tables
    const uint64_t at = offset - begin;
    if (!map_bytes_equal(kernels::kBnbNf4Code, at, data, size)) w.bnb_flags |= kBnbMapNotNf4;
    if (!map_bytes_equal(kernels::kBnbFp4Code, at, data, size)) w.bnb_flags |= kBnbMapNotFp4;
    return Status::Ok;
  }
  // The JSON, in file order: a new parse at its first byte.
  BnbQuantStateParser& parser = parser_at(bnb_parser_);
  if (offset == begin) {
    ::new (static_cast<void*>(bnb_parser_)) BnbQuantStateParser();
    bnb_parsing_ = wi;
  } else if (bnb_parsing_ != wi) {
    return fail(Status::UsageError, TensorRef(), StrView());
  }
  Status s = parser.feed(data, size);
  if (s == Status::Ok && offset + size == end) s = parser.finish();
  if (s != Status::Ok) {
    fail(s, r, tensor(r).name);
    error_.offset = begin + parser.error_pos();
    return error_.code;
  }
  if (offset + size != end) return Status::Ok;
  bnb_parsing_ = kNoTensor;
  const BnbQuantState& q = parser.state();
  // A blocksize the kernels take (bitsandbytes' are powers of two, 32 to 4096).
  const bool bs_ok = q.blocksize >= 32 && q.blocksize <= 4096 && (q.blocksize & (q.blocksize - 1)) == 0;
  const bool nbs_ok = !q.nested || (q.nested_blocksize >= 1 && q.nested_blocksize <= 4096 &&
                                     (q.nested_blocksize & (q.nested_blocksize - 1)) == 0);
  if (!bs_ok || !nbs_ok) {
    fail_data(Status::BnbQuantStateInvalid, r, tensor(r).name);
    error_.set_found(bs_ok ? q.nested_blocksize : q.blocksize);
    return error_.code;
  }
  uint64_t n = 1;
  for (uint32_t d = 0; d < q.rank; ++d) {
    if (__builtin_mul_overflow(n, q.shape[d], &n)) return fail_data(Status::ShapeOverflow, r, tensor(r).name);
    w.shape[d] = q.shape[d];
  }
  w.rank = q.rank;
  w.elements = n;
  w.params.group = uint32_t(q.blocksize);
  w.bnb_dtype = q.dtype;
  w.bnb_flags = uint8_t(w.bnb_flags | kBnbStateRead | (q.fp4 ? kBnbFp4 : 0) | (q.nested ? kBnbNested : 0));
  w.bnb_nested_group = uint32_t(q.nested_blocksize);
  w.bnb_nested_offset = q.nested_offset;
  return Status::Ok;
}

Status LogicalModel::resolve_bnb() {
  if (error_.code != Status::Ok) return error_.code;
  for (uint32_t i = 0; i < count_; ++i)
    if (weights_[i].convention == kBnbId && bnb_resolve_weight(&weights_[i]) != Status::Ok) return error_.code;
  return Status::Ok;
}

Status LogicalModel::resolve_bnb_weight(uint32_t weight) {
  if (error_.code != Status::Ok) return error_.code;
  if (weight >= count_ || weights_[weight].convention != kBnbId) return Status::Ok;
  return bnb_resolve_weight(&weights_[weight]);
}

Status LogicalModel::bnb_resolve_weight(LogicalWeight* w) {
  if (w->format == QuantFormat::BnbInt8) {
    const TensorRef fr = w->ref(PieceRole::Format);
    if (fr.present() && (w->bnb_flags & kBnbFormatRead) && w->bnb_nested_group != 0) {
      fail_data(Status::UnsupportedFormat, fr, tensor(fr).name);  // not "row": bitsandbytes refuses it
      error_.set_found(w->bnb_nested_group);
      error_.set_expected(0);
      return error_.code;
    }
    w->rank = 2;
    return Status::Ok;
  }
  const TensorRef pr = w->ref(PieceRole::Packed), state = w->ref(PieceRole::Format);
  // An empty JSON tensor is fed nothing: no document.
  if (!(w->bnb_flags & kBnbStateRead)) return fail_data(Status::BnbQuantStateInvalid, state, tensor(state).name);
  const bool fp4 = (w->bnb_flags & kBnbFp4) != 0, nested = (w->bnb_flags & kBnbNested) != 0;
  if (w->bnb_flags & (fp4 ? kBnbMapNotFp4 : kBnbMapNotNf4)) {
    const TensorRef mr = w->ref(PieceRole::Shape);
    return fail_data(Status::BnbQuantMapMismatch, mr, tensor(mr).name);
  }
  // The JSON's elements against the packed bytes (two a byte; bitsandbytes packs an even count).
  const uint64_t bytes = tensor(pr).byte_size();
  if (w->elements % 2 != 0 || w->elements / 2 != bytes) {
    fail_data(Status::ConventionCompanionShape, state, tensor(state).name);
    error_.set_found(w->elements);
    error_.set_expected(bytes * 2);
    return error_.code;
  }
  // The nested items and tensors, both or neither.
  const TensorRef nr = w->ref(PieceRole::Biases);
  if (nested != nr.present()) {
    if (nested) return fail(Status::ConventionMissingCompanion, pr, w->name);
    return fail(Status::ConventionOrphanCompanion, nr, tensor(nr).name);
  }
  const uint64_t blocks = (w->elements + w->params.group - 1) / w->params.group;
  if (bnb_companion_count(w->ref(PieceRole::Scales), nested ? DType::U8 : DType::F32, blocks) != Status::Ok)
    return error_.code;
  if (nested && bnb_companion_count(nr, DType::F32, (blocks + w->bnb_nested_group - 1) / w->bnb_nested_group) != Status::Ok)
    return error_.code;
  return Status::Ok;
}

}  // namespace ws
