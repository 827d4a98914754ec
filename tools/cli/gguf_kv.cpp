// weightstream CLI — GGUF key-values (see gguf_kv.h).
#include "gguf_kv.h"

#include <string.h>

#include "weightstream/gguf.h"

namespace wscli {
namespace {

using ws::GgufType;

// A scalar of type `t` from its little-endian bytes (array elements arrive as raw bytes).
MetaValue decode_scalar(GgufType t, const uint8_t* p) {
  uint64_t raw = 0;
  const uint32_t n = ws::gguf_type_size(t);
  for (uint32_t k = 0; k < n; ++k) raw |= uint64_t(p[k]) << (8 * k);
  MetaValue v;
  switch (t) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64:
      v.kind = MetaValue::Kind::Unsigned;
      v.u = raw;
      break;
    case GgufType::I8: v.kind = MetaValue::Kind::Signed; v.i = int8_t(raw); break;
    case GgufType::I16: v.kind = MetaValue::Kind::Signed; v.i = int16_t(raw); break;
    case GgufType::I32: v.kind = MetaValue::Kind::Signed; v.i = int32_t(uint32_t(raw)); break;
    case GgufType::I64: v.kind = MetaValue::Kind::Signed; v.i = int64_t(raw); break;
    case GgufType::F32: {
      float x;
      const uint32_t b = uint32_t(raw);
      memcpy(&x, &b, 4);
      v.kind = MetaValue::Kind::Float;
      v.f = x;
      v.f32 = true;
      break;
    }
    case GgufType::F64:
      v.kind = MetaValue::Kind::Float;
      memcpy(&v.f, &raw, 8);
      break;
    case GgufType::Bool:
      v.kind = MetaValue::Kind::Bool;
      v.u = raw;
      break;
    default:
      break;
  }
  return v;
}

}  // namespace

void GgufKvCollector::on_event(const ws::Event& e) {
  switch (e.type) {
    case ws::EventType::KvBegin: {
      MetadataRow row;
      if (e.key.data) row.key.assign(e.key.data, e.key.size);
      row.type = ws::gguf_type_name(e.value_type);
      if (e.value_type == GgufType::Array) {
        row.value.kind = MetaValue::Kind::Array;
        row.value.elem_type = ws::gguf_type_name(e.elem_type);
        row.value.count = e.count;
      }
      rows_.push_back(std::move(row));
      break;
    }
    case ws::EventType::KvScalar: {
      if (rows_.empty()) break;
      MetaValue v;
      if (e.value_type == GgufType::F32 || e.value_type == GgufType::F64) {
        v.kind = MetaValue::Kind::Float;
        v.f = e.f;
        v.f32 = e.value_type == GgufType::F32;
      } else if (e.value_type == GgufType::Bool) {
        v.kind = MetaValue::Kind::Bool;
        v.u = e.u;
      } else if (e.value_type == GgufType::I8 || e.value_type == GgufType::I16 ||
                 e.value_type == GgufType::I32 || e.value_type == GgufType::I64) {
        v.kind = MetaValue::Kind::Signed;
        v.i = e.i;
      } else {
        v.kind = MetaValue::Kind::Unsigned;
        v.u = e.u;
      }
      rows_.back().value = v;
      break;
    }
    case ws::EventType::KvBytes:
      on_bytes(e);
      break;
    default:
      break;
  }
}

void GgufKvCollector::on_bytes(const ws::Event& e) {
  if (rows_.empty()) return;
  MetaValue& value = rows_.back().value;
  if (value.kind != MetaValue::Kind::Array) {
    // A string value, in pieces.
    if (e.first) value.full_size = 0;
    value.full_size += e.size;
    if (value.text.size() < kMaxKeptString) {
      const size_t room = kMaxKeptString - value.text.size();
      value.text.append(reinterpret_cast<const char*>(e.data), e.size < room ? e.size : room);
    }
    return;
  }
  if (e.elem_type == GgufType::String) {
    // Piece of string element `index`; only the first elements are kept.
    if (e.index >= kKeptArrayElements) return;
    if (e.first) value.head.emplace_back();
    if (value.head.empty()) return;
    MetaValue& s = value.head.back();
    s.full_size += e.size;
    if (s.text.size() < kMaxKeptArrayString) {
      const size_t room = kMaxKeptArrayString - s.text.size();
      s.text.append(reinterpret_cast<const char*>(e.data), e.size < room ? e.size : room);
    }
    return;
  }
  // Whole numeric elements from element `index`.
  const uint32_t elem = ws::gguf_type_size(e.elem_type);
  if (elem == 0) return;
  for (size_t k = 0; k * elem < e.size && e.index + k < kKeptArrayElements; ++k)
    value.head.push_back(decode_scalar(e.elem_type, e.data + k * elem));
}

}  // namespace wscli
