// Model facts from a streamed Hugging Face config.json (see model_facts.h).
#include <string.h>

#include "weightstream/detail/json_strings.h"
#include "weightstream/model_facts.h"

namespace ws {
namespace {

using detail::JsonLexer;

// Key kinds beyond the facts (0 .. kFactCount-1).
constexpr int kModelType = 100;
constexpr int kTextConfig = 101;

struct ConfigKey {
  const char* key;
  int kind;
};
constexpr ConfigKey kConfigKeys[] = {
    {"num_hidden_layers", int(Fact::Layers)},
    {"num_attention_heads", int(Fact::Heads)},
    {"num_key_value_heads", int(Fact::KvHeads)},
    {"hidden_size", int(Fact::HiddenSize)},
    {"intermediate_size", int(Fact::IntermediateSize)},
    {"vocab_size", int(Fact::VocabSize)},
    {"rope_theta", int(Fact::RopeTheta)},
    {"rms_norm_eps", int(Fact::NormEps)},
    {"layer_norm_eps", int(Fact::NormEps)},
    {"layer_norm_epsilon", int(Fact::NormEps)},
    {"max_position_embeddings", int(Fact::ContextLength)},
    {"num_local_experts", int(Fact::Experts)},
    {"n_routed_experts", int(Fact::Experts)},
    {"num_experts", int(Fact::Experts)},
    {"num_experts_per_tok", int(Fact::ExpertsUsed)},
    {"model_type", kModelType},
    {"text_config", kTextConfig},
};

// Powers of ten exact in a double (10^22 is the last).
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// A JSON number's text (already validated by the lexer) as a double, without strtod (locale-
// dependent, and not on every target). Exact — the correctly rounded value — whenever the
// significant digits fit in 2^53 and the decimal exponent in ±22, which covers every value
// configs write (1e-05, 1e-06, 500000.0, 1000000.0); otherwise within a few ulps.
bool parse_real(const uint8_t* s, size_t n, double* out) {
  size_t i = 0;
  if (i < n && s[i] == '-') return false;  // facts are non-negative
  uint64_t mant = 0;
  int digits = 0, exp10 = 0;
  bool seen_nonzero = false;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (s[i] != '0') seen_nonzero = true;
    if (!seen_nonzero) continue;
    if (digits < 19) {
      mant = mant * 10 + (s[i] - '0');
      ++digits;
    } else {
      ++exp10;  // dropped integer digit
    }
  }
  if (i < n && s[i] == '.') {
    for (++i; i < n && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (s[i] != '0') seen_nonzero = true;
      if (!seen_nonzero) {
        --exp10;
        continue;
      }
      if (digits < 19) {
        mant = mant * 10 + (s[i] - '0');
        ++digits;
        --exp10;
      }
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    int e = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i)
      if (e < 100000) e = e * 10 + (s[i] - '0');
    exp10 += neg ? -e : e;
  }
  if (mant == 0) {
    *out = 0;
    return true;
  }
  // Trailing zeros ("0.000001000") would push the exponent out of the exact range.
  while (mant % 10 == 0) {
    mant /= 10;
    ++exp10;
  }
  double v = double(mant);
  if (mant <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
    *out = exp10 >= 0 ? v * kPow10[exp10] : v / kPow10[-exp10];
    return true;
  }
  // Outside the exact range: scale step by step, stopping at overflow or underflow.
  while (exp10 > 0 && v < 1e300) {
    int step = exp10 > 22 ? 22 : exp10;
    v *= kPow10[step];
    exp10 -= step;
  }
  while (exp10 < 0 && v > 1e-300) {
    int step = -exp10 > 22 ? 22 : -exp10;
    v /= kPow10[step];
    exp10 += step;
  }
  if (exp10 > 0 || v > 1.7976931348623157e308) return false;  // not a finite double
  *out = exp10 < 0 ? 0 : v;
  return true;
}

}  // namespace

ConfigFactsParser::ConfigFactsParser(const Limits& limits) : doc_(limits.max_nesting) {}

void ConfigFactsParser::remember(const uint8_t* from, const uint8_t* to) {
  size_t n = size_t(to - from);
  if (n >= sizeof tail_) {
    memcpy(tail_, to - sizeof tail_, sizeof tail_);
    tail_size_ = sizeof tail_;
    return;
  }
  size_t keep = tail_size_ + n > sizeof tail_ ? sizeof tail_ - n : tail_size_;
  memmove(tail_, tail_ + tail_size_ - keep, keep);
  memcpy(tail_ + keep, from, n);
  tail_size_ = keep + n;
}

