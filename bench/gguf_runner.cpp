// The pull loop of reader.h over two input sources: a memory block, or a FILE* read in pieces.
#include "gguf_runner.h"

#include <stdio.h>

#include "alloc_counter.h"
#include "weightstream/reader.h"

namespace wsbench {

namespace {

// Hands out the whole block once.
struct MemorySource {
  const uint8_t* data;
  size_t size;
  bool given = false;
  void rewind() { given = false; }
  // Next piece: *size 0 at end of input, false on an I/O error.
  bool next(const uint8_t** p, size_t* n) {
    *p = data;
    *n = given ? 0 : size;
    given = true;
    return true;
  }
};

// fread into one buffer, reused for every piece: the reader has consumed a piece when it asks for
// input again, so the buffer can be overwritten then.
struct FileSource {
  FILE* f;
  uint8_t* buf;
  size_t cap;
  void rewind() { ::rewind(f); }
  bool next(const uint8_t** p, size_t* n) {
    *p = buf;
    *n = fread(buf, 1, cap, f);
    return *n == cap || !ferror(f);
  }
};

}  // namespace

GgufRunner::GgufRunner(size_t piece, size_t arena_bytes)
    : arena_(arena_bytes / sizeof(uint64_t), 0), buf_(piece ? piece : 1) {}

template <typename Source>
GgufRunResult GgufRunner::drive(Source& src) {
  const uint64_t calls0 = alloc_calls();
  ws::Reader r(arena_.data(), arena_.size() * sizeof(uint64_t));
  GgufRunResult out;
  bool finished = false;
  for (;;) {
    ws::Event e = r.next();
    switch (e.type) {
      case ws::EventType::NeedInput: {
        if (finished) break;  // asked again after finish(): a broken reader; do not spin
        const uint8_t* p;
        size_t n;
        if (!src.next(&p, &n)) {
          out.io_error = true;
          break;
        }
        if (n) {
          r.feed(p, n);
        } else {
          r.finish();  // should not happen before HeaderReady; the reader says what is missing
          finished = true;
        }
        continue;
      }
      // A minimal consumer: count what streams past, so the events are really produced and read.
      case ws::EventType::KvBytes:
        out.kv_bytes += e.size;
        continue;
      case ws::EventType::KvEnd:
        ++out.kvs;
        continue;
      case ws::EventType::KvBegin:
      case ws::EventType::KvScalar:
        continue;
      case ws::EventType::HeaderReady:
        out.header_ready = true;
        out.tensors = r.tensor_count();
        out.data_start = r.data_start();
        break;
      case ws::EventType::Error:
        out.status = r.error().code;
        out.error_offset = r.error().offset;
        break;
      default:
        out.status = ws::Status::UsageError;  // data events before HeaderReady: a reader bug
        break;
    }
    break;
  }
  out.arena_peak = r.arena_peak();
  out.arena_needed = r.arena_needed();
  out.allocs = alloc_calls() - calls0;
  return out;
}

template <typename Source>
GgufRunResult GgufRunner::drive_growing(Source& src) {
  GgufRunResult res = drive(src);
  while (res.status == ws::Status::ArenaExhausted && res.arena_needed > arena_.size() * sizeof(uint64_t)) {
    // Value-initialized, so every page is touched here and not inside a timed call.
    arena_.assign(res.arena_needed / sizeof(uint64_t) + 1 + (res.arena_needed >> 6), 0);
    src.rewind();
    res = drive(src);
  }
  return res;
}

GgufRunResult GgufRunner::run_memory(const uint8_t* data, size_t size) {
  MemorySource src{data, size};
  return drive_growing(src);
}

GgufRunResult GgufRunner::run_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    GgufRunResult res;
    res.io_error = true;
    return res;
  }
  // Unbuffered: every fread asks for a whole piece, which glibc reads straight into buf_ anyway;
  // this also spares stdio its buffer allocation, leaving fopen's FILE as the only one per call.
  setvbuf(f, nullptr, _IONBF, 0);
  FileSource src{f, buf_.data(), buf_.size()};
  GgufRunResult res = drive_growing(src);
  fclose(f);
  return res;
}

}  // namespace wsbench
