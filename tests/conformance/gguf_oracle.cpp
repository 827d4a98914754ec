// Truncation and declared-size expectations from a GGUF field map (see gguf_oracle.h).
#include "gguf_oracle.h"

#include <stdio.h>
#include <stdlib.h>

namespace wsgguf {

namespace {

constexpr uint64_t kMinKv = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, u8 value
constexpr uint64_t kMinTensorInfo = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset

bool in_header(Field f) {
  return f != Field::DataPadding && f != Field::Gap && f != Field::Data && f != Field::TailPadding;
}

}  // namespace

Verdict verdict(const std::string& status, uint64_t offset) {
  Verdict v;
  v.status = status;
  v.offset = offset;
  return v;
}

Verdict verdict_tensor(const std::string& status, uint64_t offset, const std::string& tensor) {
  Verdict v = verdict(status, offset);
  v.has_tensor = true;
  v.tensor = tensor;
  return v;
}

Verdict truncated_at(const Built& b, const Spec& spec, uint64_t p) {
  if (p >= b.bytes.size()) return verdict("Ok", b.bytes.size());
  if (p < 8) return verdict("HeaderTooSmall", p);
  for (const FieldAt& f : b.fields) {
    if (!(f.begin <= p && p < f.end)) continue;
    if (in_header(f.kind)) return verdict("TruncatedHeader", p);
    if (f.kind == Field::TailPadding) return verdict("Ok", p);  // the end padding may be absent
    int t = f.kind == Field::DataPadding ? 0 : f.index;
    return verdict_tensor("TruncatedData", p, spec.tensors[size_t(t)].name);
  }
  fprintf(stderr, "gguf_oracle: no field holds byte %llu\n", (unsigned long long)p);
  abort();
}

Verdict with_declared_size(const Built& b, uint64_t size, const Verdict& plain) {
  uint64_t n_tensors = 0;
  for (const FieldAt& f : b.fields) {
    if (f.begin >= plain.offset || f.end > size || !in_header(f.kind)) break;
    uint64_t rest = size - f.end;
    switch (f.kind) {
      case Field::TensorCount:
        n_tensors = f.value;
        break;
      case Field::KvCount: {
        // Negative or over-u32 counts are errors of their own, whatever the size.
        if (int64_t(n_tensors) < 0 || n_tensors > 0xFFFFFFFFu || int64_t(f.value) < 0) break;
        uint64_t ti = n_tensors * kMinTensorInfo, kv, total;
        if (ti > rest) return verdict("GgufCountTooLarge", 8);
        if (__builtin_mul_overflow(f.value, kMinKv, &kv) || __builtin_add_overflow(ti, kv, &total) ||
            total > rest)
          return verdict("GgufCountTooLarge", 16);
        break;
      }
      case Field::KeyLen:
      case Field::StrLen:
      case Field::NameLen:
        if (f.kind == Field::NameLen && f.value >= 64) break;  // too long whatever the size
        if (f.value > rest) return verdict("GgufStringTooLong", f.begin);
        break;
      case Field::ArrCount: {
        uint64_t elem = f.elem_type == kString ? 8 : value_size(f.elem_type), need;
        if (__builtin_mul_overflow(f.value, elem, &need) || need > rest)
          return verdict("GgufArrayTooLong", f.begin);
        break;
      }
      default:
        break;
    }
  }
  return plain;
}

}  // namespace wsgguf
