// Kept apart so that only this file includes simdjson.h (a 1.5 MB header).
#include "simdjson_runner.h"

#include <simdjson.h>

namespace wsbench {

struct SimdjsonRunner::Impl {
  simdjson::dom::parser parser;
  simdjson::padded_string text;
};

SimdjsonRunner::SimdjsonRunner() : impl_(new Impl) {}
SimdjsonRunner::~SimdjsonRunner() = default;

void SimdjsonRunner::load(const char* json, size_t size) {
  impl_->text = simdjson::padded_string(json, size);
}

SimdjsonResult SimdjsonRunner::run() {
  SimdjsonResult r;
  simdjson::dom::element root;
  simdjson::error_code err = impl_->parser.parse(impl_->text).get(root);
  r.ok = err == simdjson::SUCCESS;
  if (!r.ok) r.error = simdjson::error_message(err);
  return r;
}

const char* SimdjsonRunner::implementation() {
  return simdjson::get_active_implementation()->name().c_str();
}

// SIMDJSON_VERSION is an unquoted token (3.0.1), so stringize it.
#define WSBENCH_STR2(x) #x
#define WSBENCH_STR(x) WSBENCH_STR2(x)
const char* SimdjsonRunner::version() { return WSBENCH_STR(SIMDJSON_VERSION); }

}  // namespace wsbench
