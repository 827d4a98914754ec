// The streaming safetensors writer: the header generated item by item into the caller's buffer,
// the data only counted (safetensors_writer.h has the byte format and its sources).
#include "weightstream/safetensors_writer.h"

#include <string.h>

#include "weightstream/detail/duplicate_finder.h"

namespace ws {

namespace {

// The offset of the first byte that is not well-formed UTF-8 (RFC 3629: no overlongs, no
// surrogates, nothing past U+10FFFF), or n when all are.
size_t utf8_error(const char* s, size_t n) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s);
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (n - i <= need) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k <= need; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += need + 1;
  }
  return n;
}

}  // namespace

// Where generated header bytes go: the first `skip` bytes (written by an earlier call) are
// dropped, then as many as fit in out[0, cap). `total` counts every byte (init measures with it).
struct SafetensorsWriter::Sink {
  uint8_t* out = nullptr;
  size_t cap = 0, n = 0;
  uint64_t skip = 0;
  uint64_t total = 0;

  void put(const char* p, size_t len) {
    total += len;
    if (skip >= len) {
      skip -= len;
      return;
    }
    p += skip;
    len -= size_t(skip);
    skip = 0;
    size_t room = cap - n;
    size_t k = len < room ? len : room;
    if (k) memcpy(out + n, p, k);
    n += k;
  }
  void put(const char* z) { put(z, strlen(z)); }
  void put_u64(uint64_t v) {
    char buf[20];
    size_t i = sizeof buf;
    do {
      buf[--i] = char('0' + v % 10);
      v /= 10;
    } while (v);
    put(buf + i, sizeof buf - i);
  }
  // A JSON string as serde_json writes it (src/ser.rs, ESCAPE and format_escaped_str_contents).
  void put_string(const char* s, size_t len) {
    static const char kHex[] = "0123456789abcdef";
    put("\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < len; ++i) {
      const uint8_t c = uint8_t(s[i]);
      char esc[6];
      size_t en = 0;
      if (c == '"' || c == '\\') {
        esc[0] = '\\', esc[1] = char(c), en = 2;
      } else if (c < 0x20) {
        esc[0] = '\\';
        en = 2;
        switch (c) {
          case 0x08: esc[1] = 'b'; break;
          case 0x09: esc[1] = 't'; break;
          case 0x0A: esc[1] = 'n'; break;
          case 0x0C: esc[1] = 'f'; break;
          case 0x0D: esc[1] = 'r'; break;
          default:
            esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = kHex[c >> 4], esc[5] = kHex[c & 15];
            en = 6;
        }
      }
      if (!en) continue;
      put(s + run, i - run);
      put(esc, en);
      run = i + 1;
    }
    put(s + run, len - run);
    put("\"", 1);
  }
};

size_t SafetensorsWriter::scratch_bytes(uint32_t n) { return detail::duplicate_table_bytes(n); }

Status SafetensorsWriter::fail(Status s, uint64_t offset, uint32_t tensor) {
  error_ = Error();
  error_.code = s;
  error_.offset = offset;
  error_.tensor = tensor;
  if (tensor != kNoTensor && tensor < count_ && t_) {
    error_.tensor_name = t_[tensor].name;
    error_.tensor_name_size = t_[tensor].name_size;
  }
  return s;
}

// Items: 0 the length prefix, 1 "{", [metadata: open, one per entry, close], one per tensor,
// "}", the padding.
uint64_t SafetensorsWriter::item_count() const {
  return 2 + (has_meta_ ? uint64_t(meta_count_) + 2 : 0) + count_ + 2;
}

