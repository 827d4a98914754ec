// Implements measure.h: warm-up, calibration of the batch size, interleaved rounds.
#include "measure.h"

#include <chrono>

namespace wsbench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::vector<Timing> measure(const std::vector<std::function<void()>>& fns,
                            const MeasureOptions& opt) {
  const size_t n = fns.size();
  std::vector<Timing> t(n);
  std::vector<uint64_t> batch(n, 1);
  std::vector<int> samples(n, 0);
  for (size_t i = 0; i < n; ++i) {
    fns[i]();  // warm-up
    Clock::time_point t0 = Clock::now();
    fns[i]();
    double one = seconds_since(t0);
    if (one < opt.min_sample_s)
      batch[i] = static_cast<uint64_t>(opt.min_sample_s / (one > 1e-9 ? one : 1e-9)) + 1;
    t[i].best_s = one;
    t[i].calls = 1;
    t[i].total_s = one;
    samples[i] = 1;
  }
  for (;;) {
    bool more = false;
    for (size_t i = 0; i < n; ++i) {
      if (samples[i] >= opt.min_samples && t[i].total_s >= opt.min_total_s) continue;
      more = true;
      Clock::time_point t0 = Clock::now();
      for (uint64_t k = 0; k < batch[i]; ++k) fns[i]();
      double s = seconds_since(t0);
      double per_call = s / static_cast<double>(batch[i]);
      if (per_call < t[i].best_s) t[i].best_s = per_call;
      t[i].calls += batch[i];
      t[i].total_s += s;
      ++samples[i];
    }
    if (!more) return t;
  }
}

}  // namespace wsbench
