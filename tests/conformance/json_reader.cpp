// Recursive-descent JSON parser (RFC 8259). Recursion is fine here: it only reads the project's
// own expectation files, whose nesting is shallow.
#include "json_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace wstest {
namespace {

[[noreturn]] void fatal(const std::string& why) {
  fprintf(stderr, "json_reader: %s\n", why.c_str());
  abort();
}

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  bool document(Json* out) {
    if (!value(out, 0)) return false;
    ws();
    if (i_ != s_.size()) return fail("trailing characters");
    return true;
  }
  std::string error() const { return err_ + " at byte " + std::to_string(i_); }

 private:
  bool fail(const char* why) {
    if (err_.empty()) err_ = why;
    return false;
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool literal(const char* word) {
    for (size_t k = 0; word[k]; ++k, ++i_)
      if (i_ >= s_.size() || s_[i_] != word[k]) return fail("bad literal");
    return true;
  }
  bool value(Json* out, int depth) {
    if (depth > 64) return fail("too deep");
    ws();
    if (i_ >= s_.size()) return fail("unexpected end");
    char c = s_[i_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->type = Json::kString;
      return string(&out->text);
    }
    if (c == 't') {
      out->type = Json::kBool;
      out->boolean = true;
      return literal("true");
    }
    if (c == 'f') {
      out->type = Json::kBool;
      return literal("false");
    }
    if (c == 'n') return literal("null");
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return fail("unexpected character");
  }
  bool number(Json* out) {
    size_t start = i_;
    if (s_[i_] == '-') ++i_;
    auto digits = [&] {
      size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > d;
    };
    if (!digits()) return fail("bad number");
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return fail("bad fraction");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return fail("bad exponent");
    }
    out->type = Json::kNumber;
    out->text = s_.substr(start, i_ - start);
    return true;
  }
  bool hex4(uint32_t* v) {
    if (i_ + 4 > s_.size()) return fail("short \\u escape");
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      uint32_t d = c >= '0' && c <= '9'   ? uint32_t(c - '0')
                   : c >= 'a' && c <= 'f' ? uint32_t(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? uint32_t(c - 'A' + 10)
                                          : 99;
      if (d == 99) return fail("bad hex digit");
      *v = *v * 16 + d;
    }
    return true;
  }
  static void utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += char(cp);
    } else if (cp < 0x800) {
      *out += char(0xC0 | (cp >> 6));
      *out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += char(0xE0 | (cp >> 12));
      *out += char(0x80 | ((cp >> 6) & 0x3F));
      *out += char(0x80 | (cp & 0x3F));
    } else {
      *out += char(0xF0 | (cp >> 18));
      *out += char(0x80 | ((cp >> 12) & 0x3F));
      *out += char(0x80 | ((cp >> 6) & 0x3F));
      *out += char(0x80 | (cp & 0x3F));
    }
  }
  bool string(std::string* out) {
    ++i_;  // opening quote
    out->clear();
    while (true) {
      if (i_ >= s_.size()) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("control character in string");
      if (c != '\\') {
        *out += char(c);
        continue;
      }
      if (i_ >= s_.size()) return fail("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u')
              return fail("lone surrogate");
            i_ += 2;
            if (!hex4(&lo)) return false;
            if (lo < 0xDC00 || lo >= 0xE000) return fail("bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return fail("lone low surrogate");
          }
          utf8(cp, out);
          break;
        }
        default:
          return fail("bad escape");
      }
    }
  }
  bool array(Json* out, int depth) {
    out->type = Json::kArray;
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      ws();
      if (i_ >= s_.size()) return fail("unterminated array");
      char c = s_[i_++];
      if (c == ']') return true;
      if (c != ',') return fail("expected , or ]");
    }
  }
  bool object(Json* out, int depth) {
    out->type = Json::kObject;
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      ws();
      if (i_ >= s_.size() || s_[i_] != '"') return fail("expected key");
      out->members.emplace_back();
      if (!string(&out->members.back().first)) return false;
      ws();
      if (i_ >= s_.size() || s_[i_++] != ':') return fail("expected :");
      if (!value(&out->members.back().second, depth + 1)) return false;
      ws();
      if (i_ >= s_.size()) return fail("unterminated object");
      char c = s_[i_++];
      if (c == '}') return true;
      if (c != ',') return fail("expected , or }");
    }
  }

  const std::string& s_;
  size_t i_ = 0;
  std::string err_;
};

}  // namespace

const Json* Json::find(const std::string& key) const {
  if (type != kObject) return nullptr;
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

const Json& Json::at(const std::string& key) const {
  const Json* j = find(key);
  if (!j) fatal("missing member \"" + key + "\"");
  return *j;
}

uint64_t Json::u64() const {
  if (type != kNumber || text.empty() || text[0] == '-' ||
      text.find_first_of(".eE") != std::string::npos)
    fatal("not a u64: " + text);
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') fatal("not a u64: " + text);
  return v;
}

const std::string& Json::str() const {
  if (type != kString) fatal("not a string");
  return text;
}

bool parse_json(const std::string& text, Json* out, std::string* error) {
  Parser p(text);
  *out = Json();
  if (p.document(out)) return true;
  if (error) *error = p.error();
  return false;
}

Json load_json_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fatal("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  Json j;
  std::string err;
  if (!parse_json(ss.str(), &j, &err)) fatal(path + ": " + err);
  return j;
}

}  // namespace wstest
