// weightstream — bitsandbytes' packed quant state JSON (bnb_quant_state.h: the rules and their
// upstream sources).
#include "bnb_quant_state.h"

#include <string.h>

namespace ws {

using detail::JsonLexer;

namespace {

struct KeyName {
  const char* text;
  uint8_t key;
};
// QuantState.as_dict's non-tensor items (functional.py), the only keys pack_dict_to_tensor writes.
const KeyName kKeys[] = {{"quant_type", 1},       {"blocksize", 2},   {"dtype", 3},         {"shape", 4},
                         {"nested_blocksize", 5}, {"nested_dtype", 6}, {"nested_offset", 7}};

constexpr uint8_t bit(uint8_t k) { return uint8_t(1u << k); }

}  // namespace

void BnbQuantStateParser::reset() {
  lexer_.reset(2);  // the root object and the shape list
  state_ = BnbQuantState();
  status_ = Status::Ok;
  error_pos_ = 0;
  key_ = kNone;
  seen_ = 0;
  in_shape_ = false;
  text_size_ = 0;
  text_long_ = false;
  recent_size_ = 0;
}

Status BnbQuantStateParser::fail(uint64_t at) {
  if (status_ == Status::Ok) {
    status_ = Status::BnbQuantStateInvalid;
    error_pos_ = at;
  }
  return status_;
}

void BnbQuantStateParser::remember(const uint8_t* p, size_t n) {
  const size_t cap = sizeof recent_;
  if (n >= cap) {
    memcpy(recent_, p + n - cap, cap);
    recent_size_ = uint32_t(cap);
    return;
  }
  const size_t keep = recent_size_ + n > cap ? cap - n : recent_size_;
  memmove(recent_, recent_ + recent_size_ - keep, keep);
  memcpy(recent_ + keep, p, n);
  recent_size_ = uint32_t(keep + n);
}

// The number just lexed (the last consumed() - token_pos() bytes) as f32: its decimal digits (at
// most 19 significant kept, the rest counted as a power of ten) times a power of ten in double,
// then rounded to f32. For the decimal Python's repr writes of an f32's value (float(x.item())),
// the double is within a few units in its last place of that f32, far nearer than half an f32
// unit, so the f32 is exactly the value bitsandbytes wrote. Longer texts than that writes are
// refused.
bool BnbQuantStateParser::number_as_f32(float* out) const {
  const uint64_t n = lexer_.consumed() - lexer_.token_pos();
  if (n == 0 || n > recent_size_ || n > 40) return false;
  const uint8_t* p = recent_ + recent_size_ - n;
  const uint8_t* end = p + n;
  const bool neg = *p == '-';
  if (neg) ++p;
  uint64_t m = 0;
  int32_t e10 = 0;
  uint32_t digits = 0;
  bool frac = false;
  for (; p < end && *p != 'e' && *p != 'E'; ++p) {
    if (*p == '.') {
      frac = true;
      continue;
    }
    const uint32_t d = uint32_t(*p - '0');
    if (digits < 19) {
      if (m != 0 || d != 0) ++digits;
      m = m * 10 + d;
      if (frac) --e10;
    } else if (!frac) {
      ++e10;  // an integer digit past the 19 kept
    }
  }
  if (p < end) {  // the exponent (the lexer checked the grammar)
    ++p;
    const bool eneg = *p == '-';
    if (*p == '-' || *p == '+') ++p;
    int32_t e = 0;
    for (; p < end; ++p) e = e < 1000 ? e * 10 + int32_t(*p - '0') : e;
    e10 += eneg ? -e : e;
  }
  static const double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  double v = double(m);
  if (m != 0) {
    // f32's range is 1e-45 .. 3.4e38: beyond +-90 the f32 is 0 or inf either way.
    if (e10 < -90) e10 = -90;
    if (e10 > 90) e10 = 90;
    while (e10 > 0) {
      const int32_t k = e10 > 22 ? 22 : e10;
      v *= kPow10[k];
      e10 -= k;
    }
    while (e10 < 0) {
      const int32_t k = -e10 > 22 ? 22 : -e10;
      v /= kPow10[k];
      e10 += k;
    }
  }
  const float f = float(neg ? -v : v);
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7F800000u) == 0x7F800000u) return false;  // past f32's range: no f32 wrote it
  *out = f;
  return true;
}

