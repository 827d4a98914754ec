// Best-of-N wall-clock timing, interleaved across the configurations being compared.
//
// The minimum over repetitions estimates the cost without scheduler and cache noise, which on a
// shared 2-core VM is far larger than the effects we look for. The configurations of one row
// (ours in pieces, ours whole, simdjson) are sampled in turns rather than one after the other, so
// a burst of load from a neighbour slows all of them alike and their ratio stays meaningful.
// Fast calls are batched so that each timed sample is long against the clock's resolution;
// rounds go on until every configuration has a minimum count of samples and a minimum total
// time, so short headers get many repetitions and the 100 MB ones a few.
#pragma once

#include <stdint.h>

#include <functional>
#include <vector>

namespace wsbench {

struct Timing {
  double best_s = 0;   // fastest single call, seconds
  uint64_t calls = 0;  // calls timed in total (warm-up excluded)
  double total_s = 0;  // time spent in timed calls
};

struct MeasureOptions {
  double min_total_s = 0.2;    // sample each configuration until this much time was measured...
  int min_samples = 7;         // ...and at least this many samples were taken
  double min_sample_s = 1e-3;  // batch calls so that one sample lasts at least this long
};

// Times each of `fns`. Each gets one untimed warm-up call first: it faults the arena's and the
// parser's pages in, allocates simdjson's buffers and lets the CPU clock up.
std::vector<Timing> measure(const std::vector<std::function<void()>>& fns,
                            const MeasureOptions& opt = MeasureOptions());

}  // namespace wsbench
