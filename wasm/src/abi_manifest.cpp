// weightstream wasm — ws::OllamaManifest behind a handle: the manifest JSON is copied into the
// handle's input buffer (it is small: JS reads it whole) and parsed once; JS then reads the layers
// (blob file, name, size, whether it is a tensor layer) to know which blobs form the model, and
// checks each blob against its layer with the library's rules (weightstream/manifest_blobs.h), the
// CLI's own: its size, and which layers' names cover the tensors of its header.
#include <new>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "weightstream/manifest_blobs.h"
#include "weightstream/ollama_manifest.h"

using wsabi::ptr32;
using wsabi::put_u64;

struct WsManifest {
  ws::OllamaManifest manifest;
  uint8_t* arena;
  uint8_t* input;
  uint32_t input_cap;
  // Words: 0-11 the error (abi.h); 12 arena needed; 13 layer count; layer (ws_manifest_layer):
  // 14 media type ptr, 15 its length, 16 blob file ptr ("sha256-<hex>"), 17 its length, 18 name
  // ptr, 19 its length, 20-21 size, 22 is_tensor.
  uint32_t info[23];
  // The last blob check's error (ws_manifest_check_*), apart from the parse error: its tensor
  // name points into the manifest's arena (a layer's name) or the session's (a tensor's).
  ws::Error check;
  uint32_t check_info[12];
  WsManifest(uint8_t* a, size_t n) : manifest(a, n) {}
};

WS_EXPORT(ws_manifest_create) WsManifest* ws_manifest_create(uint32_t arena_size, uint32_t input_cap) {
  return wsabi::create_arena_handle<WsManifest>(arena_size, input_cap);
}

WS_EXPORT(ws_manifest_destroy) void ws_manifest_destroy(WsManifest* x) { wsabi::destroy_arena_handle(x); }

WS_EXPORT(ws_manifest_input) uint8_t* ws_manifest_input(WsManifest* m) { return m->input; }

// Parses the first n bytes of the input buffer as the whole manifest; returns the ws::Status.
WS_EXPORT(ws_manifest_parse) uint32_t ws_manifest_parse(WsManifest* m, uint32_t n) {
  ws::Status s = m->manifest.feed(m->input, n < m->input_cap ? n : m->input_cap);
  if (s == ws::Status::Ok) s = m->manifest.finish();
  return static_cast<uint32_t>(s);
}

WS_EXPORT(ws_manifest_info) uint32_t* ws_manifest_info(WsManifest* m) {
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(m->info), m->manifest.error());
  m->info[12] = static_cast<uint32_t>(m->manifest.arena_needed());
  m->info[13] = m->manifest.layer_count();
  return m->info;
}

// Layer i (after a successful parse) into info words 14-22.
WS_EXPORT(ws_manifest_layer) uint32_t* ws_manifest_layer(WsManifest* m, uint32_t i) {
  const ws::ManifestLayer l = m->manifest.layer(i);
  uint32_t* w = m->info;
  w[14] = ptr32(l.media_type.data);
  w[15] = static_cast<uint32_t>(l.media_type.size);
  w[16] = ptr32(l.blob_file.data);
  w[17] = static_cast<uint32_t>(l.blob_file.size);
  w[18] = ptr32(l.name.data);
  w[19] = static_cast<uint32_t>(l.name.size);
  put_u64(w + 20, l.size);
  w[22] = l.is_tensor;
  return w;
}

// Blob of tensor layer `layer` is (lo | hi << 32) bytes: ws::check_manifest_blob_size; returns the
// ws::Status, the error in ws_manifest_check_error.
WS_EXPORT(ws_manifest_check_size) uint32_t ws_manifest_check_size(WsManifest* m, uint32_t layer, uint32_t lo, uint32_t hi) {
  m->check = ws::Error();
  return static_cast<uint32_t>(ws::check_manifest_blob_size(m->manifest, layer, (uint64_t(hi) << 32) | lo, &m->check));
}

// The session `s` holds the header of tensor layer `layer`'s blob (its table complete):
// ws::check_manifest_blob_tensors; returns the ws::Status, the error in ws_manifest_check_error.
WS_EXPORT(ws_manifest_check_tensors) uint32_t ws_manifest_check_tensors(WsManifest* m, uint32_t layer, const WsSession* s) {
  m->check = ws::Error();
  return static_cast<uint32_t>(ws::check_manifest_blob_tensors(m->manifest, layer, wsabi::session_table(s), &m->check));
}

// The last check's error, as ErrorOut words (abi.h).
WS_EXPORT(ws_manifest_check_error) uint32_t* ws_manifest_check_error(WsManifest* m) {
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(m->check_info), m->check);
  return m->check_info;
}
