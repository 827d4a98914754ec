// weightstream CLI — metadata rendering (see metadata_render.h).
#include "metadata_render.h"

#include "text_format.h"

namespace wscli {
namespace {

constexpr size_t kShownStringBytes = 160;
constexpr size_t kShownArrayElements = 8;

// Cuts at a UTF-8 character boundary at or before `max` bytes.
std::string cut_utf8(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string scalar_text(const MetaValue& v) {
  switch (v.kind) {
    case MetaValue::Kind::Unsigned: return std::to_string(v.u);
    case MetaValue::Kind::Signed: return std::to_string(v.i);
    case MetaValue::Kind::Float: return real_text(v.f, v.f32);
    case MetaValue::Kind::Bool: return v.u ? "true" : "false";
    default: return "";
  }
}

}  // namespace

std::string metadata_value_text(const MetaValue& v) {
  if (v.kind == MetaValue::Kind::String) {
    const uint64_t size = v.full_size > v.text.size() ? v.full_size : v.text.size();
    if (size <= kShownStringBytes) return display_text(v.text);
    return display_text(cut_utf8(v.text, kShownStringBytes)) + "... (" + std::to_string(size) +
           " bytes)";
  }
  if (v.kind != MetaValue::Kind::Array) return scalar_text(v);
  std::string s = "[";
  size_t shown = 0;
  for (const MetaValue& e : v.head) {
    if (shown == kShownArrayElements) break;
    if (shown++) s += ", ";
    s += e.kind == MetaValue::Kind::String
             ? quoted(e.text.size() > 40 ? cut_utf8(e.text, 40) + "..." : e.text)
             : scalar_text(e);
  }
  if (v.count > shown) s += shown ? ", ..." : "...";
  s += "] (" + std::to_string(v.count) + " x " + v.elem_type + ")";
  return s;
}

void write_metadata_value_json(JsonWriter* w, const MetaValue& v) {
  switch (v.kind) {
    case MetaValue::Kind::String: w->string(v.text); break;
    case MetaValue::Kind::Unsigned: w->number(v.u); break;
    case MetaValue::Kind::Signed: w->signed_number(v.i); break;
    case MetaValue::Kind::Float: w->real(v.f, v.f32); break;
    case MetaValue::Kind::Bool: w->boolean(v.u != 0); break;
    case MetaValue::Kind::Array:
      w->begin_object();
      w->key("type").string("ARRAY");
      w->key("elem_type").string(v.elem_type);
      w->key("count").number(v.count);
      w->key("head").begin_array();
      for (const MetaValue& e : v.head) write_metadata_value_json(w, e);
      w->end_array();
      w->end_object();
      break;
  }
}

}  // namespace wscli
