// The pull reader: framing (length prefix, header, data section) and the data pump.
//
// Each next() does the least work that produces one event, so a caller can stop, forward bytes
// or abort between any two events. Tensor bytes are never copied: events point into the input.
#include "weightstream/reader.h"

#include <string.h>

namespace ws {

namespace {
enum Phase : uint8_t { kPreamble, kHeader, kData, kEnd };
}

const char* format_name(Format f) {
  switch (f) {
    case Format::Safetensors: return "safetensors";
    case Format::Gguf: return "gguf";
    default: return "unknown";
  }
}

const char* event_type_name(EventType t) {
  switch (t) {
    case EventType::NeedInput: return "NeedInput";
    case EventType::KvBegin: return "KvBegin";
    case EventType::KvScalar: return "KvScalar";
    case EventType::KvBytes: return "KvBytes";
    case EventType::KvEnd: return "KvEnd";
    case EventType::HeaderReady: return "HeaderReady";
    case EventType::TensorBegin: return "TensorBegin";
    case EventType::TensorBytes: return "TensorBytes";
    case EventType::TensorEnd: return "TensorEnd";
    case EventType::End: return "End";
    case EventType::Error: return "Error";
  }
  return "?";
}

Reader::Reader(void* arena, size_t arena_size, const Limits& limits) : limits_(limits) {
  if (limits_.max_header_bytes > kMaxSafetensorsHeader) limits_.max_header_bytes = kMaxSafetensorsHeader;
  arena_.init(arena, arena_size);
}

void Reader::feed(const void* data, size_t size) {
  if (!waiting_ || finished_) {
    fail(Status::UsageError, pos_);
    return;
  }
  in_ = static_cast<const uint8_t*>(data);
  in_size_ = size;
  in_used_ = 0;
  waiting_ = false;
}

void Reader::finish() {
  if (!waiting_ && !finished_) {
    fail(Status::UsageError, pos_);
    return;
  }
  finished_ = true;
  waiting_ = false;
  in_size_ = in_used_ = 0;
}

void Reader::set_input_size(uint64_t size) { input_size_ = size; }

size_t Reader::arena_used() const { return arena_.used(); }
size_t Reader::arena_peak() const { return arena_.peak(); }

Event Reader::fail(Status code, uint64_t offset) {
  if (error_.code == Status::Ok) {
    error_ = Error();
    error_.code = code;
    error_.offset = offset;
  }
  Event e;
  e.type = EventType::Error;
  return e;
}

// An error with the value found and the one expected (one copy of this sequence, not one per
// check: the microcontroller build counts every byte).
Event Reader::fail_values(Status code, uint64_t offset, uint64_t found, uint64_t expected) {
  Event e = fail(code, offset);
  error_.set_found(found);
  error_.set_expected(expected);
  return e;
}

// The input ended in tensor t's data or in the padding before it.
Event Reader::fail_truncated(uint64_t offset, uint32_t t) {
  Event e = fail(Status::TruncatedData, offset);
  TensorInfo info = table_.get(t);
  error_.tensor = t;
  error_.tensor_name = info.name.data;
  error_.tensor_name_size = info.name.size;
  return e;
}

// a + b, or ~0 when it does not fit: a data section ending past 2^64 ends past any input.
static uint64_t add_saturated(uint64_t a, uint64_t b) {
  uint64_t s;
  return __builtin_add_overflow(a, b, &s) ? ~0ull : s;
}

static Event need_input() {
  Event e;
  e.type = EventType::NeedInput;
  return e;
}

Event Reader::next() {
  // One Event, returned on every path: GGUF's KV events (the bulk of a vocabulary-heavy header)
  // are written straight into it instead of being built and copied along.
  Event e;
  if (error_.code != Status::Ok) {
    e = fail(error_.code, error_.offset);
  } else if (waiting_) {
    e.type = EventType::NeedInput;
  } else if (phase_ == kHeader && format_ == Format::Gguf) {
    gguf_step(e);
  } else {
    switch (phase_) {
      case kPreamble: e = step_preamble(); break;
      case kHeader: e = step_header(); break;
      case kData: e = step_data(); break;
      default: e.type = EventType::End; break;
    }
  }
  if (e.type == EventType::NeedInput) waiting_ = true;
  return e;
}

Event Reader::step_preamble() {
  while (prefix_have_ < 8 && in_used_ < in_size_) {
    prefix_[prefix_have_++] = in_[in_used_++];
    ++pos_;
  }
  if (prefix_have_ < 8) {
    if (finished_ || input_size_ < 8) return fail(Status::HeaderTooSmall, finished_ ? pos_ : input_size_);
    return need_input();
  }
  if (memcmp(prefix_, "GGUF", 4) == 0) {
    format_ = Format::Gguf;
    uint32_t v = uint32_t(prefix_[4]) | uint32_t(prefix_[5]) << 8 | uint32_t(prefix_[6]) << 16 |
                 uint32_t(prefix_[7]) << 24;
    // ggml's order: 0 is no version; a zero low half means a big-endian writer; 1 had 32-bit counts.
    Status bad = v == 0 ? Status::GgufInvalidVersion
                 : (v & 0xFFFF) == 0 ? Status::GgufByteSwapped
                 : v == 1 ? Status::GgufVersion1
                 : v > 3 ? Status::GgufVersionTooNew
                 : Status::Ok;
    if (bad != Status::Ok) {
      Event e = fail(bad, 4);
      error_.set_found(v);
      return e;
    }
    gguf_.reset(&arena_, limits_, v, input_size_);
    phase_ = kHeader;
    Event e;
    gguf_step(e);
    return e;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix_[i];
  format_ = Format::Safetensors;
  header_size_ = n;
  // Checked before the input length, like the reference: a huge prefix is a DoS attempt (or not
  // a safetensors file at all) whatever the input's size.
  if (n > limits_.max_header_bytes) {
    return fail_values(Status::HeaderTooLarge, 0, n, limits_.max_header_bytes);
  }
  data_start_ = 8 + n;
  if (input_size_ != ~0ull && data_start_ > input_size_) {
    return fail_values(Status::InvalidHeaderLength, 0, n, input_size_ - 8);
  }
  st_.reset(&arena_, limits_, 8);
  phase_ = kHeader;
  return step_header();
}

void Reader::gguf_step(Event& e) {
  uint64_t base = pos_ - in_used_;  // absolute offset of in_[0]
  detail::GgufHeaderParser::Step st = gguf_.step(in_, in_size_, &in_used_, base, &e, &table_);
  pos_ = base + in_used_;
  if (st != detail::GgufHeaderParser::kEvent) e = gguf_header_step(st);
}

// What follows a GGUF header step that produced no KV event.
Event Reader::gguf_header_step(int step) {
  switch (step) {
    case detail::GgufHeaderParser::kError:
      error_ = gguf_.error();
      if (error_.code == Status::ArenaExhausted) arena_needed_ = arena_.peak_needed();
      return fail(error_.code, error_.offset);
    case detail::GgufHeaderParser::kNeedInput:
      if (finished_) {
        // Through the parser: a duplicate read before the end is the earlier error.
        gguf_.truncated(pos_);
        error_ = gguf_.error();
        if (error_.code == Status::ArenaExhausted) arena_needed_ = arena_.peak_needed();
        return fail(error_.code, error_.offset);
      }
      return need_input();
    default:
      break;
  }
  data_start_ = gguf_.data_start();
  data_size_ = gguf_.data_size();
  // The last tensor's padding (and, with no tensors, the padding after the KVs) may be present
  // or absent: the input may end anywhere up to the next multiple of the alignment.
  uint64_t end = add_saturated(data_start_, data_size_), a = gguf_.alignment();
  allowed_end_ = end % a == 0 ? end : add_saturated(end, a - end % a);
  return header_ready();
}

// Safetensors: the whole JSON header goes through the parser; one event (HeaderReady) at the end.
Event Reader::step_header() {
  Status s = Status::Ok;
  while (pos_ < data_start_) {
    size_t avail = in_size_ - in_used_;
    if (avail == 0) {
      if (!finished_) return need_input();
      // The length prefix is what is wrong: InvalidHeaderLength at byte 0, as when the size is
      // known — said by the parser, which says ArenaExhausted instead when a check it skipped for
      // lack of arena may have found an earlier error (fuzz finding 9: a duplicate __metadata__
      // key before the end; the retry with arena_needed() then finds it, as a large arena does).
      s = st_.truncated();
      break;
    }
    uint64_t remaining = data_start_ - pos_;
    size_t take = remaining < avail ? size_t(remaining) : avail;
    s = st_.feed(in_ + in_used_, take);
    if (s != Status::Ok) break;
    in_used_ += take;
    pos_ += take;
  }
  if (s == Status::Ok) s = st_.finish(&table_);
  if (s != Status::Ok) {
    error_ = st_.error();
    if (s == Status::ArenaExhausted) arena_needed_ = arena_.peak_needed();
    return fail(s, error_.offset);
  }
  data_size_ = st_.data_size();
  allowed_end_ = add_saturated(data_start_, data_size_);
  return header_ready();
}

Event Reader::header_ready() {
  if (input_size_ != ~0ull) {
    // The input must reach the end of the last tensor that has bytes; empty tensors need none.
    // With any tensor, it must reach the data section (ggml seeks there and fails when it is
    // past the end), exactly as when the size is not declared.
    uint64_t expected = table_.count() ? data_start_ : pos_;
    for (uint32_t i = 0; i < table_.count(); ++i) {
      TensorInfo t = table_.get(i);
      uint64_t end = add_saturated(data_start_, t.end);
      if (t.end > t.begin && end > expected) expected = end;
    }
    if (input_size_ < expected) {
      // Name the tensor the input ends in.
      uint32_t t = 0;
      while (t + 1 < table_.count() && add_saturated(data_start_, table_.get(t).end) <= input_size_) ++t;
      Event e = fail_truncated(input_size_, t);
      error_.set_found(input_size_);
      error_.set_expected(expected);
      return e;
    }
    if (input_size_ > allowed_end_) {
      return fail_values(Status::TrailingBytes, allowed_end_, input_size_, allowed_end_);
    }
  }
  phase_ = kData;
  cur_tensor_ = 0;
  cur_begun_ = false;
  Event e;
  e.type = EventType::HeaderReady;
  return e;
}

Event Reader::step_data() {
  Event e;
  if (cur_tensor_ < table_.count()) {
    TensorInfo t = table_.get(cur_tensor_);
    uint64_t size = t.end - t.begin;
    e.tensor = cur_tensor_;
    e.offset = data_start_ + t.begin;
    if (!cur_begun_) {
      cur_begun_ = true;
      cur_done_ = 0;
      e.type = EventType::TensorBegin;
      return e;
    }
    if (cur_done_ == size) {
      ++cur_tensor_;
      cur_begun_ = false;
      e.type = EventType::TensorEnd;
      return e;
    }
    size_t avail = in_size_ - in_used_;
    // GGUF pads each tensor to the alignment: skip the padding before this one.
    uint64_t first = data_start_ + t.begin;
    if (pos_ < first && avail > 0) {
      uint64_t gap = first - pos_;
      size_t skip = gap < avail ? size_t(gap) : avail;
      in_used_ += skip;
      pos_ += skip;
      avail -= skip;
    }
    if (avail == 0) {
      if (finished_) return fail_truncated(pos_, cur_tensor_);
      return need_input();
    }
    uint64_t remaining = size - cur_done_;
    size_t take = remaining < avail ? size_t(remaining) : avail;
    e.type = EventType::TensorBytes;
    e.data = in_ + in_used_;
    e.size = take;
    e.offset = pos_;
    in_used_ += take;
    pos_ += take;
    cur_done_ += take;
    return e;
  }
  if (in_used_ < in_size_) {
    // Bytes after the last tensor: GGUF's final padding is allowed, nothing else.
    uint64_t room = allowed_end_ > pos_ ? allowed_end_ - pos_ : 0;
    size_t avail = in_size_ - in_used_;
    if (avail > room) return fail(Status::TrailingBytes, pos_ + room);
    in_used_ += avail;
    pos_ += avail;
  }
  // Only empty tensors, and the input ended before the data section they start: ggml seeks to
  // it and fails (the padding before it is missing), so the file is truncated.
  if (finished_ && pos_ < data_start_ && table_.count()) return fail_truncated(pos_, 0);
  if (finished_ || pos_ == input_size_) {
    phase_ = kEnd;
    e.type = EventType::End;
    return e;
  }
  return need_input();
}

}  // namespace ws
