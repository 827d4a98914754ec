// The JSON lexer on its own: tokens, decoded strings, numbers and every rejection, under every
// split of the input (the lexer must not care where pieces end).
#include "weightstream/detail/json_lexer.h"

#include <gtest/gtest.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>

#include <string>
#include <vector>

using ws::Status;
using ws::detail::JsonLexer;

namespace {

struct Result {
  std::vector<std::string> tokens;  // "{" "}" "[" "]" "K:<key>" "S:<string>" "N:<u64>|x" "true"...
  Status status = Status::Ok;
  uint64_t error_pos = 0;
  bool complete = false;
  bool operator==(const Result& o) const {
    return tokens == o.tokens && status == o.status && error_pos == o.error_pos && complete == o.complete;
  }
};

// Lexes `text` in pieces of `step` bytes (0: whole), joining string pieces.
Result lex(const std::string& text, size_t step, uint32_t max_nesting = 127) {
  JsonLexer lx;
  lx.reset(max_nesting);
  Result r;
  std::string str;
  const uint8_t* data = reinterpret_cast<const uint8_t*>(text.data());
  size_t off = 0;
  while (off < text.size()) {
    size_t n = step == 0 ? text.size() : std::min(step, text.size() - off);
    const uint8_t* p = data + off;
    const uint8_t* end = p + n;
    for (;;) {
      JsonLexer::Token t = lx.next(&p, end);
      if (t == JsonLexer::kNeedMore) break;
      if (t == JsonLexer::kError) {
        r.status = lx.status();
        r.error_pos = lx.error_pos();
        return r;
      }
      switch (t) {
        case JsonLexer::kObjectBegin: r.tokens.push_back("{"); break;
        case JsonLexer::kObjectEnd: r.tokens.push_back("}"); break;
        case JsonLexer::kArrayBegin: r.tokens.push_back("["); break;
        case JsonLexer::kArrayEnd: r.tokens.push_back("]"); break;
        case JsonLexer::kTrue: r.tokens.push_back("true"); break;
        case JsonLexer::kFalse: r.tokens.push_back("false"); break;
        case JsonLexer::kNull: r.tokens.push_back("null"); break;
        case JsonLexer::kNumber:
          r.tokens.push_back(lx.number_is_u64() ? "N:" + std::to_string(lx.number_value()) : "N:x");
          break;
        case JsonLexer::kKeyPiece:
        case JsonLexer::kStringPiece:
          if (lx.piece_first()) str.clear();
          str.append(reinterpret_cast<const char*>(lx.piece()), lx.piece_size());
          if (lx.piece_last()) r.tokens.push_back((t == JsonLexer::kKeyPiece ? "K:" : "S:") + str);
          break;
        default: break;
      }
    }
    off += n;
  }
  r.complete = lx.complete();
  return r;
}

// Same result whole, byte by byte, and in a few other piece sizes.
Result lex_all_ways(const std::string& text, uint32_t max_nesting = 127) {
  Result whole = lex(text, 0, max_nesting);
  for (size_t step : {1, 2, 3, 5, 7, 13}) {
    Result r = lex(text, step, max_nesting);
    EXPECT_TRUE(r == whole) << "step " << step << " differs for " << text;
  }
  return whole;
}

std::vector<std::string> toks(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

TEST(JsonLexer, TokensOfATensorEntry) {
  Result r = lex_all_ways(R"( {"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"__metadata__":null} )");
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.tokens, toks({"{", "K:w", "{", "K:dtype", "S:F32", "K:shape", "[", "N:2", "N:3", "]",
                            "K:data_offsets", "[", "N:0", "N:24", "]", "}", "K:__metadata__", "null", "}"}));
}

TEST(JsonLexer, LiteralsAndEmptyContainers) {
  Result r = lex_all_ways(R"([true,false,null,[],{},""])");
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_EQ(r.tokens, toks({"[", "true", "false", "null", "[", "]", "{", "}", "S:", "]"}));
}

