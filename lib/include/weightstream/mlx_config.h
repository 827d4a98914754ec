// weightstream — the quantization section of an MLX model's config.json, streamed.
//
//   {"quantization": {"group_size": 64, "bits": 4, "mode": "affine",
//                     "model.layers.3.mlp.down_proj": {"group_size": 64, "bits": 6},
//                     "lm_head": false}, ...}
//
// `quantization_config` is read the same way (mlx-lm writes it as a copy; the first of the two
// wins, the second is skipped). Every other key of the document is skipped unread, whatever its
// size. Mode defaults to affine, as in mlx-lm; group_size and bits must be stated (mlx-lm's
// load_model reads quantization["group_size"] and ["bits"]: ConfigQuantizationIncomplete).
//
// Per-layer overrides are keyed by module path (without ".weight") and kept in the caller's arena.
// MLX applies one as nn.quantize's class_predicate result (mlx nn/layers/quantized.py
// `_maybe_quantize`): `true` = the top-level parameters; `false` or an empty object {} (falsy in
// Python) = not quantized; any other object is passed alone as `to_quantized(**override)`, so its
// missing mode is affine and its missing group_size / bits are that mode's defaults
// (quant_mode_defaults), never the top-level values. Keys other than group_size, bits and mode
// inside an override are skipped.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/arena.h"
#include "weightstream/detail/json_lexer.h"
#include "weightstream/detail/json_skipper.h"
#include "weightstream/limits.h"
#include "weightstream/quant_params.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

// Which file a MlxQuantConfig reads (issue #27): config.json, or, for a model whose config.json
// names no quantization while its tensor names show a scheme, the files other writers keep it in
// (vLLM model_executor/layers/quantization: modelopt.py get_config_filenames
// "hf_quant_config.json", gptq.py "quantize_config.json", awq.py "quant_config.json").
//   HfQuantConfig: NVIDIA ModelOpt's; its "quantization" object is the section (quant_algo,
//     group_size, exclude_modules) and names no quant_method: the method is "modelopt".
//   QuantizeConfig: AutoGPTQ's; the root object is the section; its quant_method, else "gptq".
//   QuantConfig: AutoAWQ's older one; the root object; its quant_method, else "awq".
enum class ConfigSource : uint8_t { ConfigJson, HfQuantConfig, QuantizeConfig, QuantConfig };
// The file's name ("config.json", "hf_quant_config.json", ...).
const char* config_source_file(ConfigSource s);

class MlxQuantConfig {
 public:
  MlxQuantConfig(void* arena, size_t arena_size, const Limits& limits = Limits());
  // config.json in pieces of any size; Ok or the first error (error() says where).
  Status feed(const void* data, size_t size);
  // Before the first feed(): the file this is (config.json unless set).
  void set_source(ConfigSource s) { source_ = s; }
  ConfigSource source() const { return source_; }
  Status finish();
  const Error& error() const { return error_; }
  size_t arena_needed() const { return arena_.peak_needed(); }

