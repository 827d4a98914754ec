// weightstream CLI — how many Range connections a URL read runs (issue #31): the adaptive rules of
// the JS package's downloader (wasm/js/parallel-ranges.mjs, the same constants), once for C++.
//
// A pure class: it is given throughput samples and the server's throttling answers, and says how
// many connections to run; it does no I/O and reads no clock, so its tests are exact sequences.
// It lives in tools/cli/, not lib/: it is a host's transport policy fed with wall-clock rates, not
// a fact of a model file the library could state as plan data (lib/ plans say which bytes, never
// how fast or over how many connections they travel).
//
// The rules (huggingface.js PRs #2350-#2352 measured them: fixed counts were slower than serial on
// capped links, adaptive never was):
//   - start serial; after each sample of the bytes per second (all connections), add a connection
//     while the rate rose by >= 5 % (kGain) over the last sample, else drop the one just added and
//     stop growing (settled). At the cap: settled.
//   - a sample in which the reader hardly waited for bytes (under kStarved of the time) settles
//     where it is: the consumer sets the pace, not the network.
//   - a sample in which the byte budget held a block back drops the last connection and settles.
//   - HTTP 429 or 503: half the connections running, capped there for the rest of the read.
//   - pinned (--connections N): always N, never adapting (429/503 still halves it).
#pragma once

#include <stdint.h>

#include <string>

namespace wscli {

class ConnectionPolicy {
 public:
  static constexpr double kGain = 1.05;
  static constexpr double kStarved = 0.1;
  static constexpr unsigned kAutoMax = 4;  // as the JS package's default maxConnections

  // pinned: a fixed count (>= 1), or 0 for adaptive up to `max` (>= 1).
  ConnectionPolicy(unsigned pinned, unsigned max);

  unsigned target() const { return target_; }
  unsigned cap() const { return cap_; }
  bool settled() const { return settled_; }
  // Whether a sample was taken, and its rate (the last kept: the better one's after a drop).
  bool has_rate() const { return have_rate_; }
  double last_rate() const { return last_rate_; }

  // A sample: `rate` bytes per second received at target() connections; `starved` the part of the
  // sample's time the reader waited for bytes (0..1); `budget_full` whether the byte budget held a
  // block back during it.
  void sample(double rate, double starved, bool budget_full);
  // Settle at the current count (a sample too near the end to judge another connection).
  void settle(double rate);
  // The server refused a request for load (429, 503) while `running` requests ran.
  void throttled(unsigned running);

  // Whether another connection is worth trying with `remaining` bytes to read at `rate` bytes per
  // second: only when the read lasts two samples more (the next sample judges it, the one after
  // gains from it).
  static bool worth_probing(uint64_t remaining, double rate, double sample_seconds);

 private:
  unsigned target_, cap_;
  bool settled_;
  bool have_rate_ = false;
  double last_rate_ = 0;
};

// How long the server asks the client to wait before its next request, in milliseconds, or -1
// when it does not: Retry-After (delta-seconds; an HTTP date is not parsed here and counts as 1 s),
// else a RateLimit answer that no requests remain (its reset, in seconds). The header values as
// received ("" when absent): `ratelimit` the IETF draft's `RateLimit` ("policy";r=0;t=5, or the
// earlier limit=.., remaining=.., reset=..), `remaining` / `reset` the older RateLimit-Remaining /
// RateLimit-Reset pair (draft-ietf-httpapi-ratelimit-headers; the Hugging Face Hub sends the
// draft's form, huggingface/hub-docs docs/hub/rate-limits.md).
long server_wait_ms(const std::string& retry_after, const std::string& ratelimit, const std::string& remaining,
                    const std::string& reset);

}  // namespace wscli
