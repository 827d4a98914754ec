// Canonical tensor names (see canonical_names.h): one pattern table, matched both ways.
#include "weightstream/canonical_names.h"

#include <string.h>

namespace ws {
namespace {

// Flags on a row. kModel: the HF pattern follows a model prefix ("model." and its multimodal
// variants). The sandwich flags restrict the HF pattern (not the GGUF one, which is unambiguous)
// to one meaning of post_attention_layernorm.
enum : uint8_t { kModel = 1, kHfSandwichOnly = 2, kHfPlainOnly = 4 };

struct Row {
  const char* canon;
  const char* hf;    // null: no HF/MLX counterpart
  const char* gguf;  // null: no GGUF counterpart
  uint8_t flags;
};

// Order matters only for the reverse mapping: the first row with a counterpart wins.
constexpr Row kRows[] = {
    {"embedding", "embed_tokens", "token_embd", kModel},
    {"norm", "norm", "output_norm", kModel},
    {"output", "lm_head", "output", 0},
    {"rope.freqs", nullptr, "rope_freqs", 0},
    {"layers.{n}.attention_norm", "layers.{n}.input_layernorm", "blk.{n}.attn_norm", kModel},
    {"layers.{n}.attention.q", "layers.{n}.self_attn.q_proj", "blk.{n}.attn_q", kModel},
    {"layers.{n}.attention.k", "layers.{n}.self_attn.k_proj", "blk.{n}.attn_k", kModel},
    {"layers.{n}.attention.v", "layers.{n}.self_attn.v_proj", "blk.{n}.attn_v", kModel},
    {"layers.{n}.attention.o", "layers.{n}.self_attn.o_proj", "blk.{n}.attn_output", kModel},
    {"layers.{n}.attention.qkv", "layers.{n}.self_attn.qkv_proj", "blk.{n}.attn_qkv", kModel},
    {"layers.{n}.attention.q_norm", "layers.{n}.self_attn.q_norm", "blk.{n}.attn_q_norm", kModel},
    {"layers.{n}.attention.k_norm", "layers.{n}.self_attn.k_norm", "blk.{n}.attn_k_norm", kModel},
    {"layers.{n}.attention.post_norm", "layers.{n}.post_attention_layernorm",
     "blk.{n}.post_attention_norm", kModel | kHfSandwichOnly},
    {"layers.{n}.ffn_norm", "layers.{n}.post_attention_layernorm", "blk.{n}.ffn_norm",
     kModel | kHfPlainOnly},
    {"layers.{n}.ffn_norm", "layers.{n}.pre_feedforward_layernorm", nullptr, kModel},
    {"layers.{n}.ffn.post_norm", "layers.{n}.post_feedforward_layernorm", "blk.{n}.post_ffw_norm",
     kModel},
    {"layers.{n}.ffn.gate", "layers.{n}.mlp.gate_proj", "blk.{n}.ffn_gate", kModel},
    {"layers.{n}.ffn.up", "layers.{n}.mlp.up_proj", "blk.{n}.ffn_up", kModel},
    {"layers.{n}.ffn.down", "layers.{n}.mlp.down_proj", "blk.{n}.ffn_down", kModel},
    {"layers.{n}.ffn.gate_up", "layers.{n}.mlp.gate_up_proj", nullptr, kModel},
    // Mixture of experts.
    {"layers.{n}.router", "layers.{n}.mlp.gate", "blk.{n}.ffn_gate_inp", kModel},
    {"layers.{n}.router", "layers.{n}.block_sparse_moe.gate", nullptr, kModel},
    {"layers.{n}.experts.{e}.ffn.gate", "layers.{n}.mlp.experts.{e}.gate_proj", nullptr, kModel},
    {"layers.{n}.experts.{e}.ffn.up", "layers.{n}.mlp.experts.{e}.up_proj", nullptr, kModel},
    {"layers.{n}.experts.{e}.ffn.down", "layers.{n}.mlp.experts.{e}.down_proj", nullptr, kModel},
    {"layers.{n}.experts.{e}.ffn.gate", "layers.{n}.block_sparse_moe.experts.{e}.w1", nullptr,
     kModel},
    {"layers.{n}.experts.{e}.ffn.up", "layers.{n}.block_sparse_moe.experts.{e}.w3", nullptr,
     kModel},
    {"layers.{n}.experts.{e}.ffn.down", "layers.{n}.block_sparse_moe.experts.{e}.w2", nullptr,
     kModel},
    {"layers.{n}.experts.ffn.gate", nullptr, "blk.{n}.ffn_gate_exps", 0},
    {"layers.{n}.experts.ffn.up", nullptr, "blk.{n}.ffn_up_exps", 0},
    {"layers.{n}.experts.ffn.down", nullptr, "blk.{n}.ffn_down_exps", 0},
    {"layers.{n}.shared_expert.ffn.gate", "layers.{n}.mlp.shared_expert.gate_proj",
     "blk.{n}.ffn_gate_shexp", kModel},
    {"layers.{n}.shared_expert.ffn.up", "layers.{n}.mlp.shared_expert.up_proj",
     "blk.{n}.ffn_up_shexp", kModel},
    {"layers.{n}.shared_expert.ffn.down", "layers.{n}.mlp.shared_expert.down_proj",
     "blk.{n}.ffn_down_shexp", kModel},
    {"layers.{n}.shared_expert.ffn.gate", "layers.{n}.mlp.shared_experts.gate_proj", nullptr,
     kModel},
    {"layers.{n}.shared_expert.ffn.up", "layers.{n}.mlp.shared_experts.up_proj", nullptr, kModel},
    {"layers.{n}.shared_expert.ffn.down", "layers.{n}.mlp.shared_experts.down_proj", nullptr,
     kModel},
    {"layers.{n}.shared_expert.router", "layers.{n}.mlp.shared_expert_gate",
     "blk.{n}.ffn_gate_inp_shexp", kModel},
};

// Where HF/MLX keep the text model: plain, and the two multimodal layouts (LLaVA-style and the
// newer transformers one). The reverse mapping writes the first.
constexpr const char* kModelPrefixes[] = {"model.", "language_model.model.",
                                          "model.language_model."};
constexpr const char* kRootPrefixes[] = {"", "language_model."};

// The last component, carried over: weights, biases, and MLX's quantization companions.
constexpr const char* kSuffixes[] = {"weight", "bias", "scales", "biases"};

struct Capture {
  const char* data = nullptr;
  size_t size = 0;
};

// Matches s[0, n) against a pattern exactly; {n} and {e} take 1..9 decimal digits without a
// leading zero (so that the reverse mapping writes back exactly the same text).
bool match(const char* pat, const char* s, size_t n, Capture caps[2]) {
  size_t i = 0;
  while (*pat) {
    if (*pat == '{') {
      Capture& c = caps[pat[1] == 'e' ? 1 : 0];
      pat += 3;
      size_t start = i;
      while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 9) ++i;
      size_t len = i - start;
      if (len == 0 || (len > 1 && s[start] == '0')) return false;
      if (i < n && s[i] >= '0' && s[i] <= '9') return false;  // ten digits or more
      c.data = s + start;
      c.size = len;
      continue;
    }
    if (i >= n || s[i] != *pat) return false;
    ++i;
    ++pat;
  }
  return i == n;
}

// Appends to out while it fits; `len` keeps counting past the end so the caller can tell.
struct Writer {
  char* out;
  size_t cap;
  size_t len = 0;
  void put(const char* s, size_t n) {
    if (n != 0 && len + n <= cap) memcpy(out + len, s, n);  // out may be null when cap is 0
    len += n;
  }
  void put(const char* z) { put(z, strlen(z)); }
};

size_t finish(Writer& w) {
  if (w.len > w.cap) return kNameTooSmall;
  if (w.len < w.cap) w.out[w.len] = '\0';
  return w.len;
}

void render(Writer& w, const char* prefix, const char* tmpl, const Capture caps[2],
            const char* suffix, size_t suffix_size) {
  w.put(prefix);
  for (const char* p = tmpl; *p;) {
    if (*p == '{') {
      const Capture& c = caps[p[1] == 'e' ? 1 : 0];
      w.put(c.data, c.size);
      p += 3;
    } else {
      const char* q = p;
      while (*q && *q != '{') ++q;
      w.put(p, size_t(q - p));
      p = q;
    }
  }
  w.put(suffix, suffix_size);
}

// Splits "stem.suffix" where suffix is one the table carries over; false otherwise.
bool split_suffix(const char* name, size_t n, size_t* stem_size) {
  size_t dot = n;
  while (dot > 0 && name[dot - 1] != '.') --dot;
  if (dot < 2) return false;  // no dot, or an empty stem
  const char* suffix = name + dot;
  size_t suffix_size = n - dot;
  for (const char* s : kSuffixes) {
    if (strlen(s) == suffix_size && memcmp(s, suffix, suffix_size) == 0) {
      *stem_size = dot - 1;
      return true;
    }
  }
  return false;
}

bool starts_with(const char* s, size_t n, const char* prefix, size_t* len) {
  *len = strlen(prefix);
  return *len <= n && memcmp(s, prefix, *len) == 0;
}

bool hf_row_allowed(const Row& r, const NameOptions& o) {
  if (!r.hf) return false;
  if ((r.flags & kHfSandwichOnly) && !o.sandwich_norms) return false;
  if ((r.flags & kHfPlainOnly) && o.sandwich_norms) return false;
  return true;
}

size_t copy_unchanged(const char* name, size_t n, char* out, size_t out_size) {
  Writer w{out, out_size};
  w.put(name, n);
  return finish(w);
}

}  // namespace

