// Runs weightstream's Reader over a GGUF header, from memory or from a file through fread, the
// way a streaming caller would, up to HeaderReady.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "weightstream/status.h"

namespace wsbench {

struct GgufRunResult {
  bool header_ready = false;           // the reader reached HeaderReady
  bool io_error = false;               // fopen/fread failed (run_file)
  ws::Status status = ws::Status::Ok;  // the reader's error when it did not
  uint64_t error_offset = 0;
  uint64_t data_start = 0;             // Reader::data_start(): the header's size in bytes
  uint64_t kvs = 0;                    // KvEnd events seen
  uint64_t kv_bytes = 0;               // bytes handed out in KvBytes events (strings, arrays)
  uint32_t tensors = 0;
  size_t arena_peak = 0;
  size_t arena_needed = 0;
  uint64_t allocs = 0;                 // allocation calls while the reader ran (must be 0)
};

class GgufRunner {
 public:
  // `piece`: the fread size of run_file. The arena starts at `arena_bytes` and grows on
  // ArenaExhausted, which only happens on an untimed warm-up call.
  explicit GgufRunner(size_t piece = 64 * 1024, size_t arena_bytes = size_t(1) << 20);

  // The whole header in memory, passed in one feed() (what a caller with the file mapped does).
  GgufRunResult run_memory(const uint8_t* data, size_t size);
  // fopen, then fread pieces into one reused buffer and feed() each, until HeaderReady; fclose.
  // Like gguf_init_from_file, the open and close are part of the call.
  GgufRunResult run_file(const char* path);

  size_t piece() const { return buf_.size(); }

 private:
  template <typename Source>
  GgufRunResult drive(Source& src);
  template <typename Source>
  GgufRunResult drive_growing(Source& src);

  std::vector<uint64_t> arena_;  // uint64_t: the reader wants 8-byte alignment
  std::vector<uint8_t> buf_;
};

}  // namespace wsbench
