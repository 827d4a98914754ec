// Accessors over the compact tensor table the header parsers leave in the arena.
#include "weightstream/tensor_table.h"

#include <string.h>

#include "weightstream/detail/bytes.h"
#include "weightstream/status.h"

namespace ws {

bool StrView::equals(const char* s, size_t n) const {
  return size == n && (n == 0 || memcmp(data, s, n) == 0);
}

bool StrView::equals(const char* zstr) const { return equals(zstr, strlen(zstr)); }

uint64_t ShapeIter::next() {
  uint64_t v;
  p_ = detail::get_varint(p_, &v);
  --remaining_;
  return v;
}

uint64_t TensorInfo::dim(uint32_t i) const {
  ShapeIter it = shape();
  uint64_t v = 0;
  for (uint32_t k = 0; k <= i && !it.done(); ++k) v = it.next();
  return v;
}

uint32_t TensorInfo::copy_shape(uint64_t* out, uint32_t max) const {
  ShapeIter it = shape();
  for (uint32_t k = 0; k < max && !it.done(); ++k) out[k] = it.next();
  return rank;
}

uint64_t TensorInfo::element_count() const {
  uint64_t n = 1;
  for (ShapeIter it = shape(); !it.done();) n *= it.next();
  return n;
}

TensorInfo TensorTable::get(uint32_t i) const {
  TensorInfo t;
  if (i >= count_) return t;
  const TensorRecord& r = recs_[i];
  const uint8_t* p = base_ + r.blob;
  uint32_t name_len = detail::load_u32(p);
  t.name.data = reinterpret_cast<const char*>(p + 4);
  t.name.size = name_len;
  p += 4 + name_len;
  t.type = *p++;
  uint64_t rank;
  p = detail::get_varint(p, &rank);
  t.rank = static_cast<uint32_t>(rank);
  t.packed_shape = p;
  t.begin = r.begin;
  t.end = r.end;
  t.entry_offset = entry_base_ + r.header_pos;
  return t;
}

uint32_t TensorTable::find(const char* name, size_t n) const {
  for (uint32_t i = 0; i < count_; ++i) {
    const uint8_t* p = base_ + recs_[i].blob;
    if (detail::load_u32(p) == n && memcmp(p + 4, name, n) == 0) return i;
  }
  return kNoTensor;
}

MetadataEntry TensorTable::metadata_at(uint32_t* cursor) const {
  // Entries are [u32 key_len][u32 key_header_pos][key][u32 value_len][value], back to back.
  MetadataEntry e;
  uint32_t off = meta_begin_ + *cursor;
  if (off >= meta_end_) return e;
  const uint8_t* p = base_ + off;
  uint32_t klen = detail::load_u32(p);
  e.key.data = reinterpret_cast<const char*>(p + 8);
  e.key.size = klen;
  p += 8 + klen;
  uint32_t vlen = detail::load_u32(p);
  e.value.data = reinterpret_cast<const char*>(p + 4);
  e.value.size = vlen;
  *cursor += 12 + klen + vlen;
  return e;
}

bool TensorTable::find_metadata(const char* key, StrView* value) const {
  uint32_t cursor = 0;
  size_t n = strlen(key);
  for (uint32_t i = 0; i < meta_count_; ++i) {
    MetadataEntry e = metadata_at(&cursor);
    if (e.key.equals(key, n)) {
      *value = e.value;
      return true;
    }
  }
  return false;
}

}  // namespace ws
