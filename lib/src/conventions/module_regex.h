// weightstream — the regular expressions of GPTQModel's `dynamic` per-module rules, matched as
// Python's re.match (anchored at the start, not at the end) matches them, with no heap and no
// recursion.
//
// GPTQModel gptqmodel/quantization/config.py (QuantizeConfig.dynamic: keys "+:<regex>" or a bare
// <regex> override the module's bits / group_size / desc_act / sym, "-:<regex>" leaves it
// unquantized) and vLLM model_executor/layers/quantization/utils/gptq_utils.py
// (get_dynamic_override: the rules in document order, the first whose re.match(pattern,
// module) succeeds decides). The patterns GPTQModel's exports and tests carry are module paths
// with escaped dots, `.*` / `.+`, character classes and digit ranges, and alternations in groups,
// e.g. `.*\.(?:1[0-5])\..*gate.*`: the subset read here is
//   literals; `\` before punctuation; `.`; `\d`, `\w`, `\s`; `[...]` and `[^...]` of characters
//   and ranges (with `\`-escaped punctuation); groups `(...)` and `(?:...)` with `|`, nested;
//   `*`, `+`, `?` (lazy `*?`, `+?`, `??` too: re.match's verdict does not depend on laziness)
//   after an atom or a group; `^` first and `$` last.
// Anything else (counted repetition {m,n}, lookaround, backreferences, flags, anchors elsewhere,
// more than 62 atoms or 8 nested groups) is refused by name: regex_supported() says which
// construct, and the rule's caller refuses the model rather than guess.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {
namespace conv_detail {

// Null when `pattern` is in the subset above; else the construct not read ("{m,n} repetition",
// "lookaround", ...).
const char* regex_unsupported(const char* pattern, size_t n);

// re.match(pattern, name) is not None: a prefix of `name` matches (the whole of it after a
// trailing `$`). False for a pattern outside the subset.
bool regex_match(const char* pattern, size_t n, const char* name, size_t name_size);

}  // namespace conv_detail
}  // namespace ws
