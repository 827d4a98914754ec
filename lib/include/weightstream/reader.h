// weightstream — the streaming reader (pull API).
//
//   alignas(8) static uint8_t arena[1 << 20];
//   ws::Reader r(arena, sizeof arena);
//   for (;;) {
//     ws::Event e = r.next();
//     switch (e.type) {
//       case ws::EventType::NeedInput:   n = read(buf); n ? r.feed(buf, n) : r.finish(); break;
//       case ws::EventType::HeaderReady: /* r.tensor_count(), r.tensor(i), r.metadata(i) */ break;
//       case ws::EventType::TensorBytes: /* e.data/e.size: a view into buf */ break;
//       case ws::EventType::End:         return ok;
//       case ws::EventType::Error:       return r.error();
//       default: break;
//     }
//   }
//
// The reader never allocates and never copies tensor bytes: TensorBytes points into the buffer
// last passed to feed(), which must stay valid until next() asks for input again. Everything it
// keeps (tensor names, shapes, metadata) lives in the caller's arena. Any chunking of the input
// gives the same events and bytes.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/arena.h"
#include "weightstream/detail/safetensors_header_parser.h"
#include "weightstream/detail/gguf_header_parser.h"
#include "weightstream/event.h"
#include "weightstream/dtype.h"
#include "weightstream/ggml_types.h"
#include "weightstream/gguf.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

enum class Format : uint8_t { Unknown, Safetensors, Gguf };

const char* format_name(Format f);  // "safetensors", "gguf", or "unknown"

class Reader {
 public:
  // `arena` must be 8-byte aligned and outlive the reader. It holds the tensor table and metadata.
  Reader(void* arena, size_t arena_size, const Limits& limits = Limits());

  // Gives the reader the next piece of input. Only valid after next() returned NeedInput; the
  // bytes must stay valid (and unchanged) until next() returns NeedInput again.
  void feed(const void* data, size_t size);
  // Declares the end of the input. Only valid after next() returned NeedInput.
  void finish();
  // Optional: the total input size when known in advance (file size, Content-Length). The reader
  // then rejects a short or over-long input as soon as the header says so, before any data.
  void set_input_size(uint64_t size);

  Event next();

  const Error& error() const { return error_; }
  Format format() const { return format_; }

  // Bytes consumed from the input so far (the absolute offset of the next byte).
  uint64_t position() const { return pos_; }

  // Valid after HeaderReady — and also when, with set_input_size(), the verdict right after the
  // header is TruncatedData or TrailingBytes: the table itself was validated, the input's length
  // is what is wrong, and a tool may want to say which tensors are missing.
  const TensorTable& tensors() const { return table_; }
  uint32_t tensor_count() const { return table_.count(); }
  TensorInfo tensor(uint32_t i) const { return table_.get(i); }
  uint64_t header_size() const { return header_size_; }  // safetensors: the u64 prefix n
  uint64_t data_start() const { return data_start_; }    // absolute offset of the data section
  uint64_t data_size() const { return data_size_; }      // end of the last tensor's data
  // Where a valid input ends at most (absolute): data_start + data_size; GGUF rounded up to the
  // alignment (the last tensor's padding is allowed, not required).
  uint64_t allowed_end() const { return allowed_end_; }

  // GGUF facts, valid after HeaderReady (version from the preamble on).
  uint32_t gguf_version() const { return gguf_.version(); }
  uint32_t gguf_alignment() const { return gguf_.alignment(); }
  uint64_t gguf_kv_count() const { return gguf_.kv_count(); }
  GgmlDialect gguf_dialect() const { return gguf_.dialect(); }
  StrView gguf_architecture() const { return gguf_.architecture(); }
  uint64_t gguf_tensor_infos_offset() const { return gguf_.tensor_infos_offset(); }

  // After HeaderReady (or between data events): gives up the part of the last piece fed that the
  // reader has not consumed, and returns its size (and, in `rest`, where it is in the caller's
  // buffer). next() then asks for input at position() again. ws::ModelLoader uses it when a GGUF
  // header's last read ran into the data and other files are read before this one's data (a
  // split GGUF model): the caller's buffer need not stay valid that long.
  size_t release_input(const uint8_t** rest = nullptr) {
    const size_t n = in_size_ - in_used_;
    if (rest) *rest = in_ + in_used_;
    in_size_ = in_used_;
    return n;
  }

  // Arena use: bytes used now, the peak, and, after ArenaExhausted, the size that would suffice.
  size_t arena_used() const;
  size_t arena_peak() const;
  size_t arena_needed() const { return arena_needed_; }
  // Where the arena's bytes are after HeaderReady: `arena_low()` bytes from its start (names,
  // shapes, metadata) and `arena_high()` bytes at its end (tensor records). The data phase
  // touches neither end nor the bytes between them, so a caller may lend those to other work
  // (ws::ModelLoader places the next file's reader there).
  size_t arena_low() const { return arena_.low(); }
  size_t arena_high() const { return arena_.high(); }
  // Tensors the header declared so far, also when the arena ran out (the table is then not
  // stored, but a caller sizing what comes after the header needs the count).
  uint64_t tensors_seen() const {
    return format_ == Format::Gguf ? gguf_.tensor_count() : format_ == Format::Safetensors ? st_.tensor_count() : 0;
  }

 private:
  Event fail(Status code, uint64_t offset);
  Event fail_values(Status code, uint64_t offset, uint64_t found, uint64_t expected);
  Event fail_truncated(uint64_t offset, uint32_t tensor);
  Event step_preamble();
  Event step_header();
  void gguf_step(Event& e);
  Event gguf_header_step(int step);
  Event step_data();
  Event header_ready();

  Error error_;
  Format format_ = Format::Unknown;
  TensorTable table_;
  uint64_t pos_ = 0;
  uint64_t header_size_ = 0;
  uint64_t data_start_ = 0;
  uint64_t data_size_ = 0;
  uint64_t input_size_ = ~0ull;  // ~0: unknown
  size_t arena_needed_ = 0;

  const uint8_t* in_ = nullptr;
  size_t in_size_ = 0;
  size_t in_used_ = 0;
  bool finished_ = false;
  bool waiting_ = true;  // next() returned NeedInput and no feed()/finish() since
  uint8_t phase_ = 0;
  uint8_t prefix_[8] = {};
  uint8_t prefix_have_ = 0;
  uint32_t cur_tensor_ = 0;
  uint64_t cur_done_ = 0;
  bool cur_begun_ = false;

  Limits limits_;
  detail::Arena arena_;
  detail::SafetensorsHeaderParser st_;
  detail::GgufHeaderParser gguf_;
  uint64_t allowed_end_ = 0;  // input may end anywhere from the last tensor's end up to here
};

}  // namespace ws
