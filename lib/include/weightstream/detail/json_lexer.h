// weightstream — a resumable JSON lexer.
//
// Takes the text in pieces of any size and hands out tokens; never needs the document contiguous,
// never recurses, never allocates. Strings come out as pieces of decoded UTF-8 (raw runs are views
// of the input, escapes are decoded into a 4-byte buffer), so a consumer can store a string of any
// length, or compare and drop it, without the lexer holding it. Validates everything RFC 8259 and
// serde_json validate: UTF-8, escapes, surrogate pairs, control characters, number grammar, nesting.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/limits.h"
#include "weightstream/status.h"

namespace ws {
namespace detail {

// The lexer's working state: plain data, value-initialized as one block (zeros: state kValue,
// status Ok) instead of member by member (the microcontroller build counts every byte of code).
struct JsonLexerState {
  enum State : uint8_t {
    kValue, kArrayFirst, kObjectFirst, kObjectKey, kColon, kAfterValue, kDone,
    kString, kEscape, kUnicode, kSurrogateBackslash, kSurrogateU, kSurrogateUnicode,
    kNumMinus, kNumZero, kNumInt, kNumFrac0, kNumFrac, kNumExp0, kNumExpSign, kNumExp,
    kLiteral,
  };
  bool has_deferred_;  // a string error waiting behind the piece that precedes it
  Status deferred_status_;
  uint64_t deferred_pos_;

  State state_;
  Status status_;
  bool in_key_;
  bool piece_first_, piece_last_;
  bool pending_first_;
  bool num_u64_ok_;
  // serde_json's view of the current number (number_out_of_range): num_value_ is its significand
  // (the magnitude's leading digits while they fit u64), num_exp_ the power of ten the dropped
  // integer digits and the kept fraction digits make, num_e_ the written exponent.
  bool num_full_;  // the significand took its last digit
  bool num_e_neg_;
  int32_t num_exp_;
  uint32_t num_e_;  // saturates at 10^8 or more
  uint8_t utf8_need_;  // continuation bytes still expected
  // Allowed range of the next continuation byte, stored so that zero is the usual 0x80..0xBF:
  // the lowest is utf8_lo_ | 0x80, the highest utf8_hi_ ^ 0xBF (the state starts as zeros).
  uint8_t utf8_lo_, utf8_hi_;
  uint8_t hex_count_;
  uint8_t lit_index_;
  uint8_t lit_kind_;
  uint32_t hex_value_;
  uint32_t high_surrogate_;
  uint32_t depth_;
  uint32_t max_nesting_;
  uint64_t num_value_;
  uint64_t pos_, tok_pos_, err_pos_, str_pos_;
  const uint8_t* base_;  // start of the current next() call's input, at base_pos_
  uint64_t base_pos_;
  const uint8_t* piece_;
  size_t piece_size_;
  uint8_t esc_buf_[4];
  // One bit per open container, 1 for an object; in 32-bit words (shifts of a u64 are a dozen
  // instructions on a 32-bit core).
  uint32_t stack_[kMaxNestingSupported / 32];
};

class JsonLexer : private JsonLexerState {
 public:
  JsonLexer() : JsonLexerState() { max_nesting_ = 128; }

  enum Token : uint8_t {
    kNeedMore,     // every byte given was consumed
    kObjectBegin,
    kObjectEnd,
    kArrayBegin,
    kArrayEnd,
    kKeyPiece,     // piece of an object key (see piece_*)
    kStringPiece,  // piece of a string value
    kNumber,       // see number_*; the byte that ended the number is not consumed
    kTrue,
    kFalse,
    kNull,
    kError,        // status(); *p points at the offending byte
  };

  void reset(uint32_t max_nesting);

  // Lexes from *p (advanced past what was consumed) up to end.
  Token next(const uint8_t** p, const uint8_t* end);

  // True when the document (one value) is complete; only whitespace may follow.
  bool complete() const { return state_ == kDone; }
  Status status() const { return status_; }
  uint32_t depth() const { return depth_; }

  // For a consumer's fast path over object members at depth 1 (root members): 1 when the next
  // thing is a key ('{' or ',' just read), 2 when it is ',' or '}' (a member just ended), else 0.
  int root_member_boundary() const {
    if (depth_ != 1 || status_ != Status::Ok) return 0;
    if (state_ == kObjectFirst || state_ == kObjectKey) return 1;
    return state_ == kAfterValue ? 2 : 0;
  }
  // The consumer lexed `n` bytes itself: one or more complete members (ending after a value).
  void skip_members(size_t n) {
    pos_ += n;
    state_ = kAfterValue;
  }

  // Current string piece.
  const uint8_t* piece() const { return piece_; }
  size_t piece_size() const { return piece_size_; }
  bool piece_first() const { return piece_first_; }
  bool piece_last() const { return piece_last_; }

  // Positions, counted in bytes from the first byte ever given to the lexer: where the current
  // token starts (a string's opening quote, a number's first byte, a bracket), where the error
  // was found (a number error: the number's first byte), and how much was consumed in total.
  uint64_t token_pos() const { return tok_pos_; }
  uint64_t error_pos() const { return err_pos_; }
  uint64_t consumed() const { return pos_; }

  // Current number: is it a plain non-negative integer that fits in u64, and its value.
  bool number_is_u64() const { return num_u64_ok_; }
  uint64_t number_value() const { return num_value_; }
  // Whether serde_json refuses the current number as beyond the f64 range ("number out of range":
  // 1e400, -1e400, 1 followed by 309 zeros; never 1e-400, which is 0). A consumer that must
  // accept exactly what serde_json parses into a value asks this of every number it skips.
  bool number_out_of_range() const;

 private:
  Token lex(const uint8_t*& p, const uint8_t* end);
  Token fail(Status s, const uint8_t* at);
  Token fail_pos(Status s, uint64_t pos);
  Token string_error(Status s, uint64_t pos, const uint8_t* run, const uint8_t* p);
  Token lex_string(const uint8_t*& p, const uint8_t* end);
  Token lex_escape(const uint8_t*& p, const uint8_t* end);
  Token lex_number(const uint8_t*& p, const uint8_t* end);
  bool take_digit(uint8_t c);
  Token push(bool is_object, const uint8_t* at);
  Token pop(Token t);
  void end_scalar() { state_ = depth_ == 0 ? kDone : kAfterValue; }
  uint64_t at_pos(const uint8_t* at) const { return base_pos_ + uint64_t(at - base_); }
  bool top_is_object() const {
    return (stack_[(depth_ - 1) >> 5] >> ((depth_ - 1) & 31)) & 1;
  }
  Token emit_piece(const uint8_t* data, size_t n, bool last);
  Token emit_codepoint(uint32_t cp);
};

}  // namespace detail
}  // namespace ws
