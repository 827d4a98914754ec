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

// The parser's working state: plain data, value-initialized as one block (zero, a memset) by the
// parser's constructor instead of member by member (the microcontroller build counts every byte
// of code). The few fields that do not start at zero are set there.
struct GgufParserState {
  enum State : uint8_t {
    kCounts, kKvCount, kKeyLen, kKey, kValueType, kScalar, kStrLen, kStrBytes, kArrType, kArrCount,
    kArrData, kArrStrLen, kArrStrBytes, kKvEnd, kKeysDone,
    kTiNameLen, kTiName, kTiNDims, kTiDims, kTiType, kTiOffset, kInfosDone, kStateDone,
  };

  Arena* arena_;
  State state_;
  uint32_t version_;
  uint64_t input_size_;

  // Field gathering.
  uint8_t buf_[8];
  uint32_t have_;
  uint64_t field_;
  uint64_t field_pos_;

  uint64_t n_tensors_, n_kv_;

  // Current KV.
  uint64_t kv_index_;
  uint64_t kv_pos_;
  uint64_t key_len_, key_done_;
  uint64_t nul_at_;  // first NUL of the current key, tensor name or architecture (~0: none)
  size_t key_mark_;
  uint8_t key_match_;  // bit 0: prefix of general.alignment, bit 1: of general.architecture
  bool is_alignment_, is_architecture_;
  GgufType type_;
  GgufType elem_type_;
  uint64_t count_, index_;
  uint64_t str_len_, str_done_;
  uint32_t elem_size_;
  uint64_t arr_bytes_left_;
  size_t keys_begin_;  // arena offset where keys start: [u32 len][u64 pos][bytes] each

  // Facts kept.
  uint32_t alignment_;
  GgmlDialect dialect_;
  char arch_[32];
  uint32_t arch_len_;
  bool arch_capture_;

  // Current tensor info.
  uint64_t ti_index_;
  uint64_t ti_section_;  // absolute offset where the tensor infos start
  uint64_t ti_pos_;
  uint64_t name_len_, name_done_;
  size_t name_mark_;
  uint32_t n_dims_, dim_index_;
  int64_t dims_[4];
  uint32_t ggml_type_;
  uint64_t ti_type_pos_;
  uint64_t nbytes_;
  uint64_t running_elems_;       // ne0 * ... * ne(j), checked as each dimension arrives
  uint64_t ti_end_, ti_next_;  // this tensor's end and the next one's start
  uint64_t expected_offset_;

  uint64_t data_start_;
  uint64_t data_size_;
};

class GgufHeaderParser : private GgufParserState {
 public:
  // Out of line: emitted once, here, rather than in every constructor that holds a parser
  // (Reader's) and again in reset().
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
  void truncated(uint64_t pos);
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
  void note_nul(const uint8_t* in, size_t used, size_t n, uint64_t pos);
  Step start_kv_value(uint64_t pos, Event* ev);
  Step finish_keys(uint64_t pos);
  Step finish_tensor_info(uint64_t pos);
  Step finish_infos(uint64_t pos, TensorTable* table);
  void kv_event(Event* ev, EventType type) const;
  void begin_kv_event(Event* ev) const;

  Limits limits_;
  Error error_;
};

}  // namespace detail
}  // namespace ws
