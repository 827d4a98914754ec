// config.json's quantization section (mlx-lm): defaults and per-layer overrides, streamed.
#include "weightstream/mlx_config.h"

#include <string.h>

#include <algorithm>

#include "weightstream/detail/json_strings.h"

namespace ws {

namespace {

using detail::JsonLexer;
using conv_detail::small_is;

enum Ctx : uint8_t {
  kRootStart, kRootKey, kRootValue, kQuantKey, kQuantValue, kOverKey, kOverValue, kSkip, kDone,
  kBlockSize,  // inside weight_block_size's array (FP8)
  // compressed-tensors: config_groups' object (group names), a group's keys, its `weights` keys
  // and values, and the section's `format` string.
  kCtGroupsKey, kCtGroupKey, kCtGroupValue, kCtWeightsKey, kCtWeightsValue, kCtFormat,
  kDynKey, kDynValue,  // GPTQModel's `dynamic` object: a rule's key, then its object
  kList,               // inside a module list's array (modules_to_not_convert, ignore, targets, ...)
  kCtTargets, kCtGroupFormat,  // a config group's `targets` value and `format` string
};
enum Kind : uint8_t { kOther, kQuant, kGroup, kBits, kMode, kMethod, kBlockSizeKey, kScaleFmt, kAlgo, kCtGroups, kCtFormatKey, kCkptFormat, kAwqVersion, kZeroPoint, kAwqBackend, kDynamic, kListKey };
// What a record of the arena table is (MlxQuantConfig::Override::kind).
enum RecordKind : uint8_t { kOverrideRecord, kDynamicRecord, kListRecord, kGroupRecord };
constexpr uint32_t kNoString = 0xFFFFFFFFu;
// A compressed-tensors `weights` key (QuantizationArgs' fields read here).
enum CtKey : uint8_t { kCtOther, kCtNumBits, kCtGroupSize, kCtStrategy, kCtSymmetric, kCtType };

constexpr uint8_t kUnset = 0xFF;  // an override object that states no mode

}  // namespace

const char* config_source_file(ConfigSource s) {
  switch (s) {
    case ConfigSource::HfQuantConfig: return "hf_quant_config.json";
    case ConfigSource::QuantizeConfig: return "quantize_config.json";
    case ConfigSource::QuantConfig: return "quant_config.json";
    default: return "config.json";
  }
}

MlxQuantConfig::MlxQuantConfig(void* arena, size_t arena_size, const Limits& limits)
    : limits_(limits) {
  arena_.init(arena, arena_size);
  lexer_.reset(limits.max_nesting);
}

Status MlxQuantConfig::fail(Status s, uint64_t offset) {
  if (error_.code == Status::Ok) {
    error_.code = s;
    error_.offset = offset;
  }
  return error_.code;
}

Status MlxQuantConfig::feed(const void* data, size_t size) {
  if (error_.code != Status::Ok) return error_.code;
  if (finished_) return fail(Status::UsageError, lexer_.consumed());
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const uint8_t* end = p + size;
  for (;;) {
    JsonLexer::Token t = lexer_.next(&p, end);
    if (t == JsonLexer::kNeedMore) return Status::Ok;
    if (t == JsonLexer::kError) return fail(lexer_.status(), lexer_.error_pos());
    Status s = handle(t);
    if (s != Status::Ok) return s;
  }
}

// A value inside the quantization section or an override: group_size / bits / mode. Returns Ok
// with ctx unchanged when the value is not complete yet (a string arriving in pieces); an error
// is returned with its offset in *at, not recorded (the caller defers it: see kQuantKey's end).
Status MlxQuantConfig::param_value(JsonLexer::Token t, QuantParams* target, uint64_t* at) {
  if (key_kind_ == kGroup || key_kind_ == kBits) {
    if (t != JsonLexer::kNumber || !lexer_.number_is_u64() || lexer_.number_value() == 0 ||
        lexer_.number_value() > 0xFFFFu) {
      *at = lexer_.token_pos();
      return Status::ConfigInvalidQuantization;
    }
    (key_kind_ == kGroup ? target->group : target->bits) = uint32_t(lexer_.number_value());
    return Status::Ok;
  }
  // mode
  if (t != JsonLexer::kStringPiece) {
    *at = lexer_.token_pos();
    return Status::ConfigUnknownMode;
  }
  if (lexer_.piece_first()) str_pos_ = lexer_.token_pos();
  if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
  QuantMode m;
  if (small_overflow_ || !quant_mode_from_name(small_, small_size_, &m)) {
    *at = str_pos_;
    return Status::ConfigUnknownMode;
  }
  target->mode = m;
  return Status::Ok;
}

// A parameter value that failed: kept for the section's end (it is the model's error only when no
// quant_method says the section is another scheme's: GPTQ states group_size -1, and transformers
// writes the keys sorted, so quant_method comes after it). A container is skipped whole.
void MlxQuantConfig::defer(Status s, uint64_t at, JsonLexer::Token t, uint8_t back) {
  if (deferred_ == Status::Ok) {
    deferred_ = s;
    deferred_pos_ = at;
  }
  // The rest of the value is skipped: a container whole, and a string that arrives in pieces to
  // its last piece (its later pieces are not keys: a chunking that split "llama" read them as
  // such, and the verdict depended on the chunk size; fuzz_config_json, session 9).
  if (t == JsonLexer::kObjectBegin || t == JsonLexer::kArrayBegin ||
      (t == JsonLexer::kStringPiece && !lexer_.piece_last())) {
    skipper_.start();
    skip_return_ = back;
    ctx_ = kSkip;
    skipper_.feed(t, lexer_);
    return;
  }
  ctx_ = back;
}

// FP8's parameters in the section (transformers utils/quantization_config.py FineGrainedFP8Config:
// `weight_block_size`, a list of two positive integers; DeepSeek-V3.1's `scale_fmt`): kept as
// stated, never an error here. A block size that is not a list of positive integers is kept as
// invalid, with its offset, for the FP8 build to report (block_size_invalid()).
// A section value that sets `*flag` to whether it is the string `want` (in pieces or whole); any
// other value (a number, a container) is skipped whole and leaves the flag false.
Status MlxQuantConfig::string_is(JsonLexer::Token t, const char* want, bool* flag) {
  if (t != JsonLexer::kStringPiece) {
    *flag = false;
    skipper_.start();
    skip_return_ = kQuantKey;
    ctx_ = kSkip;
    if (skipper_.feed(t, lexer_)) ctx_ = kQuantKey;
    return Status::Ok;
  }
  if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
  *flag = small_is(small_, small_size_, small_overflow_, want);
  ctx_ = kQuantKey;
  return Status::Ok;
}

Status MlxQuantConfig::fp8_value(JsonLexer::Token t) {
  using L = JsonLexer;
  // GPTQ's checkpoint_format (GPTQModel quantization/config.py FORMAT: "gptq" = v1, zero points
  // stored minus one; "gptq_v2" as they are; vLLM gptq.py reads the same key).
  if (ctx_ == kQuantValue && key_kind_ == kCkptFormat) return string_is(t, "gptq_v2", &gptq_v2_);
  if (ctx_ == kQuantValue && key_kind_ == kScaleFmt) return string_is(t, "ue8m0", &scale_fmt_ue8m0_);
  if (ctx_ == kQuantValue) {  // weight_block_size's value
    has_block_size_ = true;
    block_size_count_ = 0;
    block_size_pos_ = lexer_.token_pos();
    if (t == L::kArrayBegin) {
      ctx_ = kBlockSize;
      return Status::Ok;
    }
    block_size_bad_ = true;
    skipper_.start();
    skip_return_ = kQuantKey;
    ctx_ = kSkip;
    if (skipper_.feed(t, lexer_)) ctx_ = kQuantKey;
    return Status::Ok;
  }
  // Inside the array.
  if (t == L::kArrayEnd) {
    if (block_size_count_ != 2) block_size_bad_ = true;
    ctx_ = kQuantKey;
    return Status::Ok;
  }
  if (t == L::kNumber && lexer_.number_is_u64() && lexer_.number_value() != 0 &&
      lexer_.number_value() <= 0xFFFFFFFFu) {
    if (block_size_count_ < 2) block_size_[block_size_count_] = uint32_t(lexer_.number_value());
    ++block_size_count_;
    return Status::Ok;
  }
  // 0, a fraction, a negative number, a string, a container: not a block size.
  if (!block_size_bad_) block_size_pos_ = lexer_.token_pos();
  block_size_bad_ = true;
  if (t == L::kObjectBegin || t == L::kArrayBegin) {
    skipper_.start();
    skip_return_ = kBlockSize;
    ctx_ = kSkip;
    skipper_.feed(t, lexer_);
  }
  return Status::Ok;
}

void MlxQuantConfig::ct_bad(uint64_t at) {
  if (!ct_bad_) ct_bad_pos_ = at;
  ct_bad_ = true;
}

// compressed-tensors' section parts (see ct_format()): `format`, and config_groups
// {name: {"weights": {num_bits, group_size, strategy, symmetric, type, ...}, "targets": ...}}.
// Everything else in a group is skipped; a weights argument of the wrong type is kept as
// ct_invalid() for the build to report, as FP8's weight_block_size is.
Status MlxQuantConfig::ct_value(JsonLexer::Token t) {
  using L = JsonLexer;
  auto skip = [&](uint8_t back) {
    skipper_.start();
    skip_return_ = back;
    ctx_ = kSkip;
    if (skipper_.feed(t, lexer_)) ctx_ = back;
  };
  switch (ctx_) {
    case kCtFormat:
      if (t != L::kStringPiece) {
        skip(kQuantKey);
        return Status::Ok;
      }
      if (conv_detail::small_piece(lexer_, ct_format_, &ct_format_size_, &ct_format_overflow_)) ctx_ = kQuantKey;
      return Status::Ok;
    case kCtGroupsKey:  // config_groups' keys: a group's name, its value an object
      if (t == L::kObjectEnd) {
        ctx_ = kQuantKey;
        return Status::Ok;
      }
      if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
      ctx_ = kCtGroupValue;
      return Status::Ok;
    case kCtGroupValue:
      if (t != L::kObjectBegin) {
        ct_bad(lexer_.token_pos());
        skip(kCtGroupsKey);
        return Status::Ok;
      }
      ct_cur_ = CtWeights();
      ct_format_off_ = kNoString;
      ctx_ = kCtGroupKey;
      return Status::Ok;
    case kCtGroupKey:
      if (t == L::kObjectEnd) {
        // The group ends: the first one's weights are the model's; a later one must agree.
        // Every group's arguments and format are kept too (a mixed-precision config's: ct_group()).
        if (Override* o = static_cast<Override*>(arena_.grow_high(sizeof(Override)))) {
          *o = Override{};
          o->path = ct_format_off_;
          o->mode = uint8_t(ct_cur_.strategy);
          o->is_true = uint8_t((ct_cur_.symmetric ? 1 : 0) | (ct_cur_.is_float ? 2 : 0));
          o->kind = kGroupRecord;
          o->bits = ct_cur_.num_bits;
          o->group = ct_cur_.group_size;
          o->index = ct_groups_;
        }
        ++rest_count_;
        if (ct_groups_++ == 0) {
          ct_weights_ = ct_cur_;
        } else if (ct_cur_.num_bits != ct_weights_.num_bits || ct_cur_.group_size != ct_weights_.group_size ||
                   ct_cur_.strategy != ct_weights_.strategy || ct_cur_.symmetric != ct_weights_.symmetric ||
                   ct_cur_.is_float != ct_weights_.is_float) {
          ct_differ_ = true;
        }
        ctx_ = kCtGroupsKey;
        return Status::Ok;
      }
      if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
      if (small_is(small_, small_size_, small_overflow_, "weights")) {
        ctx_ = kCtWeightsKey;
        ct_key_ = 0xFF;  // expecting the object
        return Status::Ok;
      }
      // QuantizationScheme's `targets` (module names, `re:` regexes, class names) and, in a
      // mixed-precision config, the group's own `format`.
      if (small_is(small_, small_size_, small_overflow_, "targets")) {
        ctx_ = kCtTargets;
        return Status::Ok;
      }
      if (small_is(small_, small_size_, small_overflow_, "format")) {
        ctx_ = kCtGroupFormat;
        return Status::Ok;
      }
      ctx_ = kSkip;  // the next token is the value: skipped whole
      skipper_.start();
      skip_return_ = kCtGroupKey;
      return Status::Ok;
    case kCtWeightsKey:
      if (ct_key_ == 0xFF) {  // the weights value
        ct_key_ = kCtOther;
        if (t == L::kNull) {
          ctx_ = kCtGroupKey;
          return Status::Ok;
        }
        if (t != L::kObjectBegin) {
          ct_bad(lexer_.token_pos());
          skip(kCtGroupKey);
        }
        return Status::Ok;
      }
      if (t == L::kObjectEnd) {
        ctx_ = kCtGroupKey;
        return Status::Ok;
      }
      if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
      ct_key_ = small_is(small_, small_size_, small_overflow_, "num_bits")     ? kCtNumBits
                : small_is(small_, small_size_, small_overflow_, "group_size") ? kCtGroupSize
                : small_is(small_, small_size_, small_overflow_, "strategy")   ? kCtStrategy
                : small_is(small_, small_size_, small_overflow_, "symmetric")  ? kCtSymmetric
                : small_is(small_, small_size_, small_overflow_, "type")       ? kCtType
                                                                               : kCtOther;
      ctx_ = kCtWeightsValue;
      return Status::Ok;
    case kCtWeightsValue:
      switch (ct_key_) {
        case kCtNumBits:
        case kCtGroupSize: {
          if (t == L::kNull && ct_key_ == kCtGroupSize) break;
          const bool ok = t == L::kNumber && lexer_.number_is_u64() && lexer_.number_value() > 0 &&
                          lexer_.number_value() <= (ct_key_ == kCtNumBits ? 8u : 0x7FFFFFFFu);
          if (!ok) {
            ct_bad(lexer_.token_pos());
            skip(kCtWeightsKey);
            return Status::Ok;
          }
          (ct_key_ == kCtNumBits ? ct_cur_.num_bits : ct_cur_.group_size) = uint32_t(lexer_.number_value());
          break;
        }
        case kCtSymmetric:
          if (t != L::kTrue && t != L::kFalse) {
            ct_bad(lexer_.token_pos());
            skip(kCtWeightsKey);
            return Status::Ok;
          }
          ct_cur_.symmetric = t == L::kTrue;
          break;
        case kCtStrategy:
        case kCtType: {
          if (t == L::kNull) break;
          if (t != L::kStringPiece) {
            ct_bad(lexer_.token_pos());
            skip(kCtWeightsKey);
            return Status::Ok;
          }
          if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
          auto is = [&](const char* x) { return small_is(small_, small_size_, small_overflow_, x); };
          if (ct_key_ == kCtType) {
            ct_cur_.is_float = is("float");
          } else {
            using S = CtStrategy;
            ct_cur_.strategy = is("tensor") ? S::Tensor : is("channel") ? S::Channel : is("group") ? S::Group
                               : is("block") ? S::Block : S::Other;
          }
          break;
        }
        default:
          skip(kCtWeightsKey);
          return Status::Ok;
      }
      ctx_ = kCtWeightsKey;
      return Status::Ok;
    case kCtTargets:
      if (t != L::kArrayBegin) {
        skip(kCtGroupKey);
        return Status::Ok;
      }
      list_kind_ = uint8_t(ModuleList::CtTargets);
      list_return_ = kCtGroupKey;
      ctx_ = kList;
      return Status::Ok;
    case kCtGroupFormat:
      if (t != L::kStringPiece) {
        skip(kCtGroupKey);
        return Status::Ok;
      }
      if (conv_detail::store_piece(lexer_, &arena_, &str_off_, &str_size_)) {
        ct_format_off_ = str_off_;
        ctx_ = kCtGroupKey;
      }
      return Status::Ok;
    default:
      return Status::Ok;
  }
}

// A module list's array (ModuleList list_kind_): each string entry, of any length, kept in the
// arena as a record; other values are skipped. Its end returns to list_return_.
Status MlxQuantConfig::list_value(JsonLexer::Token t) {
  using L = JsonLexer;
  if (t == L::kArrayEnd) {
    ctx_ = list_return_;
    return Status::Ok;
  }
  if (t != L::kStringPiece) {
    if (t == L::kObjectBegin || t == L::kArrayBegin) {
      skipper_.start();
      skip_return_ = kList;
      ctx_ = kSkip;
      skipper_.feed(t, lexer_);
    }
    return Status::Ok;
  }
  if (lexer_.piece_first()) str_pos_ = lexer_.token_pos();
  if (!conv_detail::store_piece(lexer_, &arena_, &str_off_, &str_size_)) return Status::Ok;
  if (str_size_ > limits_.max_name_bytes) return fail(Status::NameTooLong, str_pos_);
  if (Override* o = static_cast<Override*>(arena_.grow_high(sizeof(Override)))) {
    *o = Override{};
    o->path = str_off_;
    o->kind = kListRecord;
    o->list = list_kind_;
    o->index = ct_groups_;  // CtTargets: the group being read (counted at its end)
  }
  ++list_count_;
  ++rest_count_;
  return Status::Ok;
}

Status MlxQuantConfig::handle(JsonLexer::Token t) {
  using L = JsonLexer;
  auto start_skip = [&](uint8_t back) {
    skipper_.start();
    skip_return_ = back;
    ctx_ = kSkip;
    if (skipper_.feed(t, lexer_)) ctx_ = back;  // a scalar is skipped whole
  };
  auto key_kind = [&]() {
    if (small_is(small_, small_size_, small_overflow_, "group_size")) return kGroup;
    if (small_is(small_, small_size_, small_overflow_, "bits")) return kBits;
    // AutoAWQ's quant_config.json spellings (awq/models/_config.py AwqConfig.to_dict).
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "q_group_size")) return kGroup;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "w_bit")) return kBits;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "version")) return kAwqVersion;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "zero_point")) return kZeroPoint;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "backend")) return kAwqBackend;
    if (small_is(small_, small_size_, small_overflow_, "mode")) return kMode;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "quant_method")) return kMethod;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "weight_block_size")) return kBlockSizeKey;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "scale_fmt")) return kScaleFmt;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "quant_algo")) return kAlgo;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "config_groups")) return kCtGroups;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "format")) return kCtFormatKey;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "checkpoint_format")) return kCkptFormat;
    if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, "dynamic")) return kDynamic;
    // The lists of modules left unquantized (ModuleList).
    static const char* const kLists[] = {"modules_to_not_convert", "ignored_layers", "exclude_modules", "ignore"};
    for (uint8_t k = 0; k < 4; ++k)
      if (ctx_ == kQuantKey && small_is(small_, small_size_, small_overflow_, kLists[k])) {
        list_kind_ = k;
        return kListKey;
      }
    return kOther;
  };
  switch (ctx_) {
    case kRootStart:
      if (t != L::kObjectBegin) return fail(Status::ConfigNotObject, lexer_.token_pos());
      ctx_ = kRootKey;
      // AutoGPTQ's quantize_config.json and AutoAWQ's quant_config.json: the root is the section.
      if (source_ == ConfigSource::QuantizeConfig || source_ == ConfigSource::QuantConfig) {
        has_quant_ = true;
        defaults_.mode = QuantMode::Affine;
        ctx_ = kQuantKey;
      }
      return Status::Ok;
    case kRootKey:
      if (t == L::kObjectEnd) {
        ctx_ = kDone;
        return Status::Ok;
      }
      if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
      // hf_quant_config.json's section is "quantization" alone (its "producer" is not one).
      key_kind_ = (!has_quant_ && (small_is(small_, small_size_, small_overflow_, "quantization") ||
                                   (source_ == ConfigSource::ConfigJson &&
                                    small_is(small_, small_size_, small_overflow_, "quantization_config"))))
                      ? kQuant
                      : kOther;
      ctx_ = kRootValue;
      return Status::Ok;
    case kRootValue:
      if (key_kind_ != kQuant) {
        start_skip(kRootKey);
        return Status::Ok;
      }
      if (t != L::kObjectBegin) return fail(Status::ConfigInvalidQuantization, lexer_.token_pos());
      has_quant_ = true;
      defaults_.mode = QuantMode::Affine;  // mlx-lm's default when "mode" is absent
      ctx_ = kQuantKey;
      return Status::Ok;
    case kQuantKey:
      if (t == L::kObjectEnd && source_ != ConfigSource::ConfigJson && !has_method_) {
        // The other files' method when they name none: the file's writer's (ConfigSource).
        const char* m = source_ == ConfigSource::HfQuantConfig ? "modelopt"
                        : source_ == ConfigSource::QuantizeConfig ? "gptq" : "awq";
        method_size_ = uint32_t(strlen(m));
        memcpy(method_, m, method_size_);
        method_pos_ = lexer_.token_pos();
        has_method_ = true;
      }
      if (t == L::kObjectEnd) {
        // A quant_method names another scheme (transformers' QuantizationConfigMixin): its
        // parameters are its own, read by whoever decodes it. MLX writes none.
        if (has_method_) {
          ctx_ = kRootKey;
          return Status::Ok;
        }
        if (deferred_ != Status::Ok) return fail(deferred_, deferred_pos_);
        // mlx-lm's load_model indexes quantization["group_size"] and ["bits"]: a section
        // without them does not load (a KeyError), whatever the overrides say.
        if (defaults_.bits == 0 || defaults_.group == 0)
          return fail(Status::ConfigQuantizationIncomplete, lexer_.token_pos());
        ctx_ = kRootKey;
        return Status::Ok;
      }
      // Any key may be a module path of any length: store it; drop it again if it is a field.
      if (lexer_.piece_first()) {
        need_mark_ = arena_.need_low();
        str_pos_ = lexer_.token_pos();
      }
      conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_);
      if (!conv_detail::store_piece(lexer_, &arena_, &str_off_, &str_size_)) return Status::Ok;
      if (str_size_ > limits_.max_name_bytes) return fail(Status::NameTooLong, str_pos_);
      key_kind_ = key_kind();
      // (A list's key stays stored until its value shows an array: an object or a boolean there
      // is an MLX override of a module of that name.)
      if (key_kind_ != kOther && key_kind_ != kListKey) arena_.rewind_low(str_off_, need_mark_);
      cur_path_ = str_off_;
      ctx_ = kQuantValue;
      return Status::Ok;
    case kQuantValue: {
      if (key_kind_ == kListKey) {
        if (t == L::kArrayBegin || t == L::kNull) {
          arena_.rewind_low(str_off_, need_mark_);  // the key: not a module path
          list_return_ = kQuantKey;
          ctx_ = t == L::kNull ? kQuantKey : kList;
          return Status::Ok;
        }
        key_kind_ = kOther;  // an override (or a value skipped below)
      }
      if (key_kind_ == kMethod) {
        // transformers' quant_method: a string (QuantizationMethod's value).
        if (t != L::kStringPiece) return fail(Status::ConfigInvalidQuantization, lexer_.token_pos());
        if (lexer_.piece_first()) method_pos_ = lexer_.token_pos();
        if (!conv_detail::small_piece(lexer_, method_, &method_size_, &method_overflow_)) return Status::Ok;
        // "mlx" names MLX itself (vLLM's name for it; mlx-lm writes no quant_method): still MLX's.
        has_method_ = !small_is(method_, method_size_, method_overflow_, "mlx");
        ctx_ = kQuantKey;
        return Status::Ok;
      }
      if (key_kind_ == kBlockSizeKey || key_kind_ == kScaleFmt || key_kind_ == kCkptFormat) return fp8_value(t);
      // transformers AwqConfig's backend: "llm-awq" packs as MIT's llm-awq WQLinear, not AutoAWQ.
      if (key_kind_ == kAwqBackend) return string_is(t, "llm-awq", &awq_llm_backend_);
      if (key_kind_ == kZeroPoint) {
        // AWQ's zero_point (a boolean; anything else is skipped).
        zero_point_false_ = t == L::kFalse;
        start_skip(kQuantKey);
        return Status::Ok;
      }
      if (key_kind_ == kAwqVersion) {
        // AWQ's version: a string, kept as stated (in pieces); any other value is skipped.
        if (t != L::kStringPiece) {
          start_skip(kQuantKey);
          return Status::Ok;
        }
        if (!conv_detail::small_piece(lexer_, awq_version_, &awq_version_size_, &awq_version_overflow_)) return Status::Ok;
        ctx_ = kQuantKey;
        return Status::Ok;
      }
      if (key_kind_ == kCtGroups) {
        // compressed-tensors' config_groups: an object of groups (anything else is skipped).
        if (t != L::kObjectBegin) {
          start_skip(kQuantKey);
          return Status::Ok;
        }
        ctx_ = kCtGroupsKey;
        return Status::Ok;
      }
      if (key_kind_ == kCtFormatKey) {
        ctx_ = kCtFormat;
        return ct_value(t);
      }
      if (key_kind_ == kDynamic) {
        // GPTQModel's dynamic: an object of rules (anything else is skipped).
        if (t != L::kObjectBegin) {
          start_skip(kQuantKey);
          return Status::Ok;
        }
        ctx_ = kDynKey;
        return Status::Ok;
      }
      if (key_kind_ == kAlgo) {
        // NVIDIA ModelOpt's quant_algo ("NVFP4", "FP8", ...; vLLM model_executor/layers/
        // quantization/modelopt.py reads it beside quant_method "modelopt"): a string, kept; any
        // other value (null) is skipped.
        if (t != L::kStringPiece) {
          start_skip(kQuantKey);
          return Status::Ok;
        }
        if (!conv_detail::small_piece(lexer_, algo_, &algo_size_, &algo_overflow_)) return Status::Ok;
        has_algo_ = true;
        ctx_ = kQuantKey;
        return Status::Ok;
      }
      if (key_kind_ != kOther) {
        uint64_t at = 0;
        Status s = param_value(t, &defaults_, &at);
        if (s != Status::Ok) {
          defer(s, at, t, kQuantKey);
          return Status::Ok;
        }
        if (t != L::kStringPiece || lexer_.piece_last()) ctx_ = kQuantKey;
        return Status::Ok;
      }
      if (t == L::kObjectBegin || t == L::kFalse || t == L::kTrue) {
        // An override: `false` = not quantized; `true` = the top-level parameters; an object =
        // what it states (override_params() fills in the rest).
        cur_.mode = t == L::kFalse ? QuantMode::None : QuantMode(kUnset);
        cur_.bits = 0;
        cur_.group = 0;
        cur_true_ = t == L::kTrue;
        cur_keys_ = 0;
        if (t == L::kObjectBegin) {
          ctx_ = kOverKey;
          return Status::Ok;
        }
        ctx_ = kOverValue;
        key_kind_ = kOther;
        return handle(L::kObjectEnd);  // records the override
      }
      arena_.rewind_low(str_off_, need_mark_);  // an unknown scalar or array: not a module path
      start_skip(kQuantKey);
      return Status::Ok;
    }
    case kOverKey:
      if (t == L::kObjectEnd) {
        // {} is falsy in Python: nn.quantize's predicate leaves the layer unquantized.
        if (!cur_true_ && cur_keys_ == 0) cur_.mode = QuantMode::None;
        Override* o = static_cast<Override*>(arena_.grow_high(sizeof(Override)));
        if (o) {
          *o = Override{};
          o->path = cur_path_;
          o->mode = uint8_t(cur_.mode);
          o->is_true = cur_true_ ? 1 : 0;
          o->kind = cur_dynamic_ ? kDynamicRecord : kOverrideRecord;
          o->bits = cur_.bits;
          o->group = cur_.group;
        }
        ++(cur_dynamic_ ? dynamic_count_ : override_count_);
        ctx_ = cur_dynamic_ ? kDynKey : kQuantKey;
        cur_dynamic_ = false;
        return Status::Ok;
      }
      if (!conv_detail::small_piece(lexer_, small_, &small_size_, &small_overflow_)) return Status::Ok;
      key_kind_ = key_kind();
      ++cur_keys_;
      ctx_ = kOverValue;
      return Status::Ok;
    case kOverValue: {
      if (t == L::kObjectEnd) {  // from a bare true/false
        ctx_ = kOverKey;
        return handle(L::kObjectEnd);
      }
      if (key_kind_ == kOther) {
        start_skip(kOverKey);
        return Status::Ok;
      }
      uint64_t at = 0;
      Status s = param_value(t, &cur_, &at);
      if (s != Status::Ok) {
        defer(s, at, t, kOverKey);
        return Status::Ok;
      }
      if (t != L::kStringPiece || lexer_.piece_last()) ctx_ = kOverKey;
      return Status::Ok;
    }
    case kDynKey:
      // A rule's key: the regex with its "+:" / "-:" prefix, of any length, kept in the arena.
      if (t == L::kObjectEnd) {
        ctx_ = kQuantKey;
        return Status::Ok;
      }
      if (lexer_.piece_first()) {
        need_mark_ = arena_.need_low();
        str_pos_ = lexer_.token_pos();
      }
      if (!conv_detail::store_piece(lexer_, &arena_, &str_off_, &str_size_)) return Status::Ok;
      if (str_size_ > limits_.max_name_bytes) return fail(Status::NameTooLong, str_pos_);
      cur_path_ = str_off_;
      ctx_ = kDynValue;
      return Status::Ok;
    case kDynValue:
      if (t != L::kObjectBegin) {  // not a rule GPTQModel writes: skipped
        arena_.rewind_low(str_off_, need_mark_);
        start_skip(kDynKey);
        return Status::Ok;
      }
      cur_ = QuantParams();
      cur_.mode = QuantMode(kUnset);
      cur_.bits = 0;
      cur_.group = 0;
      cur_true_ = false;
      cur_keys_ = 0;
      cur_dynamic_ = true;
      ctx_ = kOverKey;
      return Status::Ok;
    case kSkip:
      if (skipper_.feed(t, lexer_)) ctx_ = skip_return_;
      return Status::Ok;
    case kBlockSize:
      return fp8_value(t);
    case kCtGroupsKey:
    case kCtGroupKey:
    case kCtGroupValue:
    case kCtWeightsKey:
    case kCtWeightsValue:
    case kCtFormat:
    case kCtTargets:
    case kCtGroupFormat:
      return ct_value(t);
    case kList:
      return list_value(t);
    default:
      return Status::Ok;
  }
}