TEST(JsonLexer, EscapesDecode) {
  Result r = lex_all_ways(R"(["a\"b\\c\/d\b\f\n\r\t", "\u0041\u00e9\u20ac\ud83d\ude42", "\u0000"])");
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(r.tokens[1], "S:a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(r.tokens[2], "S:A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x99\x82");
  EXPECT_EQ(r.tokens[3], std::string("S:\0", 3));
}

TEST(JsonLexer, Utf8PassesThroughAndIsValidated) {
  Result ok = lex_all_ways("[\"\xC3\xA9\xE6\xBC\xA2\xF0\x9F\x99\x82\"]");
  EXPECT_EQ(ok.status, Status::Ok);
  EXPECT_EQ(ok.tokens[1], "S:\xC3\xA9\xE6\xBC\xA2\xF0\x9F\x99\x82");
  // Position of the first byte that cannot continue a valid sequence.
  struct Bad { const char* text; uint64_t pos; } bad[] = {
      {"[\"\xC0\xAF\"]", 2},          // overlong lead
      {"[\"\xE0\x80\xAF\"]", 3},      // overlong 3-byte
      {"[\"\xED\xA0\x80\"]", 3},      // UTF-16 surrogate encoded
      {"[\"\xF4\x90\x80\x80\"]", 3},  // above U+10FFFF
      {"[\"\xF5\x80\x80\x80\"]", 2},  // invalid lead
      {"[\"\x80\"]", 2},              // bare continuation
      {"[\"\xC3\"]", 3},              // sequence cut by the closing quote
      {"[\"\xFF\"]", 2},
  };
  for (const Bad& b : bad) {
    Result r = lex_all_ways(b.text);
    EXPECT_EQ(r.status, Status::InvalidUtf8) << b.text;
    EXPECT_EQ(r.error_pos, b.pos) << b.text;
  }
}

TEST(JsonLexer, StringRejections) {
  Result ctrl = lex_all_ways("[\"ab\x01\"]");
  EXPECT_EQ(ctrl.status, Status::JsonControlCharacter);
  EXPECT_EQ(ctrl.error_pos, 4u);
  Result esc = lex_all_ways(R"(["a\x"])");
  EXPECT_EQ(esc.status, Status::JsonInvalidEscape);
  EXPECT_EQ(esc.error_pos, 4u);
  Result hex = lex_all_ways(R"(["\u12G4"])");
  EXPECT_EQ(hex.status, Status::JsonInvalidEscape);
  EXPECT_EQ(hex.error_pos, 6u);
  // A lone high surrogate is invalid where its low half was needed.
  Result lone_high = lex_all_ways(R"(["ab\ud800x"])");
  EXPECT_EQ(lone_high.status, Status::JsonLoneSurrogate);
  EXPECT_EQ(lone_high.error_pos, 10u);
  Result high_then_other = lex_all_ways(R"(["\ud800\u0041"])");
  EXPECT_EQ(high_then_other.status, Status::JsonLoneSurrogate);
  EXPECT_EQ(high_then_other.error_pos, 8u);
  Result high_then_escape = lex_all_ways(R"(["\ud800\n"])");
  EXPECT_EQ(high_then_escape.status, Status::JsonLoneSurrogate);
  EXPECT_EQ(high_then_escape.error_pos, 9u);
  Result lone_low = lex_all_ways(R"(["\udc00"])");
  EXPECT_EQ(lone_low.status, Status::JsonLoneSurrogate);
  EXPECT_EQ(lone_low.error_pos, 2u);
}

TEST(JsonLexer, StringErrorsComeAfterTheContentBeforeThem) {
  // The content up to a bad byte is handed out first, however the input is cut, so a consumer
  // sees the same pieces (and may reject the string itself first).
  for (size_t step : {0, 1, 2, 3}) {
    JsonLexer lx;
    lx.reset(127);
    std::string text = "[\"ab\x01\"]";
    const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
    const uint8_t* end = p + text.size();
    std::string got;
    JsonLexer::Token t;
    const uint8_t* limit = p;
    for (;;) {
      if (step) limit = std::min(end, limit + step);
      else limit = end;
      while ((t = lx.next(&p, limit)) != JsonLexer::kNeedMore && t != JsonLexer::kError)
        if (t == JsonLexer::kStringPiece) got.append(reinterpret_cast<const char*>(lx.piece()), lx.piece_size());
      if (t == JsonLexer::kError || limit == end) break;
    }
    EXPECT_EQ(t, JsonLexer::kError) << step;
    EXPECT_EQ(lx.status(), Status::JsonControlCharacter) << step;
    EXPECT_EQ(got, "ab") << step;
  }
}

