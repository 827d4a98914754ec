// The resumable JSON lexer. Every place where input can run out is a state, so a document split
// anywhere (even inside a UTF-8 sequence, an escape or a number) lexes exactly as if whole.
#include "weightstream/detail/json_lexer.h"

#include <string.h>

#include "weightstream/detail/json_scan.h"

namespace ws {
namespace detail {

namespace {

const char* const kLiterals[3] = {"true", "false", "null"};
const uint8_t kLiteralLen[3] = {4, 5, 4};
// The short escapes: the byte after the backslash (the first 8), then the byte it stands for.
const char kShortEscapes[16] = {'"', '\\', '/', 'b', 'f', 'n', 'r', 't',
                                '"', '\\', '/', '\b', '\f', '\n', '\r', '\t'};

inline const uint8_t* skip_ws(const uint8_t* p, const uint8_t* end) {
  while (p < end && json_is_ws(*p)) ++p;
  return p;
}

inline int hex_value(uint8_t c) {
  if (uint8_t(c - '0') <= 9) return c - '0';
  // 'A'..'F' and 'a'..'f' alike: nothing else lands on 0..5.
  uint8_t lower = uint8_t((c | 0x20) - 'a');
  return lower <= 5 ? lower + 10 : -1;
}

}  // namespace

void JsonLexer::reset(uint32_t max_nesting) {
  static_cast<JsonLexerState&>(*this) = JsonLexerState();
  max_nesting_ = max_nesting < kMaxNestingSupported ? max_nesting : kMaxNestingSupported;
}

JsonLexer::Token JsonLexer::next(const uint8_t** pp, const uint8_t* end) {
  if (status_ != Status::Ok) return kError;
  if (has_deferred_) {
    has_deferred_ = false;
    return fail_pos(deferred_status_, deferred_pos_);
  }
  const uint8_t* p = *pp;
  base_ = p;
  base_pos_ = pos_;
  Token t = lex(p, end);
  pos_ += uint64_t(p - *pp);
  *pp = p;
  return t;
}

JsonLexer::Token JsonLexer::fail(Status s, const uint8_t* at) { return fail_pos(s, at_pos(at)); }

JsonLexer::Token JsonLexer::fail_pos(Status s, uint64_t pos) {
  status_ = s;
  err_pos_ = pos;
  return kError;
}

// An error inside a string comes after the string's content up to that byte: that content is
// handed out first, so the consumer sees the same pieces however the input was cut (a consumer
// that rejects the string's very presence then reports that, at the opening quote).
JsonLexer::Token JsonLexer::string_error(Status s, uint64_t pos, const uint8_t* run, const uint8_t* p) {
  if (p != run || pending_first_) {
    has_deferred_ = true;
    deferred_status_ = s;
    deferred_pos_ = pos;
    return emit_piece(run, size_t(p - run), false);
  }
  return fail_pos(s, pos);
}

JsonLexer::Token JsonLexer::push(bool is_object, const uint8_t* at) {
  tok_pos_ = at_pos(at);
  if (depth_ >= max_nesting_) return fail(Status::NestingTooDeep, at);
  uint32_t bit = uint32_t(1) << (depth_ & 31);
  if (is_object)
    stack_[depth_ >> 5] |= bit;
  else
    stack_[depth_ >> 5] &= ~bit;
  ++depth_;
  state_ = is_object ? kObjectFirst : kArrayFirst;
  return is_object ? kObjectBegin : kArrayBegin;
}

JsonLexer::Token JsonLexer::pop(Token t) {
  --depth_;
  state_ = depth_ == 0 ? kDone : kAfterValue;
  return t;
}

JsonLexer::Token JsonLexer::emit_piece(const uint8_t* data, size_t n, bool last) {
  piece_ = data;
  piece_size_ = n;
  piece_first_ = pending_first_;
  pending_first_ = false;
  piece_last_ = last;
  tok_pos_ = str_pos_;
  return in_key_ ? kKeyPiece : kStringPiece;
}

JsonLexer::Token JsonLexer::emit_codepoint(uint32_t cp) {
  size_t n;
  if (cp < 0x80) {
    esc_buf_[0] = uint8_t(cp);
    n = 1;
  } else if (cp < 0x800) {
    esc_buf_[0] = uint8_t(0xC0 | (cp >> 6));
    esc_buf_[1] = uint8_t(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    esc_buf_[0] = uint8_t(0xE0 | (cp >> 12));
    esc_buf_[1] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    esc_buf_[2] = uint8_t(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    esc_buf_[0] = uint8_t(0xF0 | (cp >> 18));
    esc_buf_[1] = uint8_t(0x80 | ((cp >> 12) & 0x3F));
    esc_buf_[2] = uint8_t(0x80 | ((cp >> 6) & 0x3F));
    esc_buf_[3] = uint8_t(0x80 | (cp & 0x3F));
    n = 4;
  }
  state_ = kString;
  return emit_piece(esc_buf_, n, false);
}

JsonLexer::Token JsonLexer::lex(const uint8_t*& p, const uint8_t* end) {
  for (;;) {
    switch (state_) {
      case kValue:
      case kArrayFirst: {
        p = skip_ws(p, end);
        if (p == end) return kNeedMore;
        uint8_t c = *p;
        if (c == ']' && state_ == kArrayFirst) {
          tok_pos_ = at_pos(p);
          ++p;
          return pop(kArrayEnd);
        }
        switch (c) {
          case '{':
            return push(true, p++);
          case '[':
            return push(false, p++);
          case '"':
            str_pos_ = at_pos(p);
            ++p;
            in_key_ = false;
            pending_first_ = true;
            state_ = kString;
            continue;
          case '-':
          case '0': case '1': case '2': case '3': case '4':
          case '5': case '6': case '7': case '8': case '9':
            tok_pos_ = at_pos(p);
            num_u64_ok_ = c != '-';
            num_full_ = false;
            num_e_neg_ = false;
            num_exp_ = 0;
            num_e_ = 0;
            // The first digit is read in kNumMinus, after the sign if there is one (one copy of
            // the first digit's rules: code size).
            state_ = kNumMinus;
            if (c == '-') ++p;
            continue;
          case 't':
          case 'f':
          case 'n':
            tok_pos_ = at_pos(p);
            lit_kind_ = c == 't' ? 0 : c == 'f' ? 1 : 2;
            lit_index_ = 1;
            state_ = kLiteral;
            ++p;
            continue;
          default:
            return fail(Status::JsonSyntax, p);
        }
      }
      case kObjectFirst:
      case kObjectKey: {
        p = skip_ws(p, end);
        if (p == end) return kNeedMore;
        if (*p == '}' && state_ == kObjectFirst) {
          tok_pos_ = at_pos(p);
          ++p;
          return pop(kObjectEnd);
        }
        if (*p != '"') return fail(Status::JsonSyntax, p);
        str_pos_ = at_pos(p);
        ++p;
        in_key_ = true;
        pending_first_ = true;
        state_ = kString;
        continue;
      }
      case kColon:
        p = skip_ws(p, end);
        if (p == end) return kNeedMore;
        if (*p != ':') return fail(Status::JsonSyntax, p);
        ++p;
        state_ = kValue;
        continue;
      case kAfterValue: {
        p = skip_ws(p, end);
        if (p == end) return kNeedMore;
        uint8_t c = *p;
        bool in_object = top_is_object();
        if (c == ',') {
          ++p;
          state_ = in_object ? kObjectKey : kValue;
          continue;
        }
        if ((c == '}' && in_object) || (c == ']' && !in_object)) {
          tok_pos_ = at_pos(p);
          ++p;
          return pop(in_object ? kObjectEnd : kArrayEnd);
        }
        return fail(Status::JsonSyntax, p);
      }
      case kDone:
        p = skip_ws(p, end);
        if (p == end) return kNeedMore;
        return fail(Status::JsonTrailingCharacters, p);
      case kString:
        return lex_string(p, end);
      case kEscape:
      case kUnicode:
      case kSurrogateBackslash:
      case kSurrogateU:
      case kSurrogateUnicode:
        return lex_escape(p, end);
      case kNumMinus:
      case kNumZero:
      case kNumInt:
      case kNumFrac0:
      case kNumFrac:
      case kNumExp0:
      case kNumExpSign:
      case kNumExp:
        return lex_number(p, end);
      case kLiteral: {
        const char* lit = kLiterals[lit_kind_];
        uint8_t len = kLiteralLen[lit_kind_];
        while (lit_index_ < len) {
          if (p == end) return kNeedMore;
          if (*p != uint8_t(lit[lit_index_])) return fail(Status::JsonSyntax, p);
          ++p;
          ++lit_index_;
        }
        end_scalar();
        return lit_kind_ == 0 ? kTrue : lit_kind_ == 1 ? kFalse : kNull;
      }
    }
  }
}

JsonLexer::Token JsonLexer::lex_string(const uint8_t*& p, const uint8_t* end) {
  const uint8_t* run = p;
  for (;;) {
    // Continuation bytes of a UTF-8 sequence (possibly begun in an earlier piece of input).
    while (utf8_need_ != 0) {
      if (p == end) goto out_of_input;
      uint8_t c = *p;
      if (c < (utf8_lo_ | 0x80) || c > (utf8_hi_ ^ 0xBF))
        return string_error(Status::InvalidUtf8, at_pos(p), run, p);
      utf8_lo_ = 0;  // 0x80..0xBF from here
      utf8_hi_ = 0;
      --utf8_need_;
      ++p;
    }
    // Plain printable ASCII, a word at a time.
    p = skip_plain_words(p, end);
    for (;;) {
      if (p == end) goto out_of_input;
      uint8_t c = *p;
      if (c == '"') {
        Token t = emit_piece(run, size_t(p - run), true);
        ++p;
        state_ = in_key_ ? kColon : (depth_ == 0 ? kDone : kAfterValue);
        return t;
      }
      if (c == '\\') {
        if (p != run) return emit_piece(run, size_t(p - run), false);
        ++p;
        state_ = kEscape;
        return lex_escape(p, end);
      }
      if (c < 0x20) return string_error(Status::JsonControlCharacter, at_pos(p), run, p);
      if (c >= 0x80) {
        if (c >= 0xC2 && c <= 0xDF) {
          utf8_need_ = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
          utf8_need_ = 2;
          if (c == 0xE0) utf8_lo_ = 0xA0;              // no overlong 3-byte forms
          else if (c == 0xED) utf8_hi_ = 0x9F ^ 0xBF;  // no UTF-16 surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
          utf8_need_ = 3;
          if (c == 0xF0) utf8_lo_ = 0x90;              // no overlong 4-byte forms
          else if (c == 0xF4) utf8_hi_ = 0x8F ^ 0xBF;  // nothing above U+10FFFF
        } else {
          return string_error(Status::InvalidUtf8, at_pos(p), run, p);
        }
        ++p;
        break;  // back to the continuation loop
      }
      ++p;
      if (end - p >= 8) break;  // back to the word loop
    }
  }
out_of_input:
  if (p != run) return emit_piece(run, size_t(p - run), false);
  return kNeedMore;
}

// Called with p just past a backslash (state kEscape) or inside \uXXXX handling.
JsonLexer::Token JsonLexer::lex_escape(const uint8_t*& p, const uint8_t* end) {
  for (;;) {
    if (p == end) return kNeedMore;
    uint8_t c = *p;
    switch (state_) {
      case kEscape: {
        // The short escapes as a table (a switch is a jump table and a case each: code size).
        for (int i = 0; i < 8; ++i) {
          if (c == uint8_t(kShortEscapes[i])) {
            ++p;
            return emit_codepoint(uint8_t(kShortEscapes[8 + i]));
          }
        }
        if (c != 'u') return string_error(Status::JsonInvalidEscape, at_pos(p), p, p);
        ++p;
        state_ = kUnicode;
        hex_count_ = 0;
        hex_value_ = 0;
        continue;
      }
      case kUnicode:
      case kSurrogateUnicode: {
        int h = hex_value(c);
        if (h < 0) return string_error(Status::JsonInvalidEscape, at_pos(p), p, p);
        ++p;
        hex_value_ = (hex_value_ << 4) | uint32_t(h);
        if (++hex_count_ < 4) continue;
        uint32_t cu = hex_value_;
        if (state_ == kSurrogateUnicode) {
          if (cu >= 0xDC00 && cu <= 0xDFFF)
            return emit_codepoint(0x10000 + ((high_surrogate_ - 0xD800) << 10) + (cu - 0xDC00));
          // Where a low surrogate was needed, another unit starts: invalid from its backslash.
          return string_error(Status::JsonLoneSurrogate, at_pos(p) - 6, p, p);
        }
        if (cu >= 0xD800 && cu <= 0xDBFF) {
          high_surrogate_ = cu;
          state_ = kSurrogateBackslash;
          continue;
        }
        if (cu >= 0xDC00 && cu <= 0xDFFF) return string_error(Status::JsonLoneSurrogate, at_pos(p) - 6, p, p);
        return emit_codepoint(cu);
      }
      case kSurrogateBackslash:
        // A low surrogate's backslash was needed here. Always: serde_json validates every string it
        // parses into a value (src/read.rs parse_unicode_escape), and the reference crate parses the
        // unknown fields of a tensor entry too (issue #26).
        if (c != '\\') return string_error(Status::JsonLoneSurrogate, at_pos(p), p, p);
        ++p;
        state_ = kSurrogateU;
        continue;
      case kSurrogateU:
        if (c != 'u') return string_error(Status::JsonLoneSurrogate, at_pos(p), p, p);
        ++p;
        state_ = kSurrogateUnicode;
        hex_count_ = 0;
        hex_value_ = 0;
        continue;
      default:
        return fail(Status::UsageError, p);
    }
  }
}

// One more digit into the significand, as serde_json takes them (parse_integer, parse_decimal):
// while the value fits in u64; after the first that does not, none (num_full_).
bool JsonLexer::take_digit(uint8_t c) {
  const uint64_t kTenth = ~uint64_t(0) / 10;  // 1844674407370955161; u64 max ends in 5
  uint32_t d = uint32_t(c - '0');
  if (num_full_ || num_value_ > kTenth || (num_value_ == kTenth && d > 5)) {
    num_full_ = true;
    return false;
  }
  num_value_ = num_value_ * 10 + d;
  return true;
}

// serde_json (1.0.149, default features: no float_roundtrip), src/de.rs: a number that is not an
// integer fitting u64 (or, negative, i64) becomes an f64 as f64_from_parts(significand, exponent)
// computes it — `significand as f64` times the double nearest 10^exponent (its POW10 table,
// 1e0..1e308), or divided for a negative exponent — and is NumberOutOfRange when that product is
// infinite; beyond 1e308 a positive exponent with a nonzero significand is out of range outright,
// a negative one only ever makes the value smaller. An exponent past i32 is out of range when it is
// positive and the significand nonzero (parse_exponent_overflow): the written exponent saturates
// here at 10^8 or more, past any power the significand's dropped or fraction digits add in a
// safetensors header (at most 10^8 bytes, exponent included), so the sum keeps the written
// exponent's sign as serde_json's decision does, and fits in i32.
// Since the significand is below 2^64 ≈ 1.8e19, exponents up to 288 never overflow; for 289..308
// the product overflows exactly when the significand reaches the threshold below (the smallest u64
// s with (double)s * 1eE infinite in IEEE double arithmetic, round to nearest: computed once by
// bisection and checked against that arithmetic by tests/unit/json_lexer_test.cpp), so no floating
// point is needed here.
bool JsonLexer::number_out_of_range() const {
  static const uint64_t kThreshold[20] = {
      17976931348623156225ull, 1797693134862315649ull, 179769313486231600ull, 17976931348623158ull,
      1797693134862316ull,     179769313486232ull,     17976931348624ull,     1797693134863ull,
      179769313487ull,         17976931349ull,         1797693135ull,         179769314ull,
      17976932ull,             1797694ull,             179770ull,             17977ull,
      1798ull,                 180ull,                 18ull,                 2ull,
  };
  if (num_value_ == 0) return false;
  const int32_t e = num_exp_ + (num_e_neg_ ? -int32_t(num_e_) : int32_t(num_e_));
  if (e < 289) return false;
  if (e > 308) return true;
  return num_value_ >= kThreshold[e - 289];
}

JsonLexer::Token JsonLexer::lex_number(const uint8_t*& p, const uint8_t* end) {
  for (;;) {
    if (p == end) return kNeedMore;
    uint8_t c = *p;
    bool digit = c >= '0' && c <= '9';
    switch (state_) {
      case kNumMinus:  // the first digit, after the sign if any
        if (!digit) goto bad;
        state_ = c == '0' ? kNumZero : kNumInt;
        num_value_ = uint64_t(c - '0');  // the magnitude's first digit (number_out_of_range)
        ++p;
        continue;
      case kNumZero:
        if (digit) goto bad;  // leading zeros are not JSON
        goto after_int;
      case kNumInt:
        // The digit loop: shapes and offsets that the fast path leaves to this one are spent here.
        while (digit) {
          if (!take_digit(c)) {
            // Keep lexing: it is still a valid JSON number. As serde_json's parse_long_integer,
            // the significand stops here and each further digit scales it by 10.
            num_u64_ok_ = false;
            if (num_exp_ < 1000000000) ++num_exp_;  // saturates: no i32 overflow on gigabytes of digits
          }
          if (++p == end) return kNeedMore;
          c = *p;
          digit = c >= '0' && c <= '9';
        }
      after_int:  // the integer part ended (one copy of what may follow it: code size)
        if (c == '.') {
          state_ = kNumFrac0;
          num_u64_ok_ = false;
          num_full_ = false;  // serde_json's parse_decimal tries the significand again
          ++p;
          continue;
        }
        goto after_frac;
      case kNumFrac0:
        if (!digit) goto bad;
        state_ = kNumFrac;
        continue;  // the digit is read in kNumFrac
      case kNumFrac:
        if (digit) {
          // parse_decimal: each fraction digit taken scales the value by 1/10; from the first that
          // does not fit, the rest are ignored (parse_decimal_overflow).
          if (take_digit(c)) --num_exp_;
          ++p;
          continue;
        }
      after_frac:  // the integer or fraction part ended
        if (c == 'e' || c == 'E') {
          state_ = kNumExp0;
          num_u64_ok_ = false;
          ++p;
          continue;
        }
        end_scalar();
        return kNumber;
      case kNumExp0:
        if (c == '+' || c == '-') {
          num_e_neg_ = c == '-';
          state_ = kNumExpSign;
          ++p;
          continue;
        }
        if (!digit) goto bad;
        state_ = kNumExp;
        continue;  // the digit is read in kNumExp
      case kNumExpSign:
        if (!digit) goto bad;
        state_ = kNumExp;
        continue;
      case kNumExp:
        if (digit) {
          if (num_e_ < 100000000u) num_e_ = num_e_ * 10 + uint32_t(c - '0');  // saturates (number_out_of_range)
          ++p;
          continue;
        }
        end_scalar();
        return kNumber;
      default:
        return fail(Status::UsageError, p);
    }
  bad:
    status_ = Status::JsonInvalidNumber;
    err_pos_ = tok_pos_;  // report malformed numbers at their first byte
    return kError;
  }
}

}  // namespace detail
}  // namespace ws
