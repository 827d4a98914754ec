// Runs weightstream's Reader over a header held in memory, the way a streaming caller would.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "weightstream/status.h"

namespace wsbench {

struct WsResult {
  bool header_ready = false;          // the reader reached HeaderReady
  ws::Status status = ws::Status::Ok; // the error when it did not
  uint64_t error_offset = 0;          // absolute offset of the error
  uint64_t consumed = 0;              // Reader::position() when it stopped
  uint32_t tensors = 0;
  size_t arena_peak = 0;
  size_t arena_needed = 0;
};

class WsRunner {
 public:
  // `arena_bytes` to start with; `grow`: enlarge on ArenaExhausted (false: keep it, and measure
  // the sizing pass a memory-starved caller runs to learn arena_needed()).
  explicit WsRunner(size_t arena_bytes = size_t(8) << 20, bool grow = true)
      : arena_(arena_bytes / sizeof(uint64_t)), grow_(grow) {}

  // Feeds `size` bytes (8-byte prefix + header, no data) in pieces of `piece` bytes until
  // HeaderReady or Error. A fresh Reader on every call, over the same arena: the arena stays
  // faulted-in, like a caller's static buffer. Grows the arena and retries on ArenaExhausted,
  // which only happens on the untimed warm-up call.
  WsResult run(const uint8_t* data, size_t size, size_t piece);

  size_t arena_size() const { return arena_.size() * sizeof(uint64_t); }

 private:
  WsResult run_once(const uint8_t* data, size_t size, size_t piece);
  std::vector<uint64_t> arena_;
  bool grow_;
};

}  // namespace wsbench
