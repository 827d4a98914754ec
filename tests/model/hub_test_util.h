// The Hugging Face Hub fixtures' model tests (tests/data/conventions/hub/<dir>/, issues #27/#28):
// loading one fixture directory or in-memory files, and the output bytes expected values give.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
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

// A file's bytes (a test failure when it cannot be read).
inline Bytes read_file(const std::string& path) {
  Bytes b;
  EXPECT_TRUE(modeltest::disk_files("")(path, &b)) << path;
  return b;
}

// A stored tensor's absolute offset, bytes and shape, from a safetensors file's header: the
// test's own reading, independent of the library's.
struct Stored {
  uint64_t at = 0;
  Bytes bytes;
  std::vector<uint64_t> shape;
};
inline Stored stored(const Bytes& file, const std::string& name) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t e = h.find("\"" + name + "\":");
  EXPECT_NE(e, std::string::npos) << name;
  Stored s;
  size_t p = h.find("\"shape\":[", e) + 9;
  while (h[p] != ']') {
    s.shape.push_back(strtoull(h.c_str() + p, nullptr, 10));
    p = h.find_first_of(",]", p);
    if (h[p] == ',') ++p;
  }
  const size_t o = h.find("\"data_offsets\":[", e) + 16;
  const uint64_t a = strtoull(h.c_str() + o, nullptr, 10);
  const uint64_t b = strtoull(h.c_str() + h.find(',', o) + 1, nullptr, 10);
  s.at = 8 + n + a;
  s.bytes.assign(file.begin() + long(s.at), file.begin() + long(8 + n + b));
  return s;
}

// The offset of a tensor's header entry (its quoted name), where the loader's shape errors point.
inline uint64_t entry_offset(const Bytes& file, const std::string& name) {
  return std::string(file.begin(), file.end()).find("\"" + name + "\"");
}

// Little-endian u32 number i of b.
inline uint32_t u32_at(const Bytes& b, size_t i) {
  uint32_t v;
  memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

// The model of one fixture directory (its model.safetensors and what lies beside it).
// The index of the logical weight named `name` of a loader at ModelReady, or weight_count() when
// it has none (the tests' "find the weight, check it" step, once).
inline uint32_t weight_index(const ws::ModelLoader& ld, const std::string& name) {
  for (uint32_t i = 0; i < ld.weight_count(); ++i) {
    const ws::LogicalWeight& w = ld.weight(i);
    if (std::string(w.name.data, w.name.size) == name) return i;
  }
  return ld.weight_count();
}

inline LoadResult load(const std::string& dir, const HostOptions& o) {
  return modeltest::load_model(modeltest::disk_files(hub_dir() + "/" + dir), ws::ModelEntry::Auto,
                               "model.safetensors", o);
}

// The model of files given in memory (a fixture edited in the test).
inline LoadResult load_memory(const std::map<std::string, Bytes>& files, const HostOptions& o) {
  return modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::Auto, "model.safetensors", o);
}

}  // namespace hubtest
