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

class SafetensorsHeaderParser {
 public:
  // Out of line: the member initializers are emitted once, here, rather than in every
  // constructor that holds a parser (Reader's) and again in reset().
  SafetensorsHeaderParser();
  void reset(Arena* arena, const Limits& limits, uint64_t header_start);

  // Consumes all `n` bytes (the caller never passes bytes beyond the header). Returns Ok or the
  // first error, with error() filled in.
  Status feed(const uint8_t* data, size_t n);
  // The header's last byte was fed: complete the table (sort, duplicate and offset checks).
  Status finish(TensorTable* table);

  const Error& error() const { return error_; }
  uint64_t data_size() const { return data_size_; }
  uint32_t tensor_count() const { return tensor_count_; }

 private:
  enum Ctx : uint8_t {
    kRootStart, kRootKey, kRootValueTensor, kRootValueMeta,
    kEntryKey, kEntryValue, kDtype, kShape, kOffsets, kSkip,
    kMetaKey, kMetaValue, kDone,
  };
  enum Field : uint8_t { kFieldDtype = 1, kFieldShape = 2, kFieldOffsets = 4, kFieldOther = 8 };

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

  Arena* arena_ = nullptr;
  Limits limits_;
  JsonLexer lexer_;
  Error error_;
  Ctx ctx_ = kRootStart;
  uint64_t header_start_ = 0;   // absolute offset of the header's first byte

  // Key being read (root key = tensor name or __metadata__).
  size_t key_mark_ = 0, key_need_mark_ = 0;  // arena marks at the key's [u32 length]
  uint64_t key_size_ = 0;
  uint64_t key_pos_ = 0;
  bool key_is_meta_ = false;    // the key so far is a prefix of "__metadata__"

  // Small string buffer: entry field names and dtype strings.
  char small_[16] = {};
  uint32_t small_size_ = 0;
  bool small_overflow_ = false;

  // Tensor entry being read.
  uint8_t seen_fields_ = 0;
  uint8_t cur_field_ = 0;
  uint64_t field_pos_ = 0;
  uint8_t dtype_ = 0;
  uint32_t rank_ = 0;
  size_t dims_mark_ = 0, dims_need_mark_ = 0;  // arena marks where the packed dims start
  uint32_t offsets_count_ = 0;
  uint64_t offsets_[2] = {};
  uint64_t elements_ = 1;
  bool elements_overflow_ = false;
  bool has_zero_dim_ = false;
  JsonSkipper skipper_;

  // Metadata.
  bool meta_seen_ = false;
  bool has_meta_ = false;
  size_t meta_begin_ = 0, meta_need_begin_ = 0, meta_end_ = 0;
  uint32_t meta_count_ = 0;
  size_t meta_len_mark_ = 0;
  uint64_t meta_str_size_ = 0;

  uint32_t tensor_count_ = 0;
  uint64_t data_size_ = 0;
  bool skipped_check_ = false;  // a duplicate check could not run (arena exhausted)
};

}  // namespace detail
}  // namespace ws
