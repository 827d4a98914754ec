// weightstream — the safetensors JSON header, parsed and validated as it streams.
//
// Consumes the header's bytes in pieces, interprets the JSON lexer's tokens against the
// safetensors schema (FORMATS.md §1) and builds the tensor table in the arena. finish() runs the
// whole-table checks (duplicate names, contiguous offsets) and sorts tensors into file order.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/arena.h"
#include "weightstream/detail/json_lexer.h"
#include "weightstream/detail/json_skipper.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {
namespace detail {

// The parser's working state: plain data, value-initialized as one block (zero, a memset) by the
// parser's constructor instead of member by member (the microcontroller build counts every byte
// of code).
struct SafetensorsParserState {
  enum Ctx : uint8_t {
    kRootStart, kRootKey, kRootValueTensor, kRootValueMeta,
    kEntryKey, kEntryValue, kDtype, kShape, kOffsets, kSkip,
    kDtypeKey, kDtypeNull, kDtypeEnd,  // the dtype's object form, {"F32": null}
    kMetaKey, kMetaValue, kDone,
  };
  enum Field : uint8_t { kFieldDtype = 1, kFieldShape = 2, kFieldOffsets = 4, kFieldOther = 8 };

  Arena* arena_;
  Ctx ctx_;
  uint64_t header_start_;   // absolute offset of the header's first byte

  // Key being read (root key = tensor name or __metadata__).
  size_t key_mark_, key_need_mark_;  // arena marks at the key's [u32 length]
  uint64_t key_size_;
  uint64_t key_pos_;
  bool key_is_meta_;    // the key so far is a prefix of "__metadata__"

  // Small string buffer: entry field names and dtype strings.
  char small_[16];
  uint32_t small_size_;
  bool small_overflow_;

  // Tensor entry being read.
  uint8_t seen_fields_;
  uint8_t cur_field_;
  uint64_t field_pos_;
  uint8_t dtype_;
  uint32_t rank_;
  size_t dims_mark_, dims_need_mark_;  // arena marks where the packed dims start
  uint32_t offsets_count_;
  uint64_t offsets_[2];
  uint64_t elements_;
  bool elements_overflow_;
  bool has_zero_dim_;

  // Metadata.
  bool meta_seen_;
  bool has_meta_;
  size_t meta_begin_, meta_need_begin_, meta_end_;
  uint32_t meta_count_;
  size_t meta_len_mark_;
  uint64_t meta_str_size_;

  uint32_t tensor_count_;
  uint64_t data_size_;
  bool skipped_check_;  // a duplicate check could not run (arena exhausted)
};

class SafetensorsHeaderParser : private SafetensorsParserState {
 public:
  // Out of line: emitted once, here, rather than in every constructor that holds a parser
  // (Reader's) and again in reset().
  SafetensorsHeaderParser();
  void reset(Arena* arena, const Limits& limits, uint64_t header_start);

  // Consumes all `n` bytes (the caller never passes bytes beyond the header). Returns Ok or the
  // first error, with error() filled in.
  Status feed(const uint8_t* data, size_t n);
  // The header's last byte was fed: complete the table (sort, duplicate and offset checks).
  Status finish(TensorTable* table);
  // The input ended before the header did: InvalidHeaderLength at byte 0 (the length prefix is
  // what is wrong), or ArenaExhausted when a check skipped for lack of arena could have found an
  // earlier error (as every error of this parser).
  Status truncated() { return fail_at(Status::InvalidHeaderLength, 0, kNoTensor); }

  // Before parsing: what a header of `n` JSON bytes is expected to take — arena bytes and tensors —
  // erring high for typical headers: an entry is its name and ≈ 70-85 bytes of JSON (dtype, shape,
  // offsets), and takes its name and ≈ 40 bytes of arena (bench/README.md, ws-bench-header: 0.65-0.70
  // arena bytes per header byte, 70-135 header bytes per entry). Estimates, not bounds: tiny entries
  // need more, metadata and whitespace less. ModelLoaderOptions::estimate_arena.
  static uint64_t arena_estimate(uint64_t n) { return n - n / 8; }
  static uint64_t tensors_estimate(uint64_t n) { return n / 100; }

  const Error& error() const { return error_; }
  uint64_t data_size() const { return data_size_; }
  uint32_t tensor_count() const { return tensor_count_; }

 private:
  Status handle(JsonLexer::Token t);
  Status fail(Status s, uint64_t header_pos);
  Status fail_at(Status s, uint64_t offset, uint32_t blob);
  Status fail_values(Status s, uint64_t offset, uint32_t blob, uint64_t found, uint64_t expected);
  Status end_root_key();
  Status end_entry(uint64_t close_pos);
  Status end_metadata();
  void append_small(const uint8_t* p, size_t n);
  size_t fast_entry(const uint8_t* begin, const uint8_t* end, int boundary);
  bool append_blob(const uint8_t* p, size_t n);

  Limits limits_;
  JsonLexer lexer_;
  Error error_;
  JsonSkipper skipper_;
};

}  // namespace detail
}  // namespace ws
