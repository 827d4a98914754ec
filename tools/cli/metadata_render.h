// weightstream CLI — metadata values for people and as JSON (safetensors strings, GGUF typed
// key-values), shared by the inspect renderers.
#pragma once

#include <string>

#include "json_writer.h"
#include "report.h"

namespace wscli {

// One line's worth of a safetensors __metadata__ value: the string as it is, cut at 160 bytes,
// passed through display_text (values come from untrusted files). Typed GGUF values are rendered
// by gguf_value_text (gguf_render.h).
std::string metadata_value_text(const MetaValue& v);

// The "metadata" member's value for one key: strings, numbers and booleans as themselves; arrays
// as {"type":"ARRAY","elem_type":…,"count":N,"head":[first elements]}.
void write_metadata_value_json(JsonWriter* w, const MetaValue& v);

}  // namespace wscli