Status MlxQuantConfig::finish() {
  if (error_.code != Status::Ok) return error_.code;
  if (finished_) return fail(Status::UsageError, lexer_.consumed());
  finished_ = true;
  if (!lexer_.complete()) return fail(Status::JsonUnexpectedEnd, lexer_.consumed());
  if (arena_.counting()) return fail(Status::ArenaExhausted, lexer_.consumed());
  Override* o = reinterpret_cast<Override*>(arena_.high_begin());
  const uint32_t n = override_count_ + dynamic_count_ + rest_count_;
  std::reverse(o, o + n);  // pushed downwards: restore document order
  // The MLX overrides first, then the dynamic rules, the list entries and the config groups, each
  // in document order (a rotation moves one record over the others, keeping their order).
  uint32_t k = 0;
  for (uint8_t kind : {kOverrideRecord, kDynamicRecord, kListRecord})
    for (uint32_t i = k; i < n; ++i)
      if (o[i].kind == kind) std::rotate(o + k++, o + i, o + i + 1);
  overrides_ = o;
  dynamic_ = o + override_count_;
  lists_ = dynamic_ + dynamic_count_;
  return Status::Ok;
}

StrView MlxQuantConfig::override_path(uint32_t i) const {
  return i < override_count_ && overrides_ ? conv_detail::arena_str(arena_, overrides_[i].path) : StrView();
}

