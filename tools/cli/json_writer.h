// weightstream CLI — compact JSON output.
//
// The CLI's JSON is read by scripts and compared byte for byte by tests, so it is produced in one
// place: fixed key order (the caller's), no whitespace, and always valid JSON even when names or
// paths are not valid UTF-8.
#pragma once

#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

namespace wscli {

// Appends `s` as a JSON string literal, quotes included. Bytes that are not valid UTF-8 (a path
// from the filesystem, a header rejected for InvalidUtf8) become U+FFFD, one per bad byte, so the
// output stays valid JSON; control characters are escaped.
void append_json_string(std::string* out, std::string_view s);

// Shortest decimal text of a double (or of a float, when single_precision) that reads back as the
// same value; used for JSON numbers and for people alike.
std::string real_text(double v, bool single_precision);

// Builds compact JSON text. It inserts the commas and colons itself so callers only state the
// structure; distinct method names (not overloads) keep uint32_t/bool/const char* unambiguous.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& string(std::string_view s);
  JsonWriter& number(uint64_t n);
  JsonWriter& signed_number(int64_t n);
  // A finite double as the shortest text that reads back the same value at the given precision
  // (float or double); NaN and infinities, which JSON cannot express, as the strings "nan",
  // "inf", "-inf".
  JsonWriter& real(double v, bool single_precision);
  JsonWriter& boolean(bool b);
  JsonWriter& null();

  const std::string& str() const { return out_; }

 private:
  void before_value();

  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing written into it yet
  bool after_key_ = false;
};

}  // namespace wscli