// The lexer had a lenient mode for values serde skips unchecked, where these strings passed (their
// lone surrogates dropped). The reference crate parses every value of a tensor entry (issue #26),
// and serde_json validates every string it parses: the mode is gone, each is rejected where its
// surrogate is found to be lone.
TEST(JsonLexer, LoneSurrogatesAreRejectedEverywhere) {
  const struct {
    const char* text;
    uint64_t at;
  } cases[] = {{R"(["\ud800x"])", 8}, {R"(["\udc00"])", 2}, {R"(["\ud800\u0041"])", 8}, {R"(["\ud800\n"])", 9}};
  for (const auto& c : cases) {
    Result r = lex_all_ways(c.text);
    EXPECT_EQ(r.status, Status::JsonLoneSurrogate) << c.text;
    EXPECT_EQ(r.error_pos, c.at) << c.text;
  }
}

TEST(JsonLexer, Numbers) {
  Result r = lex_all_ways("[0,7,18446744073709551615,18446744073709551616,-0,-5,1.5,1e3,2E-2,0.0,12345678901234567890123]");
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(r.tokens, toks({"[", "N:0", "N:7", "N:18446744073709551615", "N:x", "N:x", "N:x", "N:x", "N:x",
                            "N:x", "N:x", "N:x", "]"}));
  // Malformed numbers are reported at their first byte.
  struct Bad { const char* text; uint64_t pos; } bad[] = {
      {"[ 01]", 2}, {"[-]", 1}, {"[1.]", 1}, {"[1.e3]", 1}, {"[1e]", 1}, {"[1e+]", 1}, {"[-01]", 1}, {"[.5]", 1},
  };
  for (const Bad& b : bad) {
    Result e = lex_all_ways(b.text);
    Status want = b.text[1] == '.' ? Status::JsonSyntax : Status::JsonInvalidNumber;
    EXPECT_EQ(e.status, want) << b.text;
    EXPECT_EQ(e.error_pos, b.pos) << b.text;
  }
}

TEST(JsonLexer, SyntaxErrors) {
  struct Bad { const char* text; Status s; uint64_t pos; } bad[] = {
      {"[1,]", Status::JsonSyntax, 3},        {"{\"a\" 1}", Status::JsonSyntax, 5},
      {"{\"a\":1,}", Status::JsonSyntax, 7},  {"{1:2}", Status::JsonSyntax, 1},
      {"[1 2]", Status::JsonSyntax, 3},       {"[tru]", Status::JsonSyntax, 4},
      {"[1}", Status::JsonSyntax, 2},         {"{} x", Status::JsonTrailingCharacters, 3},
      {"{}\x00", Status::JsonTrailingCharacters, 2}, {"\xEF\xBB\xBF{}", Status::JsonSyntax, 0},
  };
  for (const Bad& b : bad) {
    std::string text(b.text, b.text + (b.s == Status::JsonTrailingCharacters && b.pos == 2 ? 3 : strlen(b.text)));
    Result r = lex_all_ways(text);
    EXPECT_EQ(r.status, b.s) << b.text;
    EXPECT_EQ(r.error_pos, b.pos) << b.text;
  }
}

TEST(JsonLexer, IncompleteDocumentIsNotComplete) {
  for (const char* t : {"{", "{\"a\"", "{\"a\":", "{\"a\":[1", "[\"abc", "[\"\\u12", "[1"}) {
    Result r = lex_all_ways(t);
    EXPECT_EQ(r.status, Status::Ok) << t;
    EXPECT_FALSE(r.complete) << t;
  }
  EXPECT_TRUE(lex_all_ways(" {} \t\r\n").complete);
}

