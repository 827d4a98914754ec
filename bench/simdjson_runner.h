// The baseline: simdjson's DOM parser over the same header text.
#pragma once

#include <stddef.h>

#include <memory>
#include <string>

namespace wsbench {

struct SimdjsonResult {
  bool ok = false;
  std::string error;  // simdjson's message when !ok
};

class SimdjsonRunner {
 public:
  SimdjsonRunner();
  ~SimdjsonRunner();
  // Copies the JSON into simdjson's padded buffer (untimed).
  void load(const char* json, size_t size);
  // simdjson::dom::parser::parse of the loaded text: builds the full DOM tape, validates UTF-8.
  // The parser is reused, so its buffers are allocated on the warm-up call only.
  SimdjsonResult run();
  static const char* implementation();  // the kernel picked at runtime (haswell, icelake, ...)
  static const char* version();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wsbench
