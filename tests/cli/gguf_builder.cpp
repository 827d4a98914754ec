// tests/cli — the GGUF writer for tests (see gguf_builder.h).
#include "gguf_builder.h"

#include <string.h>

namespace clitest {
namespace {

void put(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void put_string(std::string* out, const std::string& s) {
  put(out, s.size(), 8);
  *out += s;
}

std::string kv_head(const std::string& key, uint32_t type) {
  std::string kv;
  put_string(&kv, key);
  put(&kv, type, 4);
  return kv;
}

uint64_t padded(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

}  // namespace

GgufBuilder& GgufBuilder::kv_string(const std::string& key, const std::string& value) {
  std::string kv = kv_head(key, 8);
  put_string(&kv, value);
  kvs_.push_back(kv);
  return *this;
}

GgufBuilder& GgufBuilder::kv_u32(const std::string& key, uint32_t value) {
  std::string kv = kv_head(key, 4);
  put(&kv, value, 4);
  kvs_.push_back(kv);
  return *this;
}

GgufBuilder& GgufBuilder::kv_u64(const std::string& key, uint64_t value) {
  std::string kv = kv_head(key, 10);
  put(&kv, value, 8);
  kvs_.push_back(kv);
  return *this;
}

GgufBuilder& GgufBuilder::kv_f32(const std::string& key, float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  std::string kv = kv_head(key, 6);
  put(&kv, bits, 4);
  kvs_.push_back(kv);
  return *this;
}

GgufBuilder& GgufBuilder::kv_string_array(const std::string& key,
                                          const std::vector<std::string>& values) {
  std::string kv = kv_head(key, 9);
  put(&kv, 8, 4);
  put(&kv, values.size(), 8);
  for (const std::string& v : values) put_string(&kv, v);
  kvs_.push_back(kv);
  return *this;
}

GgufBuilder& GgufBuilder::kv_i32_array(const std::string& key, const std::vector<int32_t>& values) {
  std::string kv = kv_head(key, 9);
  put(&kv, 5, 4);
  put(&kv, values.size(), 8);
  for (int32_t v : values) put(&kv, static_cast<uint32_t>(v), 4);
  kvs_.push_back(kv);
  return *this;
}

GgufBuilder& GgufBuilder::tensor(const std::string& name, const std::vector<uint64_t>& ne,
                                 uint32_t type_id, uint64_t bytes, uint64_t offset_override) {
  tensors_.push_back({name, ne, type_id, bytes, offset_override});
  return *this;
}

std::string GgufBuilder::header(std::vector<uint64_t>* type_fields,
                                std::vector<uint64_t>* offset_fields,
                                std::vector<uint64_t>* kv_offsets) const {
  std::string out = "GGUF";
  put(&out, version_, 4);
  put(&out, tensors_.size(), 8);
  put(&out, kvs_.size(), 8);
  for (const std::string& kv : kvs_) {
    kv_offsets->push_back(out.size());
    out += kv;
  }
  uint64_t next = 0;
  for (const Tensor& t : tensors_) {
    put_string(&out, t.name);
    put(&out, t.ne.size(), 4);
    for (uint64_t d : t.ne) put(&out, d, 8);
    type_fields->push_back(out.size());
    put(&out, t.type, 4);
    offset_fields->push_back(out.size());
    put(&out, t.offset_override != ~uint64_t(0) ? t.offset_override : next, 8);
    next = padded(next + t.bytes, alignment_);
  }
  return out;
}

std::string GgufBuilder::bytes() const {
  std::vector<uint64_t> types, offsets, kvs;
  std::string out = header(&types, &offsets, &kvs);
  if (tensors_.empty()) return out;
  out.resize(padded(out.size(), alignment_), '\0');
  uint64_t end = 0, next = 0;
  for (const Tensor& t : tensors_) {
    end = next + t.bytes;
    next = padded(end, alignment_);
  }
  out.resize(out.size() + end, '\0');
  return out;
}

uint64_t GgufBuilder::offset_field(size_t i) const {
  std::vector<uint64_t> types, offsets, kvs;
  header(&types, &offsets, &kvs);
  return offsets.at(i);
}

uint64_t GgufBuilder::type_field(size_t i) const {
  std::vector<uint64_t> types, offsets, kvs;
  header(&types, &offsets, &kvs);
  return types.at(i);
}

uint64_t GgufBuilder::kv_offset(size_t i) const {
  std::vector<uint64_t> types, offsets, kvs;
  header(&types, &offsets, &kvs);
  return kvs.at(i);
}

}  // namespace clitest