Status BnbQuantStateParser::value(JsonLexer::Token t) {
  const uint64_t at = lexer_.token_pos();
  switch (key_) {
    case kBlocksize:
    case kNestedBlocksize:
      if (t != JsonLexer::kNumber || !lexer_.number_is_u64() || lexer_.number_value() == 0) return fail(at);
      (key_ == kBlocksize ? state_.blocksize : state_.nested_blocksize) = lexer_.number_value();
      return Status::Ok;
    case kNestedOffset:
      if (t != JsonLexer::kNumber || !number_as_f32(&state_.nested_offset)) return fail(at);
      return Status::Ok;
    case kShape:
      if (t == JsonLexer::kArrayBegin && !in_shape_) {
        in_shape_ = true;
        state_.rank = 0;
        return Status::Ok;
      }
      return fail(at);  // null (no shape), or anything else
    default:
      return fail(at);  // quant_type / dtype / nested_dtype: a string (handled with its pieces)
  }
}

Status BnbQuantStateParser::handle(JsonLexer::Token t) {
  const uint64_t at = lexer_.token_pos();
  if (in_shape_) {  // elements of the shape list
    if (t == JsonLexer::kArrayEnd) {
      in_shape_ = false;
      if (state_.rank == 0) return fail(at);
      key_ = kNone;
      return Status::Ok;
    }
    if (t != JsonLexer::kNumber || !lexer_.number_is_u64() || lexer_.number_value() == 0 ||
        state_.rank == kMaxLogicalRank)
      return fail(at);
    state_.shape[state_.rank++] = lexer_.number_value();
    return Status::Ok;
  }
  switch (t) {
    case JsonLexer::kObjectBegin:
      if (lexer_.depth() != 1) return fail(at);  // only the root object
      return Status::Ok;
    case JsonLexer::kObjectEnd:
      return Status::Ok;
    case JsonLexer::kKeyPiece:
    case JsonLexer::kStringPiece: {
      if (lexer_.piece_first()) {
        text_size_ = 0;
        text_long_ = false;
      }
      const size_t n = lexer_.piece_size();
      if (text_size_ + n > sizeof text_) text_long_ = true;
      else memcpy(text_ + text_size_, lexer_.piece(), n);
      text_size_ += text_long_ ? 0 : uint32_t(n);
      if (!lexer_.piece_last()) return Status::Ok;
      if (t == JsonLexer::kKeyPiece) {
        key_ = kNone;
        for (const KeyName& k : kKeys)
          if (!text_long_ && strlen(k.text) == text_size_ && memcmp(k.text, text_, text_size_) == 0) key_ = Key(k.key);
        if (key_ == kNone) return fail(at);  // from_dict asserts every key is one it knows
        seen_ |= bit(key_);
        return Status::Ok;
      }
      const auto is = [&](const char* s) {
        return !text_long_ && strlen(s) == text_size_ && memcmp(s, text_, text_size_) == 0;
      };
      switch (key_) {
        case kQuantType:
          if (!is("nf4") && !is("fp4")) return fail(at);
          state_.fp4 = is("fp4");
          return Status::Ok;
        case kDtype:
          // dequantize_4bit: bfloat16, float16 or float32 (str(torch.x).strip("torch.")).
          if (is("bfloat16")) state_.dtype = DType::BF16;
          else if (is("float16")) state_.dtype = DType::F16;
          else if (is("float32")) state_.dtype = DType::F32;
          else return fail(at);
          return Status::Ok;
        case kNestedDtype:  // the absmax' dtype: quantize_4bit's absmax are float32
          return is("float32") ? Status::Ok : fail(at);
        default:
          return fail(at);
      }
    }
    default:
      return value(t);
  }
}

Status BnbQuantStateParser::feed(const uint8_t* data, size_t size) {
  if (status_ != Status::Ok) return status_;
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  for (;;) {
    const uint8_t* before = p;
    const JsonLexer::Token t = lexer_.next(&p, end);
    remember(before, size_t(p - before));
    if (t == JsonLexer::kNeedMore) return Status::Ok;
    if (t == JsonLexer::kError) return fail(lexer_.error_pos());
    if (lexer_.depth() == 0 && t != JsonLexer::kObjectEnd) return fail(lexer_.token_pos());  // the root: an object
    if (handle(t) != Status::Ok) return status_;
  }
}

Status BnbQuantStateParser::finish() {
  if (status_ != Status::Ok) return status_;
  if (!lexer_.complete()) return fail(lexer_.consumed());
  const uint8_t required = bit(kQuantType) | bit(kBlocksize) | bit(kDtype) | bit(kShape);
  const uint8_t nested = bit(kNestedBlocksize) | bit(kNestedDtype) | bit(kNestedOffset);
  if ((seen_ & required) != required) return fail(lexer_.consumed());
  if ((seen_ & nested) != 0 && (seen_ & nested) != nested) return fail(lexer_.consumed());
  state_.nested = (seen_ & nested) == nested;
  return Status::Ok;
}

}  // namespace ws
