// weightstream — name and metadata matching shared by the conventions' descriptors (internal).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "weightstream/conventions.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_params.h"
#include "weightstream/tensor_table.h"

namespace ws {
namespace conv {

inline bool ends_with(const StrView& s, const char* suffix, size_t* base_len) {
  size_t n = strlen(suffix);
  if (s.size < n || memcmp(s.data + s.size - n, suffix, n) != 0) return false;
  *base_len = s.size - n;
  return true;
}

// s == a + b, without building the concatenation (names may be of any length).
inline bool equals_concat(const StrView& s, const char* a, size_t an, const char* b) {
  size_t bn = strlen(b);
  return s.size == an + bn && memcmp(s.data, a, an) == 0 && memcmp(s.data + an, b, bn) == 0;
}

inline bool parse_u32(const StrView& s, uint32_t* out) {
  if (s.size == 0 || s.size > 9) return false;
  uint32_t v = 0;
  for (size_t i = 0; i < s.size; ++i) {
    if (s.data[i] < '0' || s.data[i] > '9') return false;
    v = v * 10 + uint32_t(s.data[i] - '0');
  }
  *out = v;
  return true;
}

// Metadata value of key a + b in `t`.
inline bool find_meta_concat(const TensorTable& t, const char* a, size_t an, const char* b, StrView* out) {
  uint32_t cursor = 0;
  for (uint32_t i = 0; i < t.metadata_count(); ++i) {
    MetadataEntry e = t.metadata_at(&cursor);
    if (equals_concat(e.key, a, an, b)) {
      *out = e.value;
      return true;
    }
  }
  return false;
}

inline bool is_float_scale(DType d) { return d == DType::BF16 || d == DType::F16 || d == DType::F32; }

inline QuantFormat format_of(QuantMode m) {
  switch (m) {
    case QuantMode::Mxfp4: return QuantFormat::MlxMxfp4;
    case QuantMode::Mxfp8: return QuantFormat::MlxMxfp8;
    case QuantMode::Nvfp4: return QuantFormat::MlxNvfp4;
    default: return QuantFormat::MlxAffine;
  }
}

// Some tensor of any of the model's tables has a name ending in `suffix`.
inline bool any_name_ends(const LogicalModel& m, const char* suffix) {
  size_t base = 0;
  for (uint32_t t = 0; t < m.table_count(); ++t)
    for (uint32_t i = 0; i < m.table(t).count(); ++i)
      if (ends_with(m.table(t).get(i).name, suffix, &base)) return true;
  return false;
}

// A config.json section whose quant_method is exactly `method`.
inline bool method_is(const MlxQuantConfig* c, const char* method) {
  return c && c->has_method() && !c->method_truncated() && c->method().equals(method);
}

}  // namespace conv
}  // namespace ws