NameOptions name_options_for_architecture(const char* arch, size_t n) {
  NameOptions o;
  static constexpr const char* kSandwich[] = {"gemma2", "gemma3", "gemma3_text"};
  for (const char* a : kSandwich)
    if (strlen(a) == n && memcmp(a, arch, n) == 0) o.sandwich_norms = true;
  return o;
}

size_t canonical_name(const char* name, size_t n, char* out, size_t out_size,
                      const NameOptions& options, NameFamily* family) {
  if (family) *family = NameFamily::Unmapped;
  size_t stem = 0;
  if (split_suffix(name, n, &stem)) {
    const char* suffix = name + stem;  // ".weight" etc., dot included
    size_t suffix_size = n - stem;
    Capture caps[2];
    for (const Row& r : kRows) {
      if (r.gguf && match(r.gguf, name, stem, caps)) {
        if (family) *family = NameFamily::Gguf;
        Writer w{out, out_size};
        render(w, "", r.canon, caps, suffix, suffix_size);
        return finish(w);
      }
    }
    for (const Row& r : kRows) {
      if (!hf_row_allowed(r, options)) continue;
      const char* const* prefixes = (r.flags & kModel) ? kModelPrefixes : kRootPrefixes;
      size_t count = (r.flags & kModel) ? sizeof kModelPrefixes / sizeof *kModelPrefixes
                                        : sizeof kRootPrefixes / sizeof *kRootPrefixes;
      for (size_t i = 0; i < count; ++i) {
        size_t plen = 0;
        if (!starts_with(name, stem, prefixes[i], &plen)) continue;
        if (match(r.hf, name + plen, stem - plen, caps)) {
          if (family) *family = NameFamily::HuggingFace;
          Writer w{out, out_size};
          render(w, "", r.canon, caps, suffix, suffix_size);
          return finish(w);
        }
      }
    }
  }
  return copy_unchanged(name, n, out, out_size);
}

size_t name_from_canonical(const char* canonical, size_t n, NameFamily target, char* out,
                           size_t out_size, const NameOptions& options, bool* mapped) {
  if (mapped) *mapped = false;
  size_t stem = 0;
  if (target != NameFamily::Unmapped && split_suffix(canonical, n, &stem)) {
    Capture caps[2];
    for (const Row& r : kRows) {
      const bool hf = target == NameFamily::HuggingFace;
      if (hf ? !hf_row_allowed(r, options) : !r.gguf) continue;
      if (!match(r.canon, canonical, stem, caps)) continue;
      if (mapped) *mapped = true;
      Writer w{out, out_size};
      render(w, hf && (r.flags & kModel) ? kModelPrefixes[0] : "", hf ? r.hf : r.gguf, caps,
             canonical + stem, n - stem);
      return finish(w);
    }
  }
  return copy_unchanged(canonical, n, out, out_size);
}

}  // namespace ws
