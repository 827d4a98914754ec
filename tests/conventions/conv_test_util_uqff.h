// Helpers for the UQFF tests: a UQFF directory (shards + residual) read as one logical model the
// way a caller streams it: every file's header first (each Reader stopped at HeaderReady), then
// build_uqff(), then each file's data in order with every TensorBytes event fed to feed_uqff(),
// then resolve_uqff().
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <vector>

#include "conv_test_util.h"
#include "weightstream/conventions.h"
#include "weightstream/reader.h"

namespace uqfftest {

struct FileStream {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> arena = std::vector<uint8_t>(1 << 16);
  std::unique_ptr<ws::Reader> reader;
  std::vector<size_t> cuts;
  size_t cut = 0, at = 0;
  std::vector<std::vector<uint8_t>> tensor_bytes;  // by tensor index, collected while streaming

  // The next event that is not NeedInput (input is fed from `bytes` in the planned pieces).
  ws::Event next() {
    for (;;) {
      ws::Event e = reader->next();
      if (e.type != ws::EventType::NeedInput) return e;
      if (cut < cuts.size()) {
        reader->feed(bytes.data() + at, cuts[cut]);
        at += cuts[cut++];
      } else {
        reader->finish();
      }
    }
  }
};

// Bytes each weight holds at once while the files stream, by the rule the load plan states: a piece
// is held unless it is the packed piece arriving after all its companions; a weight's pieces are
// released when its last piece is complete.
struct HeldTracker {
  std::vector<uint64_t> held;     // by weight
  std::vector<uint32_t> arrived;  // complete pieces, by weight
  uint64_t now = 0, peak = 0;
};

struct Outcome {
  ws::Status status = ws::Status::Ok;
  ws::Error error;
  std::string name;    // error tensor name, copied
  std::string detail;  // error_detail(), copied
  uint32_t error_table = 0;  // not known to the model: the test derives it
  uint64_t measured_sequential_peak = 0;
};

// Reads the files (split per `split`) into `model` (storage given by the caller). Returns the first
// failure of reader, build, feed or resolve. `files` is kept alive by the caller (tables point into
// the streams' arenas).
Outcome read_uqff(std::vector<FileStream>* files, convtest::Split split, ws::LogicalModel* model);

}  // namespace uqfftest
