// weightstream CLI — text for humans (see text_format.h).
#include "text_format.h"

#include <stdio.h>

namespace wscli {

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  s += "]";
  return s;
}

namespace {

// Length of a well-formed UTF-8 sequence at s[i] whose code point is printable (not a C1 control
// U+0080..U+009F), or 0.
size_t printable_utf8_length(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    if (c == 0xC2) lo = 0xA0;  // C1 controls U+0080..U+009F act on terminals too
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
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

void append_escaped(std::string* out, std::string_view s, bool escape_quotes) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = printable_utf8_length(s, i);
      if (len) {
        out->append(s.data() + i, len);
        i += len;
        continue;
      }
    }
    char buf[8];
    if (c == '\n') {
      out->append("\\n");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (escape_quotes && (c == '"' || c == '\\')) {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7F) {
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
    ++i;
  }
}

}  // namespace

std::string display_text(std::string_view s) {
  std::string out;
  append_escaped(&out, s, false);
  return out;
}

std::string cut_utf8(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  append_escaped(&out, s, true);
  out += "\"";
  return out;
}

std::string name_text(const std::string& name) {
  const bool plain = !name.empty() && name.front() != ' ' && name.back() != ' ' &&
                     name.find_first_of("\"\\") == std::string::npos && display_text(name) == name;
  return plain ? name : quoted(name);
}

std::string table_text(const std::vector<std::string>& head,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_align) {
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) width[c] = display_width(head[c]);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      if (display_width(row[c]) > width[c]) width[c] = display_width(row[c]);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " ";
      const bool last = c + 1 == row.size();
      if (right_align[c])
        line += pad_left(row[c], width[c]);
      else
        // The last column is not padded: no trailing spaces.
        line += last ? row[c] : pad_right(row[c], width[c]);
      if (!last) line += " ";
    }
    out += line + "\n";
  };
  emit(head);
  for (const auto& row : rows) emit(row);
  return out;
}

std::string human_bytes(uint64_t n) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  if (n < 1000) return std::to_string(n) + " B";
  double v = static_cast<double>(n);
  size_t unit = 0;
  while (v >= 1000.0 && unit + 1 < sizeof kUnits / sizeof kUnits[0]) {
    v /= 1000.0;
    ++unit;
  }
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string bytes_text(uint64_t n) {
  std::string s = std::to_string(n) + (n == 1 ? " byte" : " bytes");
  if (n >= 1000) s += " (" + human_bytes(n) + ")";
  return s;
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++w;  // count lead bytes only
  }
  return w;
}

std::string pad_right(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string pad_left(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

}  // namespace wscli
