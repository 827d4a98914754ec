// weightstream — the quantization config's lists of modules left unquantized, and
// compressed-tensors' config-group targets, matched against a module's name as the runtime that
// loads the model next matches them (internal; issue #27). No heap, no recursion: entries are
// read in place from MlxQuantConfig's arena, regexes by module_regex.h, wildcards by glob_match().
//
// Which list a method reads, and how an entry matches the module `m` (the tensor name without its
// parameter: `<m>.weight`, `<m>.weight_packed`, `<m>.qweight`; gpt-oss's experts module for
// `<m>.<param>_blocks`):
//   fp8 (transformers FineGrainedFP8Config, vLLM Fp8Config):
//     modules_to_not_convert as transformers quantizers/quantizers_utils.py should_convert_module
//       reads it: re.match(entry, m) (the entry is a regex, anchored at the start only) or
//       m.endswith(entry);
//     ignored_layers (else modules_to_not_convert) as vLLM fp8.py reads them: quant_utils.py
//       is_layer_skipped's default, the entry equal to m (a fused layer's shards are the unfused
//       modules the files name, so each is compared itself).
//   modelopt (vLLM modelopt.py ModelOptQuantConfigBase.is_layer_excluded): exclude_modules
//     (hf_quant_config.json, older config.json) and ignore (config.json): the entry equal to m, a
//     substring of m, or a shell wildcard fnmatch(m, entry) accepts.
//   mxfp4 (transformers Mxfp4Config): modules_to_not_convert, should_convert_module's rule.
//   awq: modules_to_not_convert, should_convert_module's rule or (vLLM awq.py, is_layer_skipped
//     with skip_with_substr) the entry a substring of m.
//   compressed-tensors: see ct_module_scheme().
// A module is left unquantized when any reader of its method leaves it so: the files must mean the
// same to every one of them.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/conventions.h"
#include "weightstream/mlx_config.h"

namespace ws {
namespace conv_detail {

// Python's fnmatch.fnmatchcase(name, pattern): `*` any run, `?` one byte, `[seq]`, `[!seq]` (with
// ranges; a `[` without its `]` is itself), the whole name.
bool glob_match(const char* pattern, size_t pn, const char* name, size_t nn);

// The list entry that leaves module `m` unquantized under the config's method (fp8, modelopt,
// mxfp4, awq), if any.
struct ModuleExclusion {
  bool excluded = false;
  MlxQuantConfig::ModuleList list = MlxQuantConfig::ModuleList::ModulesToNotConvert;
  StrView entry;
};
ModuleExclusion module_excluded(const MlxQuantConfig* config, const char* m, size_t n);

// The first entry of a list the config's method reads as regexes (transformers'
// modules_to_not_convert; compressed-tensors' `re:` entries) outside module_regex.h's subset: the
// construct not read (null when none), the entry in *entry.
const char* module_lists_unsupported(const MlxQuantConfig* config, StrView* entry);

// compressed-tensors (compressed_tensors/utils/match.py match_named_modules and _match_name,
// quantization/lifecycle/apply.py apply_quantization_config; vLLM compressed_tensors/utils.py
// should_ignore_layer): `ignore` entries match by name — equal to m, or `re:<regex>` re.match-ing
// m. A config group's `targets` match by name the same way, or by class name (a target that is a
// Python class name: a capital letter first, no dot — "Linear"; the files' names carry no module
// class, so such a target matches whatever module the tensors show quantized). The module's
// scheme is the group of its first matching target in match_named_modules' order: an equal name,
// then the `re:` targets in sorted order, then a class name; a target listed by several groups is
// the last one's (apply.py's target_to_scheme dict).
struct CtModuleScheme {
  bool ignored = false;   // an `ignore` entry (`entry`) matches
  bool matched = false;   // a target matches by name (`entry`) ...
  bool by_class = false;  // ... or only a class-name target (`entry`) can
  uint32_t group = 0;     // the group of the target
  StrView entry;
};
CtModuleScheme ct_module_scheme(const MlxQuantConfig& config, const char* m, size_t n);

// The weights arguments of compressed-tensors module `m`: its group's (a config with no targets:
// its first group's for every module). False when its weights are not quantized (`ignore`d, no
// target, a group without weights): *s says which, for ct_refuse_unquantized.
bool ct_module_weights(const MlxQuantConfig& c, const char* m, size_t n, MlxQuantConfig::CtWeights* a,
                       CtModuleScheme* s);
// ConventionExcludedQuantized for a module stored quantized (tensor r) that the config leaves
// unquantized: the `ignore` entry named, or no config_groups target.
Status ct_refuse_unquantized(LogicalModel& model, TensorRef r, const MlxQuantConfig& c, const CtModuleScheme& s);

// The module-list name as the config spells it ("modules_to_not_convert", "ignore", ...).
const char* module_list_name(MlxQuantConfig::ModuleList list);

// "stored quantized, yet <list> \"<entry>\" leaves it unquantized (<file>)" into `out` (`cap`
// bytes), the entry cut with "..." to fit; its length.
size_t excluded_text(char* out, size_t cap, MlxQuantConfig::ModuleList list, const StrView& entry,
                     const MlxQuantConfig& config);

// Fails the model with ConventionExcludedQuantized at `at` (a tensor of the module), the detail
// excluded_text()'s.
Status refuse_excluded(LogicalModel& model, TensorRef at, MlxQuantConfig::ModuleList list, const StrView& entry,
                       const MlxQuantConfig& config);

// Fails the model with QuantizationUnsupported, naming the construct and the entry, when a list
// entry is a regex module_regex.h does not read (module_lists_unsupported()); Ok otherwise. The
// error is at the model's first tensor.
Status refuse_unread_lists(LogicalModel& model, const MlxQuantConfig* config);

}  // namespace conv_detail
}  // namespace ws