Status ConfigFactsParser::feed(const void* data, size_t size) {
  // Every byte consumed is remembered: a real number's text, read back by value().
  return doc_.feed(
      data, size, [this](JsonLexer::Token t) { return handle(t); },
      [this](const uint8_t* from, const uint8_t* to) { remember(from, to); });
}

Status ConfigFactsParser::handle(JsonLexer::Token t) {
  switch (ctx_) {
    case kStart:
      if (t != JsonLexer::kObjectBegin) return doc_.fail(Status::ConfigNotObject, doc_.lexer.token_pos());
      ctx_ = kKey;
      return Status::Ok;
    case kKey: {
      if (t == JsonLexer::kObjectEnd) {
        // The end of text_config returns to the root's members; the root's ends the document.
        if (in_text_) {
          in_text_ = false;
        } else {
          ctx_ = kDone;
        }
        return Status::Ok;
      }
      // A key, in pieces: matched from a small buffer (longer keys are none of ours).
      if (!conv_detail::small_piece(doc_.lexer, key_buf_, &key_size_, &key_overflow_)) return Status::Ok;
      key_ = -1;
      if (!key_overflow_) {
        for (const ConfigKey& k : kConfigKeys)
          if (strlen(k.key) == key_size_ && memcmp(k.key, key_buf_, key_size_) == 0) key_ = k.kind;
      }
      if (key_ == kTextConfig && in_text_) key_ = -1;  // only one level of nesting is ours
      ctx_ = kValue;
      str_size_ = 0;
      str_overflow_ = false;
      return Status::Ok;
    }
    case kValue:
      return value(t);
    case kSkip:
      if (doc_.skipping(t)) ctx_ = kKey;
      return Status::Ok;
    default:
      return Status::Ok;
  }
}

Status ConfigFactsParser::value(JsonLexer::Token t) {
  ModelFacts& into = in_text_ ? text_ : root_;
  const uint64_t at = doc_.lexer.token_pos();
  if (key_ < 0) {
    ctx_ = doc_.begin_skip(t) ? kKey : kSkip;
    return Status::Ok;
  }
  if (t == JsonLexer::kNull) {  // "absent", as transformers reads it
    ctx_ = kKey;
    return Status::Ok;
  }
  if (key_ == kTextConfig) {
    if (t != JsonLexer::kObjectBegin) return doc_.fail(Status::ModelConfigInvalidFact, at);
    in_text_ = true;
    ctx_ = kKey;
    return Status::Ok;
  }
  if (key_ == kModelType) {
    if (t != JsonLexer::kStringPiece) return doc_.fail(Status::ModelConfigInvalidFact, at);
    size_t n = doc_.lexer.piece_size();
    if (str_size_ + n >= sizeof str_) {
      str_overflow_ = true;
    } else {
      memcpy(str_ + str_size_, doc_.lexer.piece(), n);
      str_size_ += n;
    }
    if (!doc_.lexer.piece_last()) return Status::Ok;
    if (str_overflow_)
      into.clear_architecture();
    else
      into.set_architecture(str_, str_size_);
    ctx_ = kKey;
    return Status::Ok;
  }
  Fact fact = Fact(key_);
  if (t != JsonLexer::kNumber) return doc_.fail(Status::ModelConfigInvalidFact, at);
  if (fact_is_real(fact)) {
    uint64_t len = doc_.lexer.consumed() - at;
    double v = 0;
    if (len > tail_size_ || !parse_real(tail_ + tail_size_ - len, size_t(len), &v))
      return doc_.fail(Status::ModelConfigInvalidFact, at);
    into.set_real(fact, v);
  } else {
    if (!doc_.lexer.number_is_u64()) return doc_.fail(Status::ModelConfigInvalidFact, at);
    into.set_integer(fact, doc_.lexer.number_value());
  }
  ctx_ = kKey;
  return Status::Ok;
}

Status ConfigFactsParser::finish() {
  if (Status s = doc_.finish(); s != Status::Ok) return s;
  result_ = root_;
  result_.overlay(text_);
  result_.apply_defaults();
  return Status::Ok;
}

}  // namespace ws
