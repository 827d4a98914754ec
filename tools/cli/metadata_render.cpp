// weightstream CLI — metadata rendering (see metadata_render.h).
#include "metadata_render.h"

#include "gguf_render.h"
#include "text_format.h"

namespace wscli {
namespace {

constexpr size_t kShownMetadataBytes = 160;

}  // namespace

std::string metadata_value_text(const MetaValue& v) {
  // Typed GGUF values have one rendering, the key-value table's.
  if (v.kind != MetaValue::Kind::String) return gguf_value_text(v);
  const uint64_t size = v.full_size > v.text.size() ? v.full_size : v.text.size();
  if (size <= kShownMetadataBytes) return display_text(v.text);
  return display_text(cut_utf8(v.text, kShownMetadataBytes)) + "... (" + std::to_string(size) +
         " bytes)";
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