void SafetensorsWriter::emit_item(uint64_t item, Sink* s) const {
  if (item == 0) {
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = uint8_t(json_size_ >> (8 * i));
    s->put(reinterpret_cast<const char*>(le), 8);
    return;
  }
  if (item == 1) return s->put("{", 1);
  uint64_t k = item - 2;
  if (has_meta_) {
    if (k == 0) return s->put("\"__metadata__\":{");
    if (k <= meta_count_) {
      const WriterMetadata& m = m_[k - 1];
      if (k > 1) s->put(",", 1);
      s->put_string(m.key, m.key_size);
      s->put(":", 1);
      return s->put_string(m.value, m.value_size);
    }
    if (k == uint64_t(meta_count_) + 1) return s->put("}", 1);
    k -= uint64_t(meta_count_) + 2;
  }
  if (k < count_) {
    const WriterTensor& t = t_[k];
    if (k > 0 || has_meta_) s->put(",", 1);
    s->put_string(t.name, t.name_size);
    s->put(":{\"dtype\":\"");
    s->put(dtype_name(t.dtype));
    s->put("\",\"shape\":[");
    for (uint32_t d = 0; d < t.rank; ++d) {
      if (d) s->put(",", 1);
      s->put_u64(t.shape[d]);
    }
    s->put("],\"data_offsets\":[");
    s->put_u64(item_data_offset_);
    s->put(",", 1);
    s->put_u64(item_data_offset_ + t.byte_size);
    return s->put("]}");
  }
  if (k == count_) return s->put("}", 1);
  static const char kSpaces[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  s->put(kSpaces, size_t(pad_));
}

Status SafetensorsWriter::init(const WriterTensor* tensors, uint32_t count, const WriterMetadata* meta,
                               uint32_t meta_count, bool has_metadata, uint32_t* scratch, size_t scratch_size) {
  *this = SafetensorsWriter();
  if ((count && !tensors) || (meta_count && !meta) || (meta_count && !has_metadata))
    return fail(Status::UsageError, 0, kNoTensor);
  t_ = tensors;
  m_ = meta;
  count_ = count;
  meta_count_ = meta_count;
  has_meta_ = has_metadata;

  for (uint32_t i = 0; i < meta_count; ++i) {
    const WriterMetadata& m = meta[i];
    if ((m.key_size && !m.key) || (m.value_size && !m.value)) return fail(Status::UsageError, 0, kNoTensor);
    size_t e = utf8_error(m.key, m.key_size);
    if (e != m.key_size) return fail(Status::InvalidUtf8, e, kNoTensor);
    e = utf8_error(m.value, m.value_size);
    if (e != m.value_size) return fail(Status::InvalidUtf8, e, kNoTensor);
  }
  for (uint32_t i = 0; i < count; ++i) {
    const WriterTensor& t = tensors[i];
    if ((t.name_size && !t.name) || (t.rank && !t.shape)) return fail(Status::UsageError, 0, i);
    // A tensor named __metadata__ would be read back as the metadata (the crate's reader
    // refuses it as a tensor).
    if (t.name_size == 12 && memcmp(t.name, "__metadata__", 12) == 0) return fail(Status::UsageError, 0, i);
    const size_t e = utf8_error(t.name, t.name_size);
    if (e != t.name_size) return fail(Status::InvalidUtf8, e, i);
    if (uint32_t(t.dtype) >= kDTypeCount) return fail(Status::InvalidDtype, 0, i);
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t.rank; ++d) {
      const uint64_t v = t.shape[d];
      if (v && elements > ~0ull / v) return fail(Status::ShapeOverflow, 0, i);
      elements *= v;
    }
    const uint64_t bits = dtype_bits(t.dtype);
    if (elements > ~0ull / bits) return fail(Status::ShapeOverflow, 0, i);
    if (elements * bits % 8) return fail(Status::MisalignedSlice, 0, i);
    if (elements * bits / 8 != t.byte_size) {
      fail(Status::TensorSizeMismatch, 0, i);
      error_.set_found(t.byte_size);
      error_.set_expected(elements * bits / 8);
      return error_.code;
    }
    if (data_size_ + t.byte_size < data_size_) return fail(Status::ShapeOverflow, 0, i);
    data_size_ += t.byte_size;
  }
  if (scratch) {
    const uint32_t most = count > meta_count ? count : meta_count;
    if (scratch_size < scratch_bytes(most)) return fail(Status::UsageError, 0, kNoTensor);
    const uint64_t seed = 0x5AFE7E5050000001ull;
    uint32_t dup = detail::find_duplicate(
        count, [&](uint32_t i) { StrView v; v.data = tensors[i].name; v.size = tensors[i].name_size; return v; },
        scratch, seed);
    if (dup != detail::kNoDuplicate) return fail(Status::DuplicateTensorName, 0, dup);
    dup = detail::find_duplicate(
        meta_count, [&](uint32_t i) { StrView v; v.data = meta[i].key; v.size = meta[i].key_size; return v; },
        scratch, seed);
    if (dup != detail::kNoDuplicate) {
      fail(Status::DuplicateMetadataKey, 0, kNoTensor);
      error_.set_found(dup);
      return error_.code;
    }
  }

  // Measure the JSON: every item but the prefix and the padding, counted, not stored.
  Sink count_sink;
  const uint64_t items = item_count();
  for (uint64_t item = 1; item + 1 < items; ++item) {
    emit_item(item, &count_sink);
    const uint64_t k = item - 2 - (has_meta_ ? uint64_t(meta_count_) + 2 : 0);
    if (item >= 2 + (has_meta_ ? uint64_t(meta_count_) + 2 : 0) && k < count_) item_data_offset_ += t_[k].byte_size;
  }
  item_data_offset_ = 0;
  pad_ = (8 - count_sink.total % 8) % 8;
  json_size_ = count_sink.total + pad_;
  if (json_size_ > kSafetensorsMaxHeader) {
    fail(Status::HeaderTooLarge, 0, kNoTensor);
    error_.set_found(json_size_);
    error_.set_expected(kSafetensorsMaxHeader);
    return error_.code;
  }
  inited_ = true;
  skip_empty();
  return Status::Ok;
}

