// tests/cli — a small JSON reader for the tests only (it allocates and recurses freely).
//
// The CLI's JSON output and the reference files' .expect.json are parsed with it, so the tests
// compare values, not the CLI's own formatting, wherever formatting is not the point. It is
// deliberately independent of the library's lexer: the library is what is under test.
#pragma once

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

namespace clitest {

struct Json {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool boolean = false;
  std::string text;  // String: decoded UTF-8; Number: the literal as written
  std::vector<Json> items;                            // Array
  std::vector<std::pair<std::string, Json>> members;  // Object, in document order

  bool is_null() const { return type == Null; }
  // Object member by key; throws std::runtime_error when absent (a test failure, with the key).
  const Json& operator[](const std::string& key) const;
  bool has(const std::string& key) const;
  const Json& operator[](size_t i) const { return items.at(i); }
  uint64_t u64() const;  // a Number that is a plain non-negative integer
  const std::string& str() const;
};

// Parses one JSON document (surrounding whitespace allowed); throws std::runtime_error with the
// byte offset on malformed input.
Json parse_json(const std::string& text);

}  // namespace clitest
