// Number formatting shared by the benchmarks' tables.
#pragma once

#include <stdint.h>

#include <string>

namespace wsbench {

// Throughput in MB/s, MB = 10^6 bytes.
inline double mbps(uint64_t bytes, double s) { return static_cast<double>(bytes) / 1e6 / s; }

// 12345678 -> "12,345,678": header sizes are read by eye.
inline std::string fmt_count(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace wsbench
