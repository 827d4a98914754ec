// Model facts (see model_facts.h): the value type and the GGUF metadata collector.
#include "weightstream/model_facts.h"

#include <string.h>

namespace ws {
namespace {

constexpr const char* kFactNames[kFactCount] = {
    "layers",   "heads",      "kv_heads",       "hidden_size", "intermediate_size", "vocab_size",
    "rope_theta", "norm_eps", "context_length", "experts",     "experts_used",
};

// GGUF keys after "{arch}.".
struct GgufKey {
  const char* rest;
  Fact fact;
};
constexpr GgufKey kGgufKeys[] = {
    {"block_count", Fact::Layers},
    {"attention.head_count", Fact::Heads},
    {"attention.head_count_kv", Fact::KvHeads},
    {"embedding_length", Fact::HiddenSize},
    {"feed_forward_length", Fact::IntermediateSize},
    {"vocab_size", Fact::VocabSize},
    {"rope.freq_base", Fact::RopeTheta},
    {"attention.layer_norm_rms_epsilon", Fact::NormEps},
    {"attention.layer_norm_epsilon", Fact::NormEps},
    {"context_length", Fact::ContextLength},
    {"expert_count", Fact::Experts},
    {"expert_used_count", Fact::ExpertsUsed},
};

// FNV-1a: the collector keeps a key prefix's hash, not its bytes, until the architecture is known.
uint64_t fnv1a(const char* s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ uint8_t(s[i])) * 1099511628211ull;
  return h;
}

bool is_real_type(GgufType t) { return t == GgufType::F32 || t == GgufType::F64; }
bool is_signed_type(GgufType t) {
  return t == GgufType::I8 || t == GgufType::I16 || t == GgufType::I32 || t == GgufType::I64;
}

}  // namespace

const char* fact_name(Fact f) {
  return uint32_t(f) < kFactCount ? kFactNames[uint32_t(f)] : "?";
}

bool fact_is_real(Fact f) { return f == Fact::RopeTheta || f == Fact::NormEps; }

void ModelFacts::set_integer(Fact f, uint64_t v, bool derived) {
  FactValue& x = values_[uint32_t(f)];
  x.present = true;
  x.derived = derived;
  x.u = v;
  x.f = double(v);
}

void ModelFacts::set_real(Fact f, double v) {
  FactValue& x = values_[uint32_t(f)];
  x.present = true;
  x.derived = false;
  x.u = 0;
  x.f = v;
}

void ModelFacts::set_architecture(const char* s, size_t n) {
  if (n == 0 || n >= sizeof arch_) {
    clear_architecture();
    return;
  }
  memcpy(arch_, s, n);
  arch_[n] = '\0';
  arch_size_ = n;
}

void ModelFacts::overlay(const ModelFacts& other) {
  for (uint32_t i = 0; i < kFactCount; ++i)
    if (other.values_[i].present) values_[i] = other.values_[i];
  if (other.has_architecture()) set_architecture(other.arch_, other.arch_size_);
}

void ModelFacts::apply_defaults() {
  const FactValue& heads = values_[uint32_t(Fact::Heads)];
  if (heads.present && !values_[uint32_t(Fact::KvHeads)].present)
    set_integer(Fact::KvHeads, heads.u, true);
}

void GgufFactsCollector::on_event(const Event& e) {
  switch (e.type) {
    case EventType::KvBegin: {
      pending_ = kNone;
      const char* k = e.key.data;
      size_t n = e.key.size;
      if (e.key.equals("general.architecture")) {
        if (e.value_type == GgufType::String) {
          pending_ = kArch;
          arch_size_ = 0;
          arch_overflow_ = false;
        }
        return;
      }
      if (e.key.equals("tokenizer.ggml.tokens")) {
        if (e.value_type == GgufType::Array) {
          has_tokens_ = true;
          token_count_ = e.count;
        }
        return;
      }
      size_t dot = 0;
      while (dot < n && k[dot] != '.') ++dot;
      if (dot == 0 || dot == n) return;
      const char* rest = k + dot + 1;
      size_t rest_size = n - dot - 1;
      for (const GgufKey& g : kGgufKeys) {
        if (strlen(g.rest) != rest_size || memcmp(g.rest, rest, rest_size) != 0) continue;
        // Scalars only: per-layer arrays (head_count_kv in some models) have no single value.
        if (e.value_type == GgufType::Array || e.value_type == GgufType::String ||
            e.value_type == GgufType::Bool)
          return;
        pending_ = kFact;
        pending_fact_ = uint32_t(g.fact);
        pending_hash_ = fnv1a(k, dot);
        return;
      }
      return;
    }
    case EventType::KvScalar: {
      if (pending_ != kFact) return;
      pending_ = kNone;
      Fact fact = Fact(pending_fact_);
      Slot s;
      s.prefix_hash = pending_hash_;
      s.present = true;
      GgufType t = e.value_type;
      if (fact_is_real(fact)) {
        s.real = true;
        s.f = is_real_type(t) ? e.f : is_signed_type(t) ? double(e.i) : double(e.u);
      } else {
        if (is_real_type(t) || (is_signed_type(t) && e.i < 0)) return;  // not a count
        s.u = is_signed_type(t) ? uint64_t(e.i) : e.u;
      }
      // With the architecture known, another prefix's key (a leftover of a conversion) must not
      // replace the architecture's own.
      if (has_arch_ && !arch_overflow_ && s.prefix_hash != fnv1a(arch_, arch_size_)) return;
      Slot* c = slots_[pending_fact_];
      if (c[0].present && c[0].prefix_hash != s.prefix_hash)
        c[1] = s;  // a second prefix (a third replaces it: files carry one leftover at most)
      else
        c[0] = s;
      return;
    }
    case EventType::KvBytes:
      if (pending_ != kArch) return;
      if (arch_size_ + e.size >= sizeof arch_) {
        arch_overflow_ = true;
      } else {
        memcpy(arch_ + arch_size_, e.data, e.size);
        arch_size_ += e.size;
      }
      if (e.last) has_arch_ = true;
      return;
    case EventType::KvEnd:
      // An empty string comes without KvBytes.
      if (pending_ == kArch) has_arch_ = true;
      pending_ = kNone;
      return;
    default:
      return;
  }
}

ModelFacts GgufFactsCollector::facts() const {
  ModelFacts f;
  if (!has_arch_ || arch_overflow_ || arch_size_ == 0) return f;
  f.set_architecture(arch_, arch_size_);
  uint64_t h = fnv1a(arch_, arch_size_);
  for (uint32_t i = 0; i < kFactCount; ++i) {
    const Slot& s = slots_[i][0].present && slots_[i][0].prefix_hash == h ? slots_[i][0] : slots_[i][1];
    if (!s.present || s.prefix_hash != h) continue;
    if (s.real)
      f.set_real(Fact(i), s.f);
    else
      f.set_integer(Fact(i), s.u);
  }
  if (!f.get(Fact::VocabSize).present && has_tokens_)
    f.set_integer(Fact::VocabSize, token_count_, true);
  f.apply_defaults();
  return f;
}

}  // namespace ws
