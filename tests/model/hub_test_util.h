// The Hugging Face Hub fixtures' model tests (tests/data/conventions/hub/<dir>/, issues #27/#28):
// loading one fixture directory or in-memory files, and the output bytes expected values give.
#pragma once

#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "model_host.h"

namespace hubtest {

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;

inline const std::string& hub_dir() {
  static const std::string dir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/hub";
  return dir;
}

// The output bytes the values give: f32 as they are, f16 rounded to nearest even (the compiler's
// _Float16 conversion).
inline Bytes output_of(const std::vector<float>& v, ws::OutType out) {
  Bytes b;
  for (float f : v) {
    if (out == ws::OutType::F32) {
      uint8_t x[4];
      memcpy(x, &f, 4);
      b.insert(b.end(), x, x + 4);
    } else {
      const _Float16 h = static_cast<_Float16>(f);
      uint8_t x[2];
      memcpy(x, &h, 2);
      b.insert(b.end(), x, x + 2);
    }
  }
  return b;
}

// The model of one fixture directory (its model.safetensors and what lies beside it).
inline LoadResult load(const std::string& dir, const HostOptions& o) {
  return modeltest::load_model(modeltest::disk_files(hub_dir() + "/" + dir), ws::ModelEntry::Auto,
                               "model.safetensors", o);
}

// The model of files given in memory (a fixture edited in the test).
inline LoadResult load_memory(const std::map<std::string, Bytes>& files, const HostOptions& o) {
  return modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::Auto, "model.safetensors", o);
}

}  // namespace hubtest
