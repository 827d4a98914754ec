// weightstream CLI — compact JSON output (see json_writer.h).
#include "json_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

namespace wscli {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 if the bytes there are not one
// (overlong forms, surrogates and code points above U+10FFFF are rejected, as RFC 3629 demands).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return len;
}

}  // namespace

void append_json_string(std::string* out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        ++i;
      } else {
        out->append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!empty_.empty()) {
    if (!empty_.back()) out_.push_back(',');
    empty_.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  empty_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_.push_back('}');
  empty_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  empty_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_.push_back(']');
  empty_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  append_json_string(&out_, k);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  before_value();
  append_json_string(&out_, s);
  return *this;
}

JsonWriter& JsonWriter::number(uint64_t n) {
  before_value();
  out_.append(std::to_string(n));
  return *this;
}

JsonWriter& JsonWriter::signed_number(int64_t n) {
  before_value();
  out_.append(std::to_string(n));
  return *this;
}

std::string real_text(double v, bool single_precision) {
  // Shortest %.Ng that round-trips: 1.5 prints as 1.5, not 1.50000000000000000.
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    const double back = strtod(buf, nullptr);
    if (single_precision ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
  }
  return buf;
}

JsonWriter& JsonWriter::real(double v, bool single_precision) {
  if (isnan(v)) return string("nan");
  if (isinf(v)) return string(v > 0 ? "inf" : "-inf");
  before_value();
  out_.append(real_text(v, single_precision));
  return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
  before_value();
  out_.append(b ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_.append("null");
  return *this;
}

}  // namespace wscli
