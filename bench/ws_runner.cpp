// The pull loop of reader.h, driven from memory.
#include "ws_runner.h"

#include "weightstream/reader.h"

namespace wsbench {

WsResult WsRunner::run_once(const uint8_t* data, size_t size, size_t piece) {
  ws::Reader r(arena_.data(), arena_.size() * sizeof(uint64_t));
  WsResult out;
  size_t off = 0;
  bool finished = false;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (finished) break;  // a reader that asks again after finish() is broken; do not spin
      if (off == size) {
        // Should not happen: the header is complete before the input runs out. Let the reader
        // report what it thinks is missing.
        r.finish();
        finished = true;
        continue;
      }
      size_t n = size - off < piece ? size - off : piece;
      r.feed(data + off, n);
      off += n;
      continue;
    }
    if (e.type == ws::EventType::HeaderReady) {
      out.header_ready = true;
      out.tensors = r.tensor_count();
    } else if (e.type == ws::EventType::Error) {
      out.status = r.error().code;
      out.error_offset = r.error().offset;
    } else {
      out.status = ws::Status::UsageError;  // any other event before HeaderReady is a bug
    }
    break;
  }
  out.consumed = r.position();
  out.arena_peak = r.arena_peak();
  out.arena_needed = r.arena_needed();
  return out;
}

WsResult WsRunner::run(const uint8_t* data, size_t size, size_t piece) {
  WsResult res = run_once(data, size, piece);
  while (grow_ && res.status == ws::Status::ArenaExhausted && res.arena_needed > arena_size()) {
    // Value-initialized, so every page is touched here and not inside a timed call.
    arena_.assign(res.arena_needed / sizeof(uint64_t) + 1 + (res.arena_needed >> 6), 0);
    res = run_once(data, size, piece);
  }
  return res;
}

}  // namespace wsbench
