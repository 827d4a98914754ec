// weightstream — the validated tensor table, as it lives in the caller's arena.
//
// Compact by design (a microcontroller keeps it in a few KB): per tensor a 24-byte record plus the
// name and a varint-packed shape. Tensors are indexed in file (data-offset) order, which is also
// the order in which the reader streams them.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "weightstream/dtype.h"

namespace ws {

// A view of bytes owned by someone else (the arena or the caller's input).
struct StrView {
  const char* data = nullptr;
  size_t size = 0;
  bool equals(const char* s, size_t n) const;
  bool equals(const char* zstr) const;
};

// Iterates a shape stored as LEB128 varints.
class ShapeIter {
 public:
  ShapeIter(const uint8_t* p, uint32_t remaining) : p_(p), remaining_(remaining) {}
  bool done() const { return remaining_ == 0; }
  uint64_t next();

 private:
  const uint8_t* p_;
  uint32_t remaining_;
};

struct TensorInfo {
  StrView name;
  uint32_t type = 0;     // safetensors: a DType value; GGUF: a GGML type id (see ggml_types.h)
  uint32_t rank = 0;
  uint64_t begin = 0;    // data offsets relative to the start of the data section, [begin, end)
  uint64_t end = 0;
  uint64_t entry_offset = 0;  // absolute file offset of the tensor's entry in the header
  const uint8_t* packed_shape = nullptr;

  DType dtype() const { return static_cast<DType>(type); }
  uint64_t byte_size() const { return end - begin; }
  // Safetensors: row-major dims. GGUF: ggml order, ne[0] (the contiguous dimension) first.
  ShapeIter shape() const { return ShapeIter(packed_shape, rank); }
  // Dimension i (O(rank): shapes are varint-packed).
  uint64_t dim(uint32_t i) const;
  // Copies up to `max` dims into `out`; returns the rank.
  uint32_t copy_shape(uint64_t* out, uint32_t max) const;
  // Product of the shape (1 for rank 0). Validated not to overflow.
  uint64_t element_count() const;
};

struct MetadataEntry {
  StrView key;
  StrView value;
};

// Arena record of one tensor. Internal layout, exposed for the table's inline accessors.
struct TensorRecord {
  uint64_t begin;
  uint64_t end;
  uint32_t blob;        // arena offset of [u32 name_len][name][u8 type][varint rank][varint dims]
  uint32_t header_pos;  // tensor entry's offset from TensorTable's entry base
};

class TensorTable {
 public:
  uint32_t count() const { return count_; }
  TensorInfo get(uint32_t i) const;
  // Tensor i's name alone (i < count()): what get(i).name is, without decoding the rest.
  StrView name(uint32_t i) const {
    StrView v;
    const uint8_t* p = base_ + recs_[i].blob;
    uint32_t n;
    memcpy(&n, p, 4);
    v.data = reinterpret_cast<const char*>(p + 4);
    v.size = n;
    return v;
  }
  // Linear search by name; returns kNoTensor-like 0xFFFFFFFF when absent.
  uint32_t find(const char* name, size_t n) const;

  uint32_t metadata_count() const { return meta_count_; }
  // Metadata in header order; valid only while 0 <= i < metadata_count().
  // Iterating in order is O(1) per step when `cursor` is carried along (start with 0).
  MetadataEntry metadata_at(uint32_t* cursor) const;
  // Looks a metadata key up (linear); returns false when absent.
  bool find_metadata(const char* key, StrView* value) const;
  bool has_metadata() const { return has_meta_; }

  // Set by the parser.
  void set(const uint8_t* base, const TensorRecord* recs, uint32_t n, uint64_t entry_base) {
    base_ = base;
    recs_ = recs;
    count_ = n;
    entry_base_ = entry_base;
  }
  void set_metadata(uint32_t begin, uint32_t end, uint32_t count) {
    meta_begin_ = begin;
    meta_end_ = end;
    meta_count_ = count;
    has_meta_ = true;
  }
  void clear() { *this = TensorTable(); }

 private:
  const uint8_t* base_ = nullptr;
  const TensorRecord* recs_ = nullptr;
  uint32_t count_ = 0;
  uint64_t entry_base_ = 0;
  uint32_t meta_begin_ = 0, meta_end_ = 0, meta_count_ = 0;
  bool has_meta_ = false;
};

}  // namespace ws
