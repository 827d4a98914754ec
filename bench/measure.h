// Best-of-N wall-clock timing.
//
// The minimum over repetitions estimates the cost without scheduler and cache noise, which on a
// shared 2-core VM is far larger than the effects we look for. Fast calls are batched so that each
// timed sample is long against the clock's resolution; samples are taken until both a minimum
// count and a minimum total time are reached, so short headers get many repetitions and the
// 100 MB ones a few.
#pragma once

#include <stdint.h>

#include <chrono>

namespace wsbench {

struct Timing {
  double best_s = 0;   // fastest single call, seconds
  uint64_t calls = 0;  // calls timed in total (warm-up excluded)
  double total_s = 0;  // time spent in timed calls
};

struct MeasureOptions {
  double min_total_s = 0.2;  // keep sampling until this much time was measured...
  int min_samples = 5;       // ...and at least this many samples were taken
  double min_sample_s = 1e-3;  // batch calls so that one sample lasts at least this long
};

// Times `fn()`. One untimed warm-up call first: it faults the arena's and the parser's pages in
// and lets the CPU clock up.
template <class Fn>
Timing measure(Fn&& fn, const MeasureOptions& opt = MeasureOptions()) {
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  fn();
  Clock::time_point t0 = Clock::now();
  fn();
  double one = seconds_since(t0);
  uint64_t batch = 1;
  if (one < opt.min_sample_s) batch = static_cast<uint64_t>(opt.min_sample_s / (one > 1e-9 ? one : 1e-9)) + 1;

  Timing t;
  t.best_s = one;
  t.calls = 1;
  t.total_s = one;
  int samples = 1;
  while (samples < opt.min_samples || t.total_s < opt.min_total_s) {
    t0 = Clock::now();
    for (uint64_t i = 0; i < batch; ++i) fn();
    double s = seconds_since(t0);
    double per_call = s / static_cast<double>(batch);
    if (per_call < t.best_s) t.best_s = per_call;
    t.calls += batch;
    t.total_s += s;
    ++samples;
  }
  return t;
}

}  // namespace wsbench
