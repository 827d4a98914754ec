// weightstream wasm — a session: one ws::Reader with its arena and input buffer.
//
// JS copies each piece of input into the session's input buffer (HEAPU8.set), calls
// ws_session_feed(n), then ws_session_next() until NeedInput. Events are written to the session's
// event struct, whose address JS reads once; TensorBytes data points into the input buffer, so JS
// must consume it (write it to the GPU, decode it) before feeding the next piece — the same
// contract as Reader::feed.
#include <new>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "weightstream/reader.h"



struct WsSession {
  ws::Reader reader;
  uint8_t* arena;
  size_t arena_size;
  uint8_t* input;
  size_t input_cap;
  wsabi::EventOut event;
  wsabi::InfoOut info;
  uint32_t item[12];  // a tensor (ws_session_tensor) or a metadata entry (ws_session_metadata_next)
  uint32_t meta_cursor;
  uint32_t meta_index;
  WsSession(uint8_t* a, size_t an, const ws::Limits& l) : reader(a, an, l) {}
};

// Everything a session needs is allocated here, once: the reader, its arena (malloc's 8-byte
// alignment is what it needs) and the input buffer.
WS_EXPORT(ws_session_create) WsSession* ws_session_create(uint32_t arena_size, uint32_t input_cap, const uint32_t* limits) {
  WsSession* s = wsabi::create_arena_handle<WsSession>(arena_size, input_cap, wsabi::read_limits(limits));
  if (!s) return nullptr;
  s->arena_size = arena_size;
  memset(&s->event, 0, sizeof s->event);
  s->meta_cursor = 0;
  s->meta_index = 0;
  return s;
}

WS_EXPORT(ws_session_destroy) void ws_session_destroy(WsSession* s) { wsabi::destroy_arena_handle(s); }

WS_EXPORT(ws_session_input) uint8_t* ws_session_input(WsSession* s) { return s->input; }
WS_EXPORT(ws_session_event) wsabi::EventOut* ws_session_event(WsSession* s) { return &s->event; }
WS_EXPORT(ws_session_item) uint32_t* ws_session_item(WsSession* s) { return s->item; }

// Feeds the first n bytes of the input buffer (n ≤ input_cap; larger is clamped).
WS_EXPORT(ws_session_feed) void ws_session_feed(WsSession* s, uint32_t n) {
  s->reader.feed(s->input, n < s->input_cap ? n : s->input_cap);
}
WS_EXPORT(ws_session_finish) void ws_session_finish(WsSession* s) { s->reader.finish(); }
WS_EXPORT(ws_session_set_input_size) void ws_session_set_input_size(WsSession* s, uint32_t lo, uint32_t hi) {
  s->reader.set_input_size(uint64_t(lo) | uint64_t(hi) << 32);
}

// The next event; its fields are in ws_session_event(s). Returns the event type.
WS_EXPORT(ws_session_next) uint32_t ws_session_next(WsSession* s) {
  wsabi::put_event(&s->event, s->reader.next());
  return s->event.w[0];
}

// Refreshes and returns the info struct (reader facts and the error).
WS_EXPORT(ws_session_info) wsabi::InfoOut* ws_session_info(WsSession* s) {
  wsabi::put_info(&s->info, s->reader, s->arena_size);
  return &s->info;
}

// Tensor i into the item words: 0 name ptr, 1 name length, 2 type (DType or GGML id), 3 rank,
// 4-5 begin, 6-7 end (relative to the data section), 8-9 entry offset, 10-11 element count.
WS_EXPORT(ws_session_tensor) uint32_t* ws_session_tensor(WsSession* s, uint32_t i) {
  wsabi::put_tensor(s->item, s->reader.tensor(i));
  return s->item;
}

// Up to `max` dimensions of tensor i as u32 pairs at `out`; returns the rank.
WS_EXPORT(ws_session_tensor_dims) uint32_t ws_session_tensor_dims(WsSession* s, uint32_t i, uint32_t* out, uint32_t max) {
  return wsabi::put_dims(out, max, s->reader.tensor(i));
}

// Safetensors __metadata__, in header order: reset, then next() until it returns 0. Item words:
// 0 key ptr, 1 key length, 2 value ptr, 3 value length.
WS_EXPORT(ws_session_metadata_reset) void ws_session_metadata_reset(WsSession* s) {
  s->meta_cursor = 0;
  s->meta_index = 0;
}
WS_EXPORT(ws_session_metadata_next) uint32_t ws_session_metadata_next(WsSession* s) {
  return wsabi::put_metadata_next(s->item, s->reader.tensors(), &s->meta_cursor, &s->meta_index) ? 1 : 0;
}

// For ws_index_check_shard (abi_index.cpp).
const ws::TensorTable& wsabi::session_table(const WsSession* s) { return s->reader.tensors(); }
