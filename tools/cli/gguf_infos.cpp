// weightstream CLI — the tensor-info copy (see gguf_infos.h).
#include "gguf_infos.h"

namespace wscli {

void GgufInfoCopy::start(uint64_t offset) {
  if (started_) return;
  started_ = true;
  start_ = offset;
}

void GgufInfoCopy::keep(const uint8_t* data, size_t size, uint64_t at) {
  if (!started_ || stopped_ || !data) return;
  const uint64_t have_end = start_ + bytes_.size();
  const uint64_t end = at + size;
  if (end <= have_end) return;
  const uint64_t from = at > have_end ? at : have_end;
  // A gap would mean a piece was missed; the copy then stays short and reads fail cleanly.
  if (from != have_end) return;
  bytes_.append(reinterpret_cast<const char*>(data + (from - at)), size_t(end - from));
}

void GgufInfoCopy::stop() {
  stopped_ = true;
  std::string().swap(bytes_);
}

bool GgufInfoCopy::read(uint64_t offset, uint32_t n, uint64_t* v) const {
  if (!started_ || offset < start_ || offset - start_ > bytes_.size() ||
      bytes_.size() - (offset - start_) < n)
    return false;
  const size_t p = size_t(offset - start_);
  uint64_t x = 0;
  for (uint32_t k = 0; k < n; ++k) x |= uint64_t(static_cast<unsigned char>(bytes_[p + k])) << (8 * k);
  *v = x;
  return true;
}

bool GgufInfoCopy::read_u32(uint64_t offset, uint32_t* v) const {
  uint64_t x;
  if (!read(offset, 4, &x)) return false;
  *v = uint32_t(x);
  return true;
}

bool GgufInfoCopy::read_u64(uint64_t offset, uint64_t* v) const { return read(offset, 8, v); }

bool GgufInfoCopy::expected_data_offset(uint64_t field_offset, uint32_t alignment,
                                        ws::GgmlDialect dialect, uint64_t* expected) const {
  if (alignment == 0) return false;
  // Walk the infos: u64 name length, name, u32 n_dims, u64 dims, u32 type, u64 offset. The ones
  // before the rejected info passed the reader's checks, so their own offsets were as expected.
  uint64_t pos = start_, next = 0;
  for (;;) {
    uint64_t name_len, dim, offset;
    uint32_t n_dims, type;
    if (!read_u64(pos, &name_len)) return false;
    pos += 8 + name_len;
    if (!read_u32(pos, &n_dims) || n_dims > 4) return false;
    pos += 4;
    uint64_t elements = 1;
    bool zero = false, overflow = false;  // as in ggml, a zero dimension means no elements
    for (uint32_t d = 0; d < n_dims; ++d, pos += 8) {
      if (!read_u64(pos, &dim)) return false;
      if (dim == 0) zero = true;
      else if (__builtin_mul_overflow(elements, dim, &elements)) overflow = true;
    }
    if (zero) elements = 0;
    else if (overflow) return false;
    if (!read_u32(pos, &type)) return false;
    pos += 4;
    if (pos == field_offset) {
      *expected = next;
      return true;
    }
    if (pos > field_offset || !read_u64(pos, &offset)) return false;
    pos += 8;
    uint64_t bytes, end;
    if (!ws::ggml_tensor_bytes(ws::ggml_type_info(type, dialect), elements, &bytes) ||
        __builtin_add_overflow(offset, bytes, &end) || end > ~uint64_t(0) - alignment)
      return false;
    next = (end + alignment - 1) / alignment * alignment;
  }
}

}  // namespace wscli
