// weightstream CLI — GGUF rendering (see gguf_render.h).
#include "gguf_render.h"

#include <ctype.h>

#include "metadata_render.h"
#include "text_format.h"

namespace wscli {
namespace {

// "[string × 32000]": gguf-py's type name in lower case reads as a type, not a shout.
std::string array_summary(const MetaValue& v) {
  std::string type = v.elem_type;
  for (char& c : type) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return "[" + type + " \xC3\x97 " + std::to_string(v.count) + "]";
}

// A string quoted, cut after `max` bytes; the cut is marked outside the quotes so that what is
// quoted is exactly what the file holds.
std::string string_text(const MetaValue& v, size_t max) {
  const uint64_t size = v.full_size > v.text.size() ? v.full_size : v.text.size();
  if (size <= max) return quoted(v.text);
  return quoted(cut_utf8(v.text, max)) + "\xE2\x80\xA6 (" + std::to_string(size) + " bytes)";
}

std::string element_text(const MetaValue& e) {
  if (e.kind == MetaValue::Kind::String) return string_text(e, kTextArrayStringBytes);
  return gguf_value_text(e);
}

// Short arrays are listed from the elements the collector keeps.
static_assert(kJsonFullArray <= kKeptArrayElements && kTextArrayValues <= kKeptArrayElements &&
                  kTextStringArray <= kKeptArrayElements,
              "the collector keeps fewer elements than are shown");

}  // namespace

std::string gguf_value_text(const MetaValue& v) {
  switch (v.kind) {
    case MetaValue::Kind::String: return string_text(v, kTextStringBytes);
    case MetaValue::Kind::Unsigned: return std::to_string(v.u);
    case MetaValue::Kind::Signed: return std::to_string(v.i);
    case MetaValue::Kind::Float: return real_text(v.f, v.f32);
    case MetaValue::Kind::Bool: return v.u ? "true" : "false";
    case MetaValue::Kind::Array: break;
  }
  std::string s = array_summary(v);
  if (v.head.empty()) return s;
  // A vocabulary's first tokens say little and take a line each; a short list or numbers do.
  const bool strings = v.elem_type == "STRING";
  if (strings && v.count > kTextStringArray) return s;
  const size_t limit = strings ? kTextStringArray : kTextArrayValues;
  for (size_t k = 0; k < v.head.size() && k < limit; ++k)
    s += (k ? ", " : " ") + element_text(v.head[k]);
  if (v.count > limit) s += ", \xE2\x80\xA6";
  return s;
}

std::string gguf_kv_table_text(const std::vector<MetadataRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size());
  for (const MetadataRow& r : rows)
    cells.push_back({name_text(r.key), r.type, gguf_value_text(r.value)});
  return table_text({"key", "type", "value"}, cells, {false, false, false});
}

std::string gguf_dialect_text(bool bitnet) {
  if (!bitnet) return "upstream";
  return "bitnet (type ids 36-39 are I2_S, I8_S, TL1, TL2; TL1 and TL2 are pre-tiled for one "
         "kernel and readable only as raw bytes)";
}

void write_gguf_kv_json(JsonWriter* w, const std::vector<MetadataRow>& rows) {
  w->begin_array();
  for (const MetadataRow& r : rows) {
    const MetaValue& v = r.value;
    w->begin_object();
    w->key("key").string(r.key);
    w->key("offset").number(r.offset);
    w->key("type").string(r.type);
    if (v.kind != MetaValue::Kind::Array) {
      w->key("value");
      write_metadata_value_json(w, v);
      // A string longer than the CLI keeps (1 MiB) is given cut: say so with its length.
      if (v.kind == MetaValue::Kind::String && v.full_size > v.text.size())
        w->key("value_bytes").number(v.full_size);
      w->end_object();
      continue;
    }
    w->key("element_type").string(v.elem_type);
    w->key("count").number(v.count);
    if (v.elem_type == "STRING") w->key("string_bytes").number(v.string_bytes);
    if (v.count <= kJsonFullArray) {
      w->key("values").begin_array();
      for (const MetaValue& e : v.head) write_metadata_value_json(w, e);
      w->end_array();
    } else {
      w->key("head").begin_array();
      for (size_t k = 0; k < v.head.size() && k < kJsonArrayHead; ++k) write_metadata_value_json(w, v.head[k]);
      w->end_array();
      w->key("last");
      if (v.last.empty())
        w->null();
      else
        write_metadata_value_json(w, v.last.front());
    }
    w->end_object();
  }
  w->end_array();
}

}  // namespace wscli
