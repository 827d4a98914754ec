// weightstream CLI — GGUF key-values and header facts for `inspect`, as text and as JSON.
//
// GGUF values are typed and arrays can hold 100k+ elements, so they get their own table and
// their own JSON list rather than the safetensors metadata rendering: an array is summarized as
// its element type and count (`[string × 128256]`), never printed whole.
#pragma once

#include <string>
#include <vector>

#include "json_writer.h"
#include "report.h"

namespace wscli {

// The value column: scalars exactly (64-bit integers in full, floats as the shortest text that
// reads back the same), strings quoted and escaped, cut after kTextStringBytes with
// `… (N bytes)`, arrays as `[int32 × 32000]` followed by their first values when they are numeric
// or short.
std::string gguf_value_text(const MetaValue& v);

// The key-value table: key, type (gguf-py's names), value; one line per key-value.
std::string gguf_kv_table_text(const std::vector<MetadataRow>& rows);

// One line on the type-id dialect: "upstream", or "bitnet" with what its ids mean.
std::string gguf_dialect_text(bool bitnet);

// The "kv" list of inspect --json: one object per key-value, in file order (see tools/README.md).
void write_gguf_kv_json(JsonWriter* w, const std::vector<MetadataRow>& rows);

constexpr size_t kTextStringBytes = 100;      // text: strings longer than this are cut
constexpr size_t kTextArrayValues = 8;        // text: first values of numeric arrays
constexpr size_t kTextStringArray = 8;        // text: string arrays this short are shown whole
constexpr size_t kTextArrayStringBytes = 40;  // text: per string element
constexpr size_t kJsonFullArray = 16;         // JSON: arrays this short are listed whole
constexpr size_t kJsonArrayHead = 5;          // JSON: otherwise their first elements, and the last

}  // namespace wscli
