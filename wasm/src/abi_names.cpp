// weightstream wasm — the library's names and tables, so JS never keeps its own copy that could
// drift: status names and descriptions, dtypes, GGML types, GGUF value types, quant formats,
// conventions (the rows of lib/src/conventions/convention_table.cpp), quantization modes and UQFF
// layer types.
// Strings are NUL-terminated C strings in the module's data.
#include "abi.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/file_kind.h"
#include "weightstream/ggml_types.h"
#include "weightstream/gguf.h"
#include "weightstream/conventions.h"
#include "weightstream/quant_params.h"
#include "weightstream/reader.h"
#include "weightstream/uqff.h"

namespace {
uint32_t g_item[4];  // scratch for the few functions that return several values
}

WS_EXPORT(ws_status_count) uint32_t ws_status_count() { return static_cast<uint32_t>(ws::Status::Count_); }
WS_EXPORT(ws_status_name) const char* ws_status_name(uint32_t s) { return ws::status_name(static_cast<ws::Status>(s)); }
WS_EXPORT(ws_status_description) const char* ws_status_description(uint32_t s) {
  return ws::status_description(static_cast<ws::Status>(s));
}
// The fix for status s (ws::status_hint), in the words of convention c when it has its own
// (ws::status_hint(Status, Convention); 255: none): the one table the CLI's messages end with too.
WS_EXPORT(ws_status_hint) const char* ws_status_hint(uint32_t s, uint32_t c) {
  return ws::status_hint(static_cast<ws::Status>(s), ws::Convention{static_cast<uint8_t>(c < 256 ? c : 255)});
}
WS_EXPORT(ws_event_type_name) const char* ws_event_type_name(uint32_t t) {
  return ws::event_type_name(static_cast<ws::EventType>(t));
}
WS_EXPORT(ws_format_name) const char* ws_format_name(uint32_t f) { return ws::format_name(static_cast<ws::Format>(f)); }

// The library's one file-kind rule (file_kind.h): the first n bytes at p, the file's size as two
// u32 words (both 0xFFFFFFFF: not known). Returns a ws::FileKind; ws_file_kind_name names it.
WS_EXPORT(ws_file_kind) uint32_t ws_file_kind(const uint8_t* p, uint32_t n, uint32_t size_lo, uint32_t size_hi) {
  return static_cast<uint32_t>(ws::detect_file_kind(p, n, uint64_t(size_hi) << 32 | size_lo));
}
WS_EXPORT(ws_file_kind_name) const char* ws_file_kind_name(uint32_t k) {
  return ws::file_kind_name(static_cast<ws::FileKind>(k));
}

WS_EXPORT(ws_dtype_count) uint32_t ws_dtype_count() { return ws::kDTypeCount; }
WS_EXPORT(ws_dtype_name) const char* ws_dtype_name(uint32_t t) { return ws::dtype_name(static_cast<ws::DType>(t)); }
WS_EXPORT(ws_dtype_bits) uint32_t ws_dtype_bits(uint32_t t) { return ws::dtype_bits(static_cast<ws::DType>(t)); }

// Conventions by id (the word the loader's model and weight layouts carry); a convention is plain
// when its weights are the stored tensors (ConventionInfo::plain).
WS_EXPORT(ws_convention_count) uint32_t ws_convention_count() { return ws::convention_count(); }
WS_EXPORT(ws_convention_name) const char* ws_convention_name(uint32_t c) {
  return ws::convention_name(ws::Convention{static_cast<uint8_t>(c < 256 ? c : 255)});
}
WS_EXPORT(ws_convention_plain) uint32_t ws_convention_plain(uint32_t c) {
  return ws::convention_info(ws::Convention{static_cast<uint8_t>(c < 256 ? c : 255)}).plain;
}
WS_EXPORT(ws_quant_mode_count) uint32_t ws_quant_mode_count() { return ws::kQuantModeCount; }
WS_EXPORT(ws_quant_mode_name) const char* ws_quant_mode_name(uint32_t m) {
  return ws::quant_mode_name(static_cast<ws::QuantMode>(m));
}
WS_EXPORT(ws_uqff_type_count) uint32_t ws_uqff_type_count() { return ws::kUqffTypeCount; }
WS_EXPORT(ws_uqff_type_name) const char* ws_uqff_type_name(uint32_t t) {
  return ws::uqff_type_name(static_cast<ws::UqffType>(t));
}

WS_EXPORT(ws_gguf_type_name) const char* ws_gguf_type_name(uint32_t t) {
  return ws::gguf_type_name(static_cast<ws::GgufType>(t));
}

// Words: 0 name ptr, 1 kind (GgmlTypeKind), 2 block_elems, 3 block_bytes.
WS_EXPORT(ws_ggml_type) uint32_t* ws_ggml_type(uint32_t id, uint32_t dialect) {
  const ws::GgmlTypeInfo t = ws::ggml_type_info(id, static_cast<ws::GgmlDialect>(dialect));
  g_item[0] = wsabi::ptr32(t.name);
  g_item[1] = static_cast<uint32_t>(t.kind);
  g_item[2] = t.block_elems;
  g_item[3] = t.block_bytes;
  return g_item;
}

WS_EXPORT(ws_quant_format_count) uint32_t ws_quant_format_count() { return ws::kQuantFormatCount; }
// Words: 0 name ptr, 1 block_elems, 2 block_bytes, 3 companion.
WS_EXPORT(ws_quant_format_info) uint32_t* ws_quant_format_info(uint32_t f) {
  const ws::QuantFormatInfo i = ws::quant_format_info(static_cast<ws::QuantFormat>(f));
  g_item[0] = wsabi::ptr32(i.name);
  g_item[1] = i.block_elems;
  g_item[2] = i.block_bytes;
  g_item[3] = i.companion;
  return g_item;
}
// The format decoding a GGML type or a safetensors dtype, or 0xFFFFFFFF when there is none.
WS_EXPORT(ws_quant_format_from_ggml) uint32_t ws_quant_format_from_ggml(uint32_t id, uint32_t dialect) {
  ws::QuantFormat f;
  return ws::quant_format_from_ggml(id, static_cast<ws::GgmlDialect>(dialect), &f) ? static_cast<uint32_t>(f)
                                                                                   : 0xFFFFFFFFu;
}
WS_EXPORT(ws_quant_format_from_dtype) uint32_t ws_quant_format_from_dtype(uint32_t dtype) {
  ws::QuantFormat f;
  return ws::quant_format_from_dtype(static_cast<ws::DType>(dtype), &f) ? static_cast<uint32_t>(f) : 0xFFFFFFFFu;
}

// Whether this build has a kernel for a format (impl as in the spec). Companion formats are asked
// with placeholder companions: init() looks the kernel up before it reads them (validate is off).
WS_EXPORT(ws_quant_supported) uint32_t ws_quant_supported(uint32_t format, uint32_t impl) {
  if (format >= ws::kQuantFormatCount) return 0;
  static const uint8_t kPlaceholder[256] = {};
  ws::DequantSpec s;
  s.format = static_cast<ws::QuantFormat>(format);
  s.impl = static_cast<ws::KernelImpl>(impl);
  s.validate = false;
  s.bits = 4;
  s.group = s.format == ws::QuantFormat::MlxAffine ? 64 : 0;
  s.scales = kPlaceholder;
  s.biases = kPlaceholder;
  s.has_global_scale = true;
  const ws::QuantFormatInfo info = ws::quant_format_info(s.format);
  s.elements = s.group ? s.group : info.block_elems;
  ws::Dequantizer dq;
  return dq.init(s) == ws::Status::Ok;
}