TEST(JsonLexer, NestingLimitCountsTheRoot) {
  std::string ok = std::string(127, '[') + std::string(127, ']');
  EXPECT_EQ(lex_all_ways(ok).status, Status::Ok);
  std::string deep = std::string(128, '[') + std::string(128, ']');
  Result r = lex_all_ways(deep);
  EXPECT_EQ(r.status, Status::NestingTooDeep);
  EXPECT_EQ(r.error_pos, 127u);
  Result lowered = lex("[[[[]]]]", 1, 3);
  EXPECT_EQ(lowered.status, Status::NestingTooDeep);
  EXPECT_EQ(lowered.error_pos, 3u);
  // 200,000 levels: rejected at the first level over the limit, no recursion, no growth.
  std::string huge(200000, '[');
  Result h = lex(huge, 4096);
  EXPECT_EQ(h.status, Status::NestingTooDeep);
  EXPECT_EQ(h.error_pos, 127u);
}

TEST(JsonLexer, PositionsOfTokens) {
  JsonLexer lx;
  lx.reset(127);
  std::string text = R"({"key" : "value", "n": 123})";
  const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t* end = p + text.size();
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kObjectBegin);
  EXPECT_EQ(lx.token_pos(), 0u);
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kKeyPiece);
  EXPECT_EQ(lx.token_pos(), 1u);
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kStringPiece);
  EXPECT_EQ(lx.token_pos(), 9u);
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kKeyPiece);
  EXPECT_EQ(lx.token_pos(), 18u);
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kNumber);
  EXPECT_EQ(lx.token_pos(), 23u);
  EXPECT_EQ(lx.number_value(), 123u);
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kObjectEnd);
  EXPECT_EQ(lx.token_pos(), 26u);
  EXPECT_EQ(lx.next(&p, end), JsonLexer::kNeedMore);
  EXPECT_EQ(lx.consumed(), text.size());
}

}  // namespace

