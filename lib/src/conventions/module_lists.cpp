// weightstream — module lists and compressed-tensors targets matched as their readers match them
// (module_lists.h says whose rules, per method).
#include "module_lists.h"

#include <string.h>

#include "module_regex.h"
#include "name_match.h"

namespace ws {
namespace conv_detail {

namespace {

using List = MlxQuantConfig::ModuleList;

// `[...]` at p[i] (fnmatch's translate): whether byte c is in it, and the class's length in *adv;
// false with *adv 0 when the `[` has no `]` (it is then a literal `[`).
bool class_match(const char* p, size_t pn, size_t i, char c, size_t* adv) {
  size_t j = i + 1;
  const bool neg = j < pn && p[j] == '!';
  if (neg) ++j;
  const size_t body = j;
  if (j < pn && p[j] == ']') ++j;  // a `]` first is one of the set
  while (j < pn && p[j] != ']') ++j;
  if (j >= pn) {
    *adv = 0;
    return false;
  }
  bool in = false;
  for (size_t k = body; k < j; ++k) {
    if (k + 2 < j && p[k + 1] == '-') {  // a range a-b
      if (c >= p[k] && c <= p[k + 2]) in = true;
      k += 2;
    } else if (p[k] == c) {
      in = true;
    }
  }
  *adv = j + 1 - i;
  return in != neg;
}

bool has_regex_syntax(const StrView& e) {
  for (size_t i = 0; i < e.size; ++i)
    if (e.data[i] != '\0' && strchr("\\[](){}*+?|^$", e.data[i])) return true;
  return false;
}

// re.match(entry, m) is not None. An entry of plain text (its dots the only syntax: any byte) is
// compared in place, so a module name longer than module_regex's 62 atoms still matches as Python
// matches it; anything else goes to module_regex.h.
bool prefix_regex(const StrView& e, const char* m, size_t n) {
  if (!has_regex_syntax(e)) {
    if (e.size > n) return false;
    for (size_t i = 0; i < e.size; ++i)
      if (e.data[i] != '.' && e.data[i] != m[i]) return false;
    return true;
  }
  return regex_match(e.data, e.size, m, n);
}

bool contains(const char* m, size_t n, const StrView& e) {
  if (e.size > n) return false;
  for (size_t p = 0; p + e.size <= n; ++p)
    if (memcmp(m + p, e.data, e.size) == 0) return true;
  return false;
}

bool equals(const StrView& e, const char* m, size_t n) { return e.size == n && memcmp(e.data, m, n) == 0; }

bool ends_with(const char* m, size_t n, const StrView& e) {
  return e.size <= n && memcmp(m + n - e.size, e.data, e.size) == 0;
}

// transformers quantizers_utils.py should_convert_module: re.match(f"{key}\\.", m) (implied by the
// next), re.match(key, m), or m.endswith(key).
bool transformers_skips(const StrView& e, const char* m, size_t n) { return prefix_regex(e, m, n) || ends_with(m, n, e); }

int compare(const StrView& a, const StrView& b) {
  const size_t k = a.size < b.size ? a.size : b.size;
  const int c = k ? memcmp(a.data, b.data, k) : 0;
  if (c != 0) return c;
  return a.size < b.size ? -1 : a.size > b.size ? 1 : 0;
}

bool is_regex_entry(const StrView& e) { return e.size >= 3 && memcmp(e.data, "re:", 3) == 0; }

// compressed-tensors match.py _match_name: `re:<regex>` re.match-es, anything else is equal.
bool ct_name_matches(const StrView& e, const char* m, size_t n) {
  if (is_regex_entry(e)) return regex_match(e.data + 3, e.size - 3, m, n);
  return equals(e, m, n);
}

// A target naming a torch module class (match.py _match_class): a Python class name, capital first
// and no dot; module paths are attribute names.
bool is_class_target(const StrView& e) {
  if (e.size == 0 || is_regex_entry(e) || e.data[0] < 'A' || e.data[0] > 'Z') return false;
  return memchr(e.data, '.', e.size) == nullptr;
}

// Whether the method reads list `l`, and with which rule.
enum Rule : uint8_t { kNone, kTransformers, kExact, kTransformersOrExact, kModelOpt, kTransformersOrSubstr };

Rule rule_of(const MlxQuantConfig* c, List l) {
  using namespace conv;
  if (method_is(c, "fp8"))
    return l == List::ModulesToNotConvert ? kTransformersOrExact : l == List::IgnoredLayers ? kExact : kNone;
  if (method_is(c, "modelopt")) return l == List::ExcludeModules || l == List::Ignore ? kModelOpt : kNone;
  if (method_is(c, "mxfp4")) return l == List::ModulesToNotConvert ? kTransformers : kNone;
  if (method_is(c, "awq")) return l == List::ModulesToNotConvert ? kTransformersOrSubstr : kNone;
  return kNone;
}

}  // namespace

bool glob_match(const char* p, size_t pn, const char* s, size_t sn) {
  size_t pi = 0, si = 0, star = size_t(-1), star_s = 0;
  while (si < sn) {
    if (pi < pn) {
      const char c = p[pi];
      if (c == '*') {  // remember where the run may grow from
        star = ++pi;
        star_s = si;
        continue;
      }
      size_t adv = 1;
      bool ok = c == '?' || c == s[si];
      if (c == '[') {
        ok = class_match(p, pn, pi, s[si], &adv);
        if (adv == 0) {  // no `]`: a literal `[`
          adv = 1;
          ok = s[si] == '[';
        }
      }
      if (ok) {
        pi += adv;
        ++si;
        continue;
      }
    }
    if (star == size_t(-1)) return false;
    pi = star;  // the last `*` takes one byte more
    si = ++star_s;
  }
  while (pi < pn && p[pi] == '*') ++pi;
  return pi == pn;
}

ModuleExclusion module_excluded(const MlxQuantConfig* c, const char* m, size_t n) {
  ModuleExclusion x;
  if (!c) return x;
  // vLLM fp8.py reads ignored_layers, and modules_to_not_convert only when there is none.
  bool has_ignored_layers = false;
  for (uint32_t i = 0; i < c->module_list_count(); ++i)
    if (c->module_list(i) == List::IgnoredLayers) has_ignored_layers = true;
  for (uint32_t i = 0; i < c->module_list_count(); ++i) {
    const List l = c->module_list(i);
    const StrView e = c->module_list_entry(i);
    bool hit = false;
    switch (rule_of(c, l)) {
      case kTransformers: hit = transformers_skips(e, m, n); break;
      case kExact: hit = equals(e, m, n); break;
      case kTransformersOrExact: hit = transformers_skips(e, m, n) || (!has_ignored_layers && equals(e, m, n)); break;
      case kModelOpt: hit = contains(m, n, e) || glob_match(e.data, e.size, m, n); break;
      case kTransformersOrSubstr: hit = transformers_skips(e, m, n) || contains(m, n, e); break;
      default: break;
    }
    if (hit) {
      x.excluded = true;
      x.list = l;
      x.entry = e;
      return x;
    }
  }
  return x;
}

const char* module_lists_unsupported(const MlxQuantConfig* c, StrView* entry) {
  if (!c) return nullptr;
  const bool ct = conv::method_is(c, "compressed-tensors");
  for (uint32_t i = 0; i < c->module_list_count(); ++i) {
    const List l = c->module_list(i);
    const StrView e = c->module_list_entry(i);
    const char* why = nullptr;
    if (ct && (l == List::Ignore || l == List::CtTargets) && is_regex_entry(e)) {
      why = regex_unsupported(e.data + 3, e.size - 3);
    } else if (!ct) {
      const Rule r = rule_of(c, l);
      if ((r == kTransformers || r == kTransformersOrExact || r == kTransformersOrSubstr) && has_regex_syntax(e))
        why = regex_unsupported(e.data, e.size);
    }
    if (why) {
      *entry = e;
      return why;
    }
  }
  return nullptr;
}

CtModuleScheme ct_module_scheme(const MlxQuantConfig& c, const char* m, size_t n) {
  CtModuleScheme s;
  const uint32_t count = c.module_list_count();
  for (uint32_t i = 0; i < count; ++i) {
    if (c.module_list(i) != List::Ignore) continue;
    const StrView e = c.module_list_entry(i);
    if (ct_name_matches(e, m, n)) {
      s.ignored = true;
      s.entry = e;
      return s;
    }
  }
  // The first target in match_named_modules' order: sorted by ("re:" in target, target), a name
  // match before a class match. `best` is the chosen target's index; a later group listing the
  // same string takes it (target_to_scheme).
  enum Tier : uint8_t { kNoTier, kClassTier, kRegexTier, kExactTier };
  uint8_t tier = kNoTier;
  StrView best;
  for (uint32_t i = 0; i < count; ++i) {
    if (c.module_list(i) != List::CtTargets) continue;
    const StrView e = c.module_list_entry(i);
    uint8_t t = kNoTier;
    if (is_regex_entry(e)) t = regex_match(e.data + 3, e.size - 3, m, n) ? kRegexTier : kNoTier;
    else if (equals(e, m, n)) t = kExactTier;
    else if (is_class_target(e)) t = kClassTier;
    if (t == kNoTier) continue;
    // Python's str order (bytes: UTF-8 keeps code point order); an equal string later wins.
    const int cmp = compare(e, best);
    if (t > tier || (t == tier && cmp <= 0)) {
      tier = t;
      best = e;
      s.group = c.module_list_group(i);
    }
  }
  if (tier == kNoTier) return s;
  s.entry = best;
  s.matched = tier != kClassTier;
  s.by_class = tier == kClassTier;
  return s;
}

const char* module_list_name(MlxQuantConfig::ModuleList list) {
  switch (list) {
    case List::IgnoredLayers: return "ignored_layers";
    case List::ExcludeModules: return "exclude_modules";
    case List::Ignore: return "ignore";
    case List::CtTargets: return "config_groups targets";
    default: return "modules_to_not_convert";
  }
}

size_t excluded_text(char* out, size_t cap, MlxQuantConfig::ModuleList list, const StrView& entry,
                     const MlxQuantConfig& config) {
  if (cap == 0) return 0;
  size_t n = 0;
  auto put = [&](const char* s, size_t k) {
    for (size_t i = 0; i < k && n + 1 < cap; ++i) out[n++] = s[i];
  };
  auto puts = [&](const char* s) { put(s, strlen(s)); };
  const char* file = config_source_file(config.source());
  const char* name = module_list_name(list);
  // The fixed words, so the entry gets what room is left (cut with "...").
  const size_t fixed = strlen("stored quantized, yet  \"\" leaves it unquantized ()") + strlen(name) + strlen(file);
  const size_t room = cap - 1 > fixed ? cap - 1 - fixed : 0;
  puts("stored quantized, yet ");
  puts(name);
  puts(" \"");
  if (entry.size <= room) {
    put(entry.data, entry.size);
  } else if (room > 3) {
    put(entry.data, room - 3);
    puts("...");
  }
  puts("\" leaves it unquantized (");
  puts(file);
  puts(")");
  out[n] = '\0';
  return n;
}

Status refuse_excluded(LogicalModel& model, TensorRef at, MlxQuantConfig::ModuleList list, const StrView& entry,
                       const MlxQuantConfig& config) {
  char text[128];
  const size_t n = excluded_text(text, sizeof text, list, entry, config);
  return model.refuse(Status::ConventionExcludedQuantized, at, text, n, nullptr);
}

Status refuse_unread_lists(LogicalModel& model, const MlxQuantConfig* config) {
  StrView entry;
  const char* why = module_lists_unsupported(config, &entry);
  if (!why) return Status::Ok;
  TensorRef at;
  if (model.table_count() && model.table(0).count()) at = TensorRef{0, 0};
  char text[128];
  size_t n = 0;
  auto puts = [&](const char* s, size_t k) {
    for (size_t i = 0; i < k && n + 1 < sizeof text; ++i) text[n++] = s[i];
  };
  puts("module list entry not read (", 28);
  puts(why, strlen(why));
  puts("): ", 3);
  puts(entry.data, entry.size);
  return model.refuse(Status::QuantizationUnsupported, at, text, n, nullptr);
}

}  // namespace conv_detail
}  // namespace ws
