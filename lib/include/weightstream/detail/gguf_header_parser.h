// weightstream — the GGUF header (v2/v3), parsed and validated as it streams.
//
// A binary state machine: every field may be split across input pieces, so every field is a
// state. Key-value pairs are handed out as events while they pass (big vocabularies are never
// stored); only keys (for the duplicate check), the alignment, the architecture name and the
// tensor infos are kept, in the caller's arena. All of ggml's checks (FORMATS.md §5).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/arena.h"
#include "weightstream/event.h"
#include "weightstream/ggml_types.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "GGUF fields are read with little-endian loads");

namespace ws {
namespace detail {

class GgufHeaderParser {
 public:
  // Out of line: the member initializers are emitted once, here, rather than in every
  // constructor that holds a parser (Reader's) and again in reset().
  GgufHeaderParser();
  enum Step : uint8_t { kNeedInput, kEvent, kDone, kError };

  // `version` was read by the caller (bytes 4..7); `input_size` is ~0 when unknown.
  void reset(Arena* arena, const Limits& limits, uint32_t version, uint64_t input_size);

  // Consumes from in[*used, size), `pos` being the absolute offset of in[0]. kEvent fills *ev
  // (which must be a fresh Event: only the event's own fields are written);
  // kDone: the header is complete and validated, table filled, data_start() known.
  Step step(const uint8_t* in, size_t size, size_t* used, uint64_t pos, Event* ev, TensorTable* table);

  const Error& error() const { return error_; }
  // The input ended inside the header: TruncatedHeader at `pos`, unless an earlier error wins.
  void truncated(uint64_t pos) { fail(Status::TruncatedHeader, pos); }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t kv_count() const { return n_kv_; }
  uint64_t tensor_count() const { return n_tensors_; }
  GgmlDialect dialect() const { return dialect_; }
  StrView architecture() const;
  uint64_t data_start() const { return data_start_; }
  uint64_t data_size() const { return data_size_; }
  uint64_t tensor_infos_offset() const { return ti_section_; }  // valid once the KVs are read
  // True while the parser is inside the header and a field or value is unfinished.
  bool in_header() const { return state_ != kStateDone; }

 private:
  enum State : uint8_t {
    kCounts, kKvCount, kKeyLen, kKey, kValueType, kScalar, kStrLen, kStrBytes, kArrType, kArrCount,
    kArrData, kArrStrLen, kArrStrBytes, kKvEnd, kKeysDone,
    kTiNameLen, kTiName, kTiNDims, kTiDims, kTiType, kTiOffset, kInfosDone, kStateDone,
  };

  bool record_error(Status s, uint64_t offset);
  bool earlier_duplicate();
  bool find_key_duplicate(uint32_t n, uint64_t* dup_pos);
  bool find_name_duplicate(uint32_t n, bool current, uint32_t* dup);
  void report_name_duplicate(uint32_t dup);
  Step fail(Status s, uint64_t offset);
  Step fail_tensor(Status s, uint64_t offset, uint64_t found = ~0ull, uint64_t expected = ~0ull);
  Step fail_value(Status s, uint64_t offset, uint64_t found, uint64_t expected);
  // Gathers an n-byte little-endian field; true when complete (value in field_).
  bool gather(const uint8_t* in, size_t size, size_t* used, uint64_t pos, uint32_t n);
  bool fits_remaining(uint64_t need, uint64_t pos) const;
  Step start_kv_value(uint64_t pos, Event* ev);
  Step finish_keys(uint64_t pos);
  Step finish_tensor_info(uint64_t pos);
  Step finish_infos(uint64_t pos, TensorTable* table);
  void kv_event(Event* ev, EventType type) const;
  void begin_kv_event(Event* ev) const;

  Arena* arena_ = nullptr;
  Limits limits_;
  Error error_;
  State state_ = kCounts;
  uint32_t version_ = 0;
  uint64_t input_size_ = ~0ull;

  // Field gathering.
  uint8_t buf_[8] = {};
  uint32_t have_ = 0;
  uint64_t field_ = 0;
  uint64_t field_pos_ = 0;

  uint64_t n_tensors_ = 0, n_kv_ = 0;

  // Current KV.
  uint64_t kv_index_ = 0;
  uint64_t kv_pos_ = 0;
  uint64_t key_len_ = 0, key_done_ = 0;
  size_t key_mark_ = 0;
  uint8_t key_match_ = 0;  // bit 0: prefix of general.alignment, bit 1: of general.architecture
  bool is_alignment_ = false, is_architecture_ = false;
  GgufType type_ = GgufType::U8;
  GgufType elem_type_ = GgufType::U8;
  uint64_t count_ = 0, index_ = 0;
  uint64_t str_len_ = 0, str_done_ = 0;
  uint32_t elem_size_ = 0;
  uint64_t arr_bytes_left_ = 0;
  size_t keys_begin_ = 0;  // arena offset where keys start: [u32 len][u64 pos][bytes] each

  // Facts kept.
  uint32_t alignment_ = 32;
  GgmlDialect dialect_ = GgmlDialect::Upstream;
  char arch_[32] = {};
  uint32_t arch_len_ = 0;
  bool arch_capture_ = false;

  // Current tensor info.
  uint64_t ti_index_ = 0;
  uint64_t ti_section_ = 0;  // absolute offset where the tensor infos start
  uint64_t ti_pos_ = 0;
  uint64_t name_len_ = 0, name_done_ = 0;
  size_t name_mark_ = 0;
  uint32_t n_dims_ = 0, dim_index_ = 0;
  int64_t dims_[4] = {};
  uint32_t ggml_type_ = 0;
  uint64_t ti_type_pos_ = 0;
  uint64_t nbytes_ = 0;
  uint64_t running_elems_ = 1;       // ne0 * ... * ne(j), checked as each dimension arrives
  uint64_t ti_end_ = 0, ti_next_ = 0;  // this tensor's end and the next one's start
  uint64_t expected_offset_ = 0;

  uint64_t data_start_ = 0;
  uint64_t data_size_ = 0;
};

}  // namespace detail
}  // namespace ws