namespace {

// serde_json 1.0.149's own arithmetic (src/de.rs, default features: no float_roundtrip), written
// out independently of the lexer: the significand and exponent as parse_integer /
// parse_long_integer / parse_decimal / parse_decimal_overflow / parse_exponent build them, then
// f64_from_parts in double arithmetic with the POW10 table (the doubles nearest 1e0..1e308, which
// strtod gives). True when serde_json says NumberOutOfRange.
bool serde_out_of_range(const std::string& text) {
  size_t i = 0;
  if (text[i] == '-') ++i;
  uint64_t sig = 0;
  int32_t exp = 0;
  auto fits = [&](uint64_t d) { return sig <= (~uint64_t(0) - d) / 10; };
  bool full = false;
  for (; i < text.size() && isdigit(uint8_t(text[i])); ++i) {
    uint64_t d = uint64_t(text[i] - '0');
    if (!full && fits(d)) sig = sig * 10 + d;
    else full = true, ++exp;
  }
  if (i < text.size() && text[i] == '.') {
    full = false;
    for (++i; i < text.size() && isdigit(uint8_t(text[i])); ++i) {
      uint64_t d = uint64_t(text[i] - '0');
      if (full) continue;
      if (fits(d)) sig = sig * 10 + d, --exp;
      else full = true;
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool neg = false;
    if (text[i] == '+' || text[i] == '-') neg = text[i++] == '-';
    int32_t e = 0;
    for (; i < text.size(); ++i) {
      int32_t d = text[i] - '0';
      if (e > (INT32_MAX - d) / 10) return sig != 0 && !neg;  // parse_exponent_overflow
      e = e * 10 + d;
    }
    int64_t sum = int64_t(exp) + (neg ? -int64_t(e) : e);
    exp = sum > INT32_MAX ? INT32_MAX : sum < INT32_MIN ? INT32_MIN : int32_t(sum);
  }
  volatile double f = double(sig);
  for (;;) {
    const int64_t a = exp < 0 ? -int64_t(exp) : exp;
    if (a <= 308) {
      char buf[16];
      snprintf(buf, sizeof buf, "1e%d", int(a));
      const double pow = strtod(buf, nullptr);
      if (exp >= 0) return std::isinf(double(f * pow));
      return false;
    }
    if (f == 0.0) return false;
    if (exp >= 0) return true;
    f = f / 1e308;
    exp += 308;
  }
}

// The lexer's answer for `number` alone in an array, lexed in pieces of `step` bytes.
bool lexer_out_of_range(const std::string& number, size_t step) {
  const std::string text = "[" + number + "]";
  JsonLexer lx;
  lx.reset(8);
  const uint8_t* data = reinterpret_cast<const uint8_t*>(text.data());
  bool found = false, answer = false;
  for (size_t off = 0; off < text.size();) {
    size_t n = step == 0 ? text.size() : std::min(step, text.size() - off);
    const uint8_t* p = data + off;
    for (;;) {
      JsonLexer::Token t = lx.next(&p, data + off + n);
      if (t == JsonLexer::kNeedMore) break;
      EXPECT_NE(t, JsonLexer::kError) << number;
      if (t == JsonLexer::kError) return false;
      if (t == JsonLexer::kNumber) found = true, answer = lx.number_out_of_range();
    }
    off += n;
  }
  EXPECT_TRUE(found) << number;
  return answer;
}

}  // namespace

// Issue #26: numbers serde_json refuses as beyond the f64 range, exactly (the reference crate parses
// every value of a tensor entry, unknown fields too).
TEST(JsonLexer, NumberOutOfRangeAsSerdeJson) {
  struct C {
    const char* text;
    bool out;
  };
  const C cases[] = {
      {"1e400", true}, {"-1e400", true}, {"1e-400", false}, {"-1e-400", false}, {"0e400", false},
      {"1e308", false}, {"1e309", true}, {"10e308", true}, {"0.1e309", false}, {"1.7976931348623157e308", false},
      // serde_json's default arithmetic: (double)17976931348623158 * 1e292 overflows, though the
      // correctly rounded value of the text is the largest double (float_roundtrip would accept it).
      {"1.7976931348623158e308", true}, {"17976931348623157e292", false},
      {"2e99999999999", true}, {"0e99999999999", false}, {"2e-99999999999", false}, {"0.0e99999999999", false},
      {"18446744073709551616", false}, {"-9223372036854775809", false}, {"123", false}, {"-0", false},
      {"1.5", false}, {"0.000001e310", false}, {"0.000001e315", true},
  };
  for (const C& c : cases) {
    EXPECT_EQ(serde_out_of_range(c.text), c.out) << "reference arithmetic: " << c.text;
    for (size_t step : {size_t(0), size_t(1), size_t(3)}) EXPECT_EQ(lexer_out_of_range(c.text, step), c.out) << c.text;
  }
  // Integers written out in digits: 10^308 is finite, 10^309 is not.
  EXPECT_FALSE(lexer_out_of_range("1" + std::string(308, '0'), 0));
  EXPECT_TRUE(lexer_out_of_range("1" + std::string(309, '0'), 1));
  EXPECT_FALSE(lexer_out_of_range("-1" + std::string(308, '0') + ".5e-3", 0));
  // Around every threshold of the table (exponents 289..308, where the product can overflow) and
  // at random, the lexer agrees with the double arithmetic itself.
  uint64_t x = 0x9E3779B97F4A7C15ull;
  auto rnd = [&] { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
  for (int e = 280; e <= 312; ++e) {
    for (int k = 0; k < 40; ++k) {
      uint64_t sig = rnd() >> (rnd() % 64);
      const std::string t = std::to_string(sig) + "e" + std::to_string(e);
      EXPECT_EQ(lexer_out_of_range(t, 0), serde_out_of_range(t)) << t;
    }
  }
  // The smallest significand that overflows at each exponent, and the one below it.
  const char* digits = "179769313486231570814527423731704356798";
  for (int len = 1; len <= 20; ++len) {
    for (int e = 289; e <= 308; ++e) {
      std::string s(digits, size_t(len));
      for (int d = -2; d <= 2; ++d) {
        const std::string t = std::to_string(std::stoull(s) + uint64_t(d + 2)) + "e" + std::to_string(e);
        EXPECT_EQ(lexer_out_of_range(t, 0), serde_out_of_range(t)) << t;
      }
    }
  }
}
