// tests/model — the cases of the goldens (golden/cli.jsonl): each fixture, sample, real and
// synthetic file, corpus file and malformed model directory with what the CLI printed for it, and
// how the loader opens it (its files on disk or in memory, the entry kind, the UQFF listing).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "mini_json.h"
#include "model_host.h"
#include "model_variants.h"

namespace modeltest {

struct Record {
  std::vector<std::string> argv;
  int exit = 0;
  bool has_stdout = false;
  clitest::Json out;  // stdout parsed (when it is JSON and kept whole)
  std::map<std::string, std::string> outputs;
};

struct Case {
  std::string name;
  std::string entry;  // relative to the repository root, or "<variant>/<file>"
  bool variant = false;
  std::map<std::string, Record> rec;  // "inspect", "validate", "dequant-f32", "dequant-f16"
};

const std::vector<Case>& cases();
const VariantDirs& variants();

// A fixture or sample whose model the CLI found valid and decoded (its validate and f32 dequant
// records' exit status 0): the tests that load every such model and expect it to load. The Hub
// fixtures of issues #27/#28 include malformed neighbours (conv/hub/fp8-grid-shape, ...) and data
// only decoding reads (conv/hub/gptq-g-idx-range), whose exact statuses other tests check.
inline bool valid_model_case(const Case& c) {
  if (c.name.rfind("conv/", 0) != 0 && c.name.rfind("samples/", 0) != 0) return false;
  for (const char* k : {"validate", "dequant-f32"}) {
    const auto v = c.rec.find(k);
    if (v != c.rec.end() && v->second.exit != 0) return false;
  }
  return true;
}

struct Opened {
  Files files;
  ws::ModelEntry entry = ws::ModelEntry::File;
  std::string name;
  std::vector<std::string> listing;
};
Opened open_case(const Case& c);

}  // namespace modeltest
