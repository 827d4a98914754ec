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

// Appends a piece of a string, keeping at most `max` bytes of it; full_size counts every byte.
void append_piece(MetaValue* s, const ws::Event& e, size_t max) {
  s->full_size += e.size;
  if (s->text.size() < max) {
    const size_t room = max - s->text.size();
    s->text.append(reinterpret_cast<const char*>(e.data), e.size < room ? e.size : room);
  }
}

}  // namespace

void GgufKvCollector::on_event(const ws::Event& e, uint64_t string_bytes) {
  switch (e.type) {
    case ws::EventType::KvBegin: {
      MetadataRow row;
      if (e.key.data) row.key.assign(e.key.data, e.key.size);
      row.offset = e.offset;
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
      on_bytes(e, string_bytes);
      break;
    default:
      break;
  }
}

void GgufKvCollector::on_bytes(const ws::Event& e, uint64_t string_bytes) {
  if (rows_.empty()) return;
  MetaValue& value = rows_.back().value;
  if (value.kind != MetaValue::Kind::Array) {
    // A string value, in pieces.
    if (e.first) {
      value.text.clear();
      value.full_size = 0;
    }
    append_piece(&value, e, kMaxKeptString);
    return;
  }
  if (e.elem_type == GgufType::String)
    on_string_element(e, string_bytes, &value);
  else
    on_numeric_elements(e, &value);
}

// A piece of string element `e.index`. Only the first elements and the last are kept (the loader
// hands out no others: ModelHost sets ModelLoaderOptions::gguf_array_*); string_bytes is the
// loader's count.
void GgufKvCollector::on_string_element(const ws::Event& e, uint64_t string_bytes, MetaValue* array) {
  array->string_bytes = string_bytes;
  if (e.index < kKeptArrayElements) {
    if (e.first) array->head.emplace_back();
    if (!array->head.empty()) append_piece(&array->head.back(), e, kMaxKeptArrayString);
  }
  if (e.index + 1 == array->count) {
    if (e.first) array->last.assign(1, MetaValue());
    if (!array->last.empty()) append_piece(&array->last.front(), e, kMaxKeptArrayString);
  }
}

// Whole numeric elements from element `e.index` on: decode the ones kept (the first, the last).
void GgufKvCollector::on_numeric_elements(const ws::Event& e, MetaValue* array) {
  const uint32_t elem = ws::gguf_type_size(e.elem_type);
  if (elem == 0) return;
  const uint64_t n = e.size / elem;
  for (uint64_t k = 0; k < n && e.index + k < kKeptArrayElements; ++k)
    array->head.push_back(decode_scalar(e.elem_type, e.data + k * elem));
  if (array->count > 0 && e.index + n == array->count)
    array->last.assign(1, decode_scalar(e.elem_type, e.data + (n - 1) * elem));
}

}  // namespace wscli