QuantParams MlxQuantConfig::override_params(uint32_t i) const {
  QuantParams p;
  if (i >= override_count_ || !overrides_) return p;
  const Override& o = overrides_[i];
  if (o.mode == uint8_t(QuantMode::None)) return p;  // `false` or {}
  if (o.is_true) return defaults_;
  // to_quantized(**override): Linear.to_quantized's mode="affine", then _defaults_for_mode.
  p = quant_mode_defaults(o.mode == kUnset ? QuantMode::Affine : QuantMode(o.mode));
  if (o.bits) p.bits = o.bits;
  if (o.group) p.group = o.group;
  return p;
}

StrView MlxQuantConfig::dynamic_pattern(uint32_t i) const {
  if (i >= dynamic_count_ || !dynamic_) return StrView();
  StrView k = conv_detail::arena_str(arena_, dynamic_[i].path);
  if (k.size >= 2 && (k.data[0] == '+' || k.data[0] == '-') && k.data[1] == ':') k = StrView{k.data + 2, k.size - 2};
  return k;
}

bool MlxQuantConfig::dynamic_excludes(uint32_t i) const {
  if (i >= dynamic_count_ || !dynamic_) return false;
  const StrView k = conv_detail::arena_str(arena_, dynamic_[i].path);
  return k.size >= 2 && k.data[0] == '-' && k.data[1] == ':';
}