uint64_t SafetensorsWriter::tensor_begin(uint32_t i) const {
  uint64_t b = 0;
  for (uint32_t k = 0; k < i && k < count_; ++k) b += t_[k].byte_size;
  return b;
}

Status SafetensorsWriter::header(uint8_t* out, size_t cap, size_t* written) {
  *written = 0;
  if (!inited_ || header_done() || !out || cap == 0) return fail(Status::UsageError, position(), kNoTensor);
  const uint64_t items = item_count();
  const uint64_t first_tensor_item = 2 + (has_meta_ ? uint64_t(meta_count_) + 2 : 0);
  size_t n = 0;
  while (n < cap && item_ < items) {
    Sink s;
    s.out = out + n;
    s.cap = cap - n;
    s.skip = item_done_;
    emit_item(item_, &s);
    n += s.n;
    header_pos_ += s.n;
    if (item_done_ + s.n < s.total) {
      item_done_ += s.n;
      break;
    }
    if (item_ >= first_tensor_item && item_ - first_tensor_item < count_)
      item_data_offset_ += t_[item_ - first_tensor_item].byte_size;
    ++item_;
    item_done_ = 0;
  }
  *written = n;
  return Status::Ok;
}

void SafetensorsWriter::skip_empty() {
  while (cur_ < count_ && cur_done_ == t_[cur_].byte_size) {
    ++cur_;
    cur_done_ = 0;
  }
}

uint64_t SafetensorsWriter::current_left() const { return cur_ < count_ ? t_[cur_].byte_size - cur_done_ : 0; }

Status SafetensorsWriter::data(uint32_t tensor, uint64_t n) {
  if (!header_done()) return fail(Status::UsageError, position(), cur_ < count_ ? cur_ : kNoTensor);
  if (n == 0) return Status::Ok;
  if (tensor != cur_) {
    fail(Status::WriterTensorOutOfOrder, position(), cur_ < count_ ? cur_ : kNoTensor);
    error_.set_found(tensor);
    error_.set_expected(cur_);
    return error_.code;
  }
  if (n > current_left()) {
    fail(Status::WriterPastTensorEnd, position(), cur_);
    error_.set_found(n);
    error_.set_expected(current_left());
    return error_.code;
  }
  cur_done_ += n;
  data_pos_ += n;
  skip_empty();
  return Status::Ok;
}

Status SafetensorsWriter::finish() {
  if (!header_done()) return fail(Status::WriterIncomplete, position(), kNoTensor);
  if (cur_ < count_) {
    fail(Status::WriterIncomplete, position(), cur_);
    error_.set_found(data_pos_);
    error_.set_expected(data_size_);
    return error_.code;
  }
  return Status::Ok;
}

}  // namespace ws