  // Valid after finish() returned Ok.
  // An MLX quantization section: one without a quant_method (mlx-lm writes none) or with
  // "quant_method": "mlx".
  bool has_quantization() const { return has_quant_ && !has_method_; }
  // The section's quant_method other than "mlx" (transformers' QuantizationConfigMixin: "fp8",
  // "gptq", ...): the
  // model is another scheme's, whose parameters this reader does not take as MLX's. Its value
  // (up to 31 bytes; method_truncated() when longer) and the offset of its string.
  bool has_method() const { return has_method_; }
  StrView method() const { return StrView{method_, method_size_}; }
  bool method_truncated() const { return method_overflow_; }
  uint64_t method_offset() const { return method_pos_; }
  // FP8 (quant_method "fp8"; transformers FineGrainedFP8Config): `weight_block_size` when stated
  // ([rows, cols] of a block); block_size_invalid() when stated but not a list of two positive
  // integers (block_size_offset() is where), and `scale_fmt` "ue8m0" (DeepSeek-V3.1: scales that
  // are powers of two, which a U8 scale tensor then holds as UE8M0 exponents).
  bool has_block_size() const { return has_block_size_; }
  bool block_size_invalid() const { return block_size_bad_; }
  uint64_t block_size_offset() const { return block_size_pos_; }
  uint32_t block_size(uint32_t i) const { return block_size_[i < 2 ? i : 0]; }
  bool scale_fmt_ue8m0() const { return scale_fmt_ue8m0_; }
  // GPTQ (quant_method "gptq"): `checkpoint_format` "gptq_v2" (zero points stored as they are);
  // false for "gptq" (v1, stored minus one), absent, or anything else.
  bool gptq_v2() const { return gptq_v2_; }
  // AWQ (quant_method "awq"; AutoAWQ awq/models/_config.py AwqConfig, transformers
  // AwqConfig): `version` as stated ("gemm", "GEMM", "gemv", "exllama", ...; up to 23 bytes,
  // awq_version_truncated() when longer; empty when absent or not a string), and `zero_point:
  // false` stated. AutoAWQ's own quant_config.json spells bits and group_size `w_bit` and
  // `q_group_size`: they are read as `bits` and `group_size` (defaults()).
  StrView awq_version() const { return StrView{awq_version_, awq_version_size_}; }
  bool awq_version_truncated() const { return awq_version_overflow_; }
  bool zero_point_false() const { return zero_point_false_; }
  // transformers AwqConfig's `backend: "llm-awq"` (AwqBackendPackingMethod.LLMAWQ: MIT's llm-awq
  // WQLinear packing, not AutoAWQ's).
  bool awq_llm_backend() const { return awq_llm_backend_; }
  // NVIDIA ModelOpt's `quant_algo` in the same section ("NVFP4", "FP8", ...), when it is a string
  // (up to 31 bytes; algo_truncated() when longer). Read whatever the quant_method.
  bool has_algo() const { return has_algo_; }
  StrView algo() const { return StrView{algo_, algo_size_}; }
  bool algo_truncated() const { return algo_overflow_; }
  // compressed-tensors (quant_method "compressed-tensors"; neuralmagic/compressed-tensors
  // src/compressed_tensors/quantization/quant_config.py QuantizationConfig and quant_args.py
  // QuantizationArgs): the section's `format` ("pack-quantized", ...; up to 23 bytes, truncated
  // beyond), and the `weights` arguments of its `config_groups` (the first group's;
  // ct_groups_differ() when a later group states other ones). ct_invalid(): a weights argument
  // of the wrong type or range (num_bits not 1..8, group_size not a positive integer or null),
  // at ct_invalid_offset().
  enum class CtStrategy : uint8_t { Unset, Tensor, Channel, Group, Block, Other };
  struct CtWeights {
    uint32_t num_bits = 0;    // 0: not stated
    uint32_t group_size = 0;  // 0: not stated or null
    CtStrategy strategy = CtStrategy::Unset;
    bool symmetric = true;  // QuantizationArgs' default
    bool is_float = false;  // type "float"
  };
  StrView ct_format() const { return StrView{ct_format_, ct_format_size_}; }
  bool ct_format_truncated() const { return ct_format_overflow_; }
  uint32_t ct_group_count() const { return ct_groups_; }
  bool ct_groups_differ() const { return ct_differ_; }
  const CtWeights& ct_weights() const { return ct_weights_; }
  bool ct_invalid() const { return ct_bad_; }
  uint64_t ct_invalid_offset() const { return ct_bad_pos_; }

  QuantParams defaults() const { return defaults_; }  // mode Affine unless "mode" said otherwise
  uint32_t override_count() const { return override_count_; }
  StrView override_path(uint32_t i) const;
  // The params override i stands for (see the top of this file); mode None for `false` / {}.
  QuantParams override_params(uint32_t i) const;
  // Params of the module at `path` (no ".weight"): its override, else the defaults. False when
  // the config has no quantization section at all.
  bool lookup(const char* path, size_t n, QuantParams* out) const;

  // GPTQModel's `dynamic` (gptqmodel/quantization/config.py QuantizeConfig.dynamic; vLLM
  // model_executor/layers/quantization/utils/gptq_utils.py get_dynamic_override): an object of
  // rules in document order, each key "+:<regex>" or a bare <regex> (the module's bits /
  // group_size, when stated as positive integers, replace the section's; desc_act and sym are
  // skipped: g_idx is always honoured and the zero points always read) or "-:<regex>" (the
  // module is not quantized). The rules are kept in the arena, apart from the MLX overrides
  // above. dynamic_pattern(i): the regex, prefix removed (lib/src/conventions/module_regex.h
  // matches it); dynamic_excludes(i): a "-:" rule; dynamic_params(i): bits and group, 0 where
  // not stated.
  uint32_t dynamic_count() const { return dynamic_count_; }
  StrView dynamic_pattern(uint32_t i) const;
  bool dynamic_excludes(uint32_t i) const;
  QuantParams dynamic_params(uint32_t i) const;

  // The section's lists of modules left unquantized, and compressed-tensors' targets (issue #27),
  // every string entry in document order, kept in the arena (non-string entries are skipped):
  //   ModulesToNotConvert: transformers' `modules_to_not_convert` (FineGrainedFP8Config,
  //     FbgemmFp8Config, AwqConfig, Mxfp4Config; vLLM's fp8.py falls back to it);
  //   IgnoredLayers: vLLM fp8.py Fp8Config's `ignored_layers`;
  //   ExcludeModules: NVIDIA ModelOpt's `exclude_modules` (hf_quant_config.json, older config.json);
  //   Ignore: compressed-tensors' `ignore` (QuantizationConfig) and ModelOpt's config.json one;
  //   CtTargets: a compressed-tensors config group's `targets` (module_list_group(): its group).
  // Which list a method reads, and how an entry matches a module: lib/src/conventions/module_lists.h.
  enum class ModuleList : uint8_t { ModulesToNotConvert, IgnoredLayers, ExcludeModules, Ignore, CtTargets };
  uint32_t module_list_count() const { return list_count_; }
  ModuleList module_list(uint32_t i) const;
  StrView module_list_entry(uint32_t i) const;
  uint32_t module_list_group(uint32_t i) const;  // CtTargets: the config group's number (document order)
  // Config group g's weights arguments and `format` (empty when the group states none: the
  // section's applies), for the groups of a mixed-precision config. False past the last group.
  bool ct_group(uint32_t g, CtWeights* weights, StrView* format) const;