QuantParams MlxQuantConfig::dynamic_params(uint32_t i) const {
  QuantParams p;
  p.bits = 0;
  p.group = 0;
  if (i >= dynamic_count_ || !dynamic_) return p;
  p.mode = QuantMode::Affine;
  p.bits = dynamic_[i].bits;
  p.group = dynamic_[i].group;
  return p;
}

MlxQuantConfig::ModuleList MlxQuantConfig::module_list(uint32_t i) const {
  return i < list_count_ && lists_ ? ModuleList(lists_[i].list) : ModuleList::ModulesToNotConvert;
}

StrView MlxQuantConfig::module_list_entry(uint32_t i) const {
  return i < list_count_ && lists_ ? conv_detail::arena_str(arena_, lists_[i].path) : StrView();
}

uint32_t MlxQuantConfig::module_list_group(uint32_t i) const {
  return i < list_count_ && lists_ ? lists_[i].index : 0;
}

bool MlxQuantConfig::ct_group(uint32_t g, CtWeights* weights, StrView* format) const {
  // The group records follow the list entries, in document order (one per group: the g-th).
  const uint32_t groups = rest_count_ - list_count_;
  if (!lists_ || g >= groups) return false;
  const Override& o = lists_[list_count_ + g];
  weights->num_bits = o.bits;
  weights->group_size = o.group;
  weights->strategy = CtStrategy(o.mode);
  weights->symmetric = (o.is_true & 1) != 0;
  weights->is_float = (o.is_true & 2) != 0;
  *format = o.path == kNoString ? StrView() : conv_detail::arena_str(arena_, o.path);
  return true;
}

bool MlxQuantConfig::lookup(const char* path, size_t n, QuantParams* out) const {
  // Only a config that finished Ok has its overrides in place (a failed parse may have counted
  // some without the table being built): anything else has no quantization to give.
  if (!has_quantization() || !finished_ || error_.code != Status::Ok || (override_count_ && !overrides_)) return false;
  // Linear: configs carry a handful of overrides (mixed-precision recipes: a few per layer).
  for (uint32_t i = 0; i < override_count_; ++i) {
    if (override_path(i).equals(path, n)) {
      *out = override_params(i);
      return true;
    }
  }
  *out = defaults_;
  return true;
}

}  // namespace ws
