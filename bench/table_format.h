// Table printing shared by the benchmarks (ws-bench-header, ws-bench-gguf, ws-bench-kernels):
// number formats, cells that may have no value, target ratios, the rule under a header, and the
// --case filter. One place, so that the tables read alike and a "missed" mark means the same.
#pragma once

#include <stdint.h>
#include <stdio.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace wsbench {

// Throughput in MB/s, MB = 10^6 bytes.
inline double mbps(uint64_t bytes, double s) { return static_cast<double>(bytes) / 1e6 / s; }

// 12345678 -> "12,345,678": header sizes are read by eye.
inline std::string fmt_count(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// The line of dashes under a table's header rows.
inline void print_rule(size_t width) { printf("%s\n", std::string(width, '-').c_str()); }

// `value` with `prec` decimals right-aligned in `width`, or `missing` ("FAIL", "n/a") when the
// row has no value (its check failed), in the same width so that the columns stay aligned.
inline void print_cell(bool ok, double value, int width, int prec, const char* missing) {
  if (ok) printf("%*.*f", width, prec, value);
  else printf("%*s", width, missing);
}

// A target is missed when the ratio, at the two decimals printed, is below it: a row never
// reads "2.00*" (missed) for 1.996.
inline bool ratio_missed(double ratio, double target) { return std::round(ratio * 100) < std::round(target * 100); }

// "1.37*" for a missed target, "4.41 " otherwise (the space keeps the column aligned).
inline std::string ratio_cell(double ratio, bool missed) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f%s", ratio, missed ? "*" : " ");
  return buf;
}

// --case NAME filters: none given selects every case.
inline bool case_selected(const std::vector<std::string>& cases, const char* name) {
  return cases.empty() || std::find(cases.begin(), cases.end(), name) != cases.end();
}

}  // namespace wsbench