 private:
  // One record of the arena's table (pushed downwards, put in document order by finish()): an MLX
  // override, a `dynamic` rule, a module list's entry or a compressed-tensors group.
  struct Override {
    uint32_t path;  // arena offset of [u32 len][bytes] (a group's: its format, or kNoString)
    uint8_t mode;   // QuantMode as stated (None for false / {}), or unset; a group's strategy
    uint8_t is_true;  // `true`: the top-level parameters; a group's: bit 0 symmetric, bit 1 float
    uint8_t kind;     // kOverride, kDynamicRule, kListEntry, kGroup (mlx_config.cpp)
    uint8_t list;     // kListEntry: its ModuleList
    uint32_t bits;   // 0: not stated
    uint32_t group;  // 0: not stated (a group size)
    uint32_t index;  // kListEntry of CtTargets, kGroup: the config group's number
  };
  Status fail(Status s, uint64_t offset);
  Status handle(detail::JsonLexer::Token t);
  Status fp8_value(detail::JsonLexer::Token t);
  Status string_is(detail::JsonLexer::Token t, const char* want, bool* flag);
  Status ct_value(detail::JsonLexer::Token t);
  Status list_value(detail::JsonLexer::Token t);
  void ct_bad(uint64_t at);
  Status param_value(detail::JsonLexer::Token t, QuantParams* target, uint64_t* at);
  void defer(Status s, uint64_t at, detail::JsonLexer::Token t, uint8_t back);

  detail::Arena arena_;
  detail::JsonLexer lexer_;
  detail::JsonSkipper skipper_;
  Limits limits_;
  Error error_;
  uint8_t ctx_ = 0, skip_return_ = 0, key_kind_ = 0;
  char small_[24] = {};
  uint32_t small_size_ = 0;
  bool small_overflow_ = false;
  uint32_t str_off_ = 0;
  size_t need_mark_ = 0;
  uint64_t str_size_ = 0;
  uint64_t str_pos_ = 0;
  bool has_quant_ = false;
  bool has_method_ = false;
  bool method_overflow_ = false;
  char method_[32] = {};
  uint32_t method_size_ = 0;
  uint64_t method_pos_ = 0;
  ConfigSource source_ = ConfigSource::ConfigJson;
  bool has_algo_ = false;
  bool algo_overflow_ = false;
  char algo_[32] = {};  // "FP8_PER_CHANNEL_PER_TOKEN" is 25 bytes
  uint32_t algo_size_ = 0;
  Status deferred_ = Status::Ok;  // a parameter error, the model's only without a quant_method
  uint64_t deferred_pos_ = 0;
  bool finished_ = false;
  QuantParams defaults_;
  QuantParams cur_;  // override being read
  bool cur_true_ = false;  // it is `true`
  uint32_t cur_keys_ = 0;  // keys its object held
  uint32_t cur_path_ = 0;
  uint32_t override_count_ = 0;
  const Override* overrides_ = nullptr;
  bool cur_dynamic_ = false;  // the object being read is a `dynamic` rule's
  uint32_t dynamic_count_ = 0;
  const Override* dynamic_ = nullptr;  // after the overrides, in the same arena table
  // Module lists' entries and compressed-tensors groups, after the dynamic rules (document order).
  uint32_t list_count_ = 0;
  const Override* lists_ = nullptr;
  uint32_t rest_count_ = 0;  // list entries and group records
  uint8_t list_kind_ = 0;    // the list being read (ModuleList)
  uint8_t list_return_ = 0;  // the context after its array
  uint32_t ct_format_off_ = 0;  // the group being read: its format string, or kNoString
  // FP8 parameters (see has_block_size()).
  bool has_block_size_ = false;
  bool block_size_bad_ = false;
  bool scale_fmt_ue8m0_ = false;
  bool gptq_v2_ = false;
  // AWQ parameters (see awq_version()).
  char awq_version_[24] = {};
  uint32_t awq_version_size_ = 0;
  bool awq_version_overflow_ = false;
  bool zero_point_false_ = false;
  bool awq_llm_backend_ = false;
  uint32_t block_size_count_ = 0;
  uint32_t block_size_[2] = {};
  uint64_t block_size_pos_ = 0;
  // compressed-tensors parameters (see ct_format()).
  char ct_format_[24] = {};
  uint32_t ct_format_size_ = 0;
  bool ct_format_overflow_ = false;
  bool ct_differ_ = false;
  bool ct_bad_ = false;
  uint8_t ct_key_ = 0;
  uint32_t ct_groups_ = 0;
  uint64_t ct_bad_pos_ = 0;
  CtWeights ct_weights_;
  CtWeights ct_cur_;  // the group being read
};

}  // namespace ws
