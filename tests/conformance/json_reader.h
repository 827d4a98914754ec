// A small JSON reader for the tests' expectation files (expected.json, <file>.expect.json).
//
// Deliberately independent of the library's JSON lexer: expectations must not be read with the
// code under test. Keeps object members in document order, numbers as their source text (u64
// values beyond 2^53 must stay exact) and strings decoded to UTF-8 (\u0000 and surrogate pairs
// included).
#pragma once

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

namespace wstest {

struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = kNull;
  bool boolean = false;
  std::string text;  // kNumber: the literal; kString: the decoded value
  std::vector<Json> items;                           // kArray
  std::vector<std::pair<std::string, Json>> members;  // kObject, document order

  bool is_null() const { return type == kNull; }
  // Member lookup; nullptr when absent or not an object.
  const Json* find(const std::string& key) const;
  // Member lookup that must succeed (a missing member is a broken expectation file: aborts).
  const Json& at(const std::string& key) const;
  // The number as u64 (aborts unless it is a plain non-negative integer).
  uint64_t u64() const;
  const std::string& str() const;
};

// Parses a whole document. On failure returns false and says where in *error.
bool parse_json(const std::string& text, Json* out, std::string* error);

// Reads and parses a file; aborts with a message on failure (a broken fixture, not a test result).
Json load_json_file(const std::string& path);

}  // namespace wstest
