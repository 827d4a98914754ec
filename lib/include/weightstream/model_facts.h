// weightstream — model architecture facts (layers, heads, sizes, rope theta, ...) through one
// accessor, whether they come from GGUF metadata or from a Hugging Face config.json.
//
// GGUF: pass every reader event to a GgufFactsCollector; nothing of the metadata is stored except
// the facts themselves (and the architecture name, up to 63 bytes).
//
//   ws::GgufFactsCollector c;
//   for (;;) { ws::Event e = reader.next(); c.on_event(e); ... }
//   ws::ModelFacts f = c.facts();
//   if (f.get(ws::Fact::Layers).present) printf("%llu layers\n", (unsigned long long)f.get(ws::Fact::Layers).u);
//
// config.json: feed it in pieces of any size to a ConfigFactsParser, then finish().
//
// Keys read. GGUF ({arch} = general.architecture; keys under another prefix are ignored):
//   layers {arch}.block_count · heads {arch}.attention.head_count · kv_heads
//   {arch}.attention.head_count_kv · hidden_size {arch}.embedding_length · intermediate_size
//   {arch}.feed_forward_length · vocab_size {arch}.vocab_size, else the element count of
//   tokenizer.ggml.tokens (derived) · rope_theta {arch}.rope.freq_base · norm_eps
//   {arch}.attention.layer_norm_rms_epsilon or .layer_norm_epsilon · context_length
//   {arch}.context_length · experts {arch}.expert_count · experts_used {arch}.expert_used_count.
// config.json (root members; those of a "text_config" object, as multimodal models nest their
// language model, take precedence): num_hidden_layers · num_attention_heads ·
//   num_key_value_heads · hidden_size · intermediate_size · vocab_size · rope_theta ·
//   rms_norm_eps, layer_norm_eps, layer_norm_epsilon · max_position_embeddings ·
//   num_local_experts, n_routed_experts, num_experts · num_experts_per_tok · model_type.
// Both: kv_heads defaults to heads (marked derived) when only heads is given.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/json_document.h"
#include "weightstream/event.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"

namespace ws {

enum class Fact : uint8_t {
  Layers, Heads, KvHeads, HiddenSize, IntermediateSize, VocabSize, RopeTheta, NormEps,
  ContextLength, Experts, ExpertsUsed,
};
constexpr uint32_t kFactCount = 11;

// "layers", "heads", "kv_heads", "hidden_size", "intermediate_size", "vocab_size", "rope_theta",
// "norm_eps", "context_length", "experts", "experts_used"; "?" outside the enum.
const char* fact_name(Fact f);
// True for the facts that are real numbers (rope_theta, norm_eps); the others are integers.
bool fact_is_real(Fact f);

struct FactValue {
  bool present = false;  // the source gave it (or, with derived, implied it)
  bool derived = false;  // not a key of its own: kv_heads = heads, vocab = tokenizer token count
  uint64_t u = 0;        // integer facts (0 for real ones)
  double f = 0;          // every fact as a double
};

class ModelFacts {
 public:
  FactValue get(Fact f) const { return uint32_t(f) < kFactCount ? values_[uint32_t(f)] : FactValue(); }
  // Architecture: GGUF general.architecture, config.json model_type. NUL-terminated; an over-long
  // name (64 bytes or more) counts as absent.
  bool has_architecture() const { return arch_size_ > 0; }
  const char* architecture() const { return arch_; }
  size_t architecture_size() const { return arch_size_; }

  // For sources: set a fact (reals also set u = 0; integers also set f), the architecture.
  void set_integer(Fact f, uint64_t v, bool derived = false);
  void set_real(Fact f, double v);
  void set_architecture(const char* s, size_t n);
  void clear_architecture() { arch_size_ = 0, arch_[0] = '\0'; }
  // Facts of `other` that are present replace this one's (text_config over the root).
  void overlay(const ModelFacts& other);
  // kv_heads = heads when only heads is present.
  void apply_defaults();

 private:
  FactValue values_[kFactCount];
  char arch_[64] = {};
  size_t arch_size_ = 0;
};

class GgufFactsCollector {
 public:
  // Every event of the reader, in order (the non-KV ones are ignored).
  void on_event(const Event& e);
  // The facts so far; complete once the reader reached HeaderReady.
  ModelFacts facts() const;

 private:
  enum Pending : uint8_t { kNone, kArch, kFact };
  struct Slot {
    bool present = false;
    bool real = false;
    uint64_t u = 0;
    double f = 0;
    uint64_t prefix_hash = 0;  // hash of the key's first component, checked against the arch
  };
  Pending pending_ = kNone;
  uint32_t pending_fact_ = 0;
  uint64_t pending_hash_ = 0;
  // Two candidates per fact: before general.architecture arrives, a key under a leftover prefix
  // ("llama.block_count" in a qwen2 file) must not evict the architecture's own.
  Slot slots_[kFactCount][2];
  char arch_[64] = {};
  size_t arch_size_ = 0;
  bool arch_overflow_ = false;
  bool has_arch_ = false;
  bool has_tokens_ = false;
  uint64_t token_count_ = 0;
};

// Streams a config.json. feed() and finish() return the first error, sticky, with its absolute
// byte offset in error(): JSON errors as the lexer reports them, ConfigNotObject at the
// root value, ModelConfigInvalidFact at a fact's value that has the wrong type (a string for a
// count, a fraction or negative number for an integer fact, a non-string model_type, a
// text_config that is neither object nor null), JsonUnexpectedEnd at the end of a short input.
// A null value counts as absent.
class ConfigFactsParser {
 public:
  explicit ConfigFactsParser(const Limits& limits = Limits());
  Status feed(const void* data, size_t size);
  Status finish();
  const Error& error() const { return doc_.error; }
  // Valid after finish() returned Ok.
  const ModelFacts& facts() const { return result_; }

 private:
  enum Ctx : uint8_t { kStart, kKey, kValue, kSkip, kDone };
  Status handle(detail::JsonLexer::Token t);
  Status value(detail::JsonLexer::Token t);
  void remember(const uint8_t* from, const uint8_t* to);

  detail::JsonDocument doc_;  // lexer, first error, finished
  Ctx ctx_ = kStart;
  bool in_text_ = false;       // inside text_config
  int key_ = -1;               // what the current key is (see model_facts.cpp)
  char key_buf_[32] = {};
  size_t key_size_ = 0;
  bool key_overflow_ = false;
  char str_[64] = {};          // model_type being collected
  size_t str_size_ = 0;
  bool str_overflow_ = false;
  uint8_t tail_[48] = {};      // the last bytes consumed: a number's text for real facts
  size_t tail_size_ = 0;
  ModelFacts root_, text_, result_;
};

}  // namespace ws
