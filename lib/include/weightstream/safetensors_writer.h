// weightstream — a streaming safetensors writer: the header from a table, then the data in pieces.
//
//   ws::WriterTensor rows[] = {{"w", 1, ws::DType::BF16, shape, 2, 2 * 4096 * 2}};
//   ws::SafetensorsWriter w;
//   if (w.init(rows, 1, meta, meta_count, /*has_metadata=*/true) != ws::Status::Ok) ... w.error();
//   // w.file_size() is known now: header_size() + data_size().
//   while (!w.header_done()) { size_t n; w.header(buf, sizeof buf, &n); write(buf, n); }
//   // then every tensor's bytes, in table order, in any pieces:
//   w.data(0, n1); write(piece1, n1); w.data(0, n2); write(piece2, n2); ...
//   w.finish();  // Ok when every tensor's bytes were accounted
//
// The bytes are those of the reference writer, huggingface/safetensors safetensors/src/tensor.rs
// (`prepare` and `impl Serialize for Metadata`): an 8-byte little-endian length, then compact JSON
// (serde_json::to_string: no whitespace) with `__metadata__` first when there is one, then one
// entry per tensor {"dtype":..,"shape":[..],"data_offsets":[begin,end]}, the JSON padded with
// spaces to a multiple of 8 bytes (`next_multiple_of(N_LEN)` then `resize(.., b' ')`). Strings are
// escaped as serde_json's ESCAPE table has it (src/ser.rs: \" \\ \b \t \n \f \r, other control
// bytes \u00xx with lowercase hex; nothing else). Unlike `prepare`, the writer keeps the caller's
// order (the crate sorts by dtype alignment, then name; readers accept any order of contiguous
// offsets): the order is the caller's plan, so a host can stream tensors as it decodes them.
//
// Nothing allocates and nothing is copied: the writer keeps pointers into the caller's table,
// which must stay valid and unchanged until finish(). The header is generated on demand into the
// caller's buffer, of any size; the data bytes never pass through the writer, which only counts
// them, so a host writes them wherever it likes (a file, a WritableStream, a flash page).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

// One row of the caller's table: a tensor of the file, in file order.
struct WriterTensor {
  const char* name = nullptr;  // UTF-8, need not be NUL-terminated
  size_t name_size = 0;
  DType dtype = DType::F32;
  const uint64_t* shape = nullptr;  // row-major dims (rank 0: a scalar)
  uint32_t rank = 0;
  uint64_t byte_size = 0;  // must equal elements x dtype bits / 8
};

// One __metadata__ entry (string to string), written in the caller's order.
struct WriterMetadata {
  const char* key = nullptr;
  size_t key_size = 0;
  const char* value = nullptr;
  size_t value_size = 0;
};

// The largest padded JSON header the reference reader accepts (tensor.rs MAX_HEADER_SIZE).
constexpr uint64_t kSafetensorsMaxHeader = 100000000;

class SafetensorsWriter {
 public:
  // Checks the table and computes the layout. Errors (error().tensor is the row, or kNoTensor
  // for a metadata entry, error().offset the byte within the name or string):
  //   InvalidUtf8 (a name, key or value is not UTF-8), InvalidDtype (outside the enum),
  //   ShapeOverflow, MisalignedSlice, TensorSizeMismatch (found: byte_size, expected: from the
  //   shape), DuplicateTensorName / DuplicateMetadataKey (the later row; only when `scratch` is
  //   given), HeaderTooLarge (the JSON is over kSafetensorsMaxHeader), UsageError (null pointers
  //   with nonzero sizes, or a tensor named "__metadata__").
  // `has_metadata`: write "__metadata__":{...} even when meta_count is 0 (the input had an empty
  // one); false with meta_count > 0 is UsageError.
  // `scratch` (optional, 4-byte aligned, scratch_bytes(max(count, meta_count)) bytes): enables the
  // duplicate-name checks; it is used during init() only.
  Status init(const WriterTensor* tensors, uint32_t count, const WriterMetadata* meta, uint32_t meta_count,
              bool has_metadata, uint32_t* scratch = nullptr, size_t scratch_size = 0);
  static size_t scratch_bytes(uint32_t n);

  // The layout, valid after init(): the whole header (8-byte length and padded JSON), the data
  // section, the file, and tensor i's data offsets relative to the data section.
  uint64_t header_size() const { return 8 + json_size_; }
  uint64_t data_size() const { return data_size_; }
  uint64_t file_size() const { return 8 + json_size_ + data_size_; }
  uint64_t tensor_begin(uint32_t i) const;

  // Writes the next header bytes into out[0, cap) (any cap >= 1); *written is how many. Call
  // until header_done(). UsageError before init() or after the header is complete.
  Status header(uint8_t* out, size_t cap, size_t* written);
  bool header_done() const { return header_pos_ == header_size() && inited_; }

  // Accounts `n` bytes of tensor `tensor`'s data, which the caller writes right after the bytes
  // accounted before. Tensors come in table order; zero-byte tensors need no call. Errors, with
  // error().offset the absolute file offset where the piece would start and error().tensor the
  // tensor the writer expected: UsageError (header not complete), WriterTensorOutOfOrder (found:
  // the tensor given, expected: the one due), WriterPastTensorEnd (found: bytes given,
  // expected: bytes the tensor has left).
  Status data(uint32_t tensor, uint64_t n);
  // The tensor whose bytes are due next (count when all are complete), and how many it has left.
  uint32_t current_tensor() const { return cur_; }
  uint64_t current_left() const;

  // Every tensor complete: Ok; else WriterIncomplete at the position reached (tensor: the one due).
  Status finish();
  // Bytes of the file produced or accounted so far.
  uint64_t position() const { return header_pos_ + data_pos_; }
  const Error& error() const { return error_; }

 private:
  struct Sink;
  void emit_item(uint64_t item, Sink* s) const;
  uint64_t item_count() const;
  Status fail(Status s, uint64_t offset, uint32_t tensor);
  void skip_empty();

  const WriterTensor* t_ = nullptr;
  const WriterMetadata* m_ = nullptr;
  uint32_t count_ = 0, meta_count_ = 0;
  bool has_meta_ = false, inited_ = false;
  uint64_t json_size_ = 0;  // padded
  uint64_t pad_ = 0;
  uint64_t data_size_ = 0;
  // Header generation: the item being written, the bytes of it written, the running data offset.
  uint64_t header_pos_ = 0;
  uint64_t item_ = 0, item_done_ = 0;
  uint64_t item_data_offset_ = 0;
  // Data accounting.
  uint32_t cur_ = 0;
  uint64_t cur_done_ = 0;
  uint64_t data_pos_ = 0;
  Error error_;
};

}  // namespace ws
