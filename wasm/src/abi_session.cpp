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

using wsabi::put_u64;
using wsabi::ptr32;

namespace wsabi {

// Words: 0 type, 1 tensor, 2 data ptr, 3 size, 4-5 offset, 6 kv, 7 key ptr, 8 key length,
// 9 value_type, 10 elem_type, 11-12 count, 13-14 index, 15 first, 16 last, 17-18 u, 19-20 i (two's
// complement), 21 unused, 22-23 f (a double, bytes 88..95).
struct EventOut {
  uint32_t w[22];
  double f;
};
static_assert(sizeof(EventOut) == 96, "JS reads the event by fixed offsets");

// Words: 0 format, 1-2 position, 3-4 header_size, 5-6 data_start, 7-8 data_size, 9 tensor_count,
// 10 arena_used, 11 arena_peak, 12 arena_needed, 13 gguf_version, 14 gguf_alignment,
// 15-16 gguf_kv_count, 17 dialect, 18 architecture ptr, 19 its length, 20-21 tensor_infos_offset,
// 22 metadata_count, 23 has_metadata, 24 arena size, 25-31 unused; 32-43 the error (abi.h).
struct InfoOut {
  uint32_t w[32];
  wsabi::ErrorOut error;
};

}  // namespace wsabi

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

namespace {

// Limits as JS passes them (words): 0-1 max_header_bytes, 2 max_tensors, 3-4 max_name_bytes,
// 5 max_rank, 6 max_nesting, 7 keep_metadata.
ws::Limits read_limits(const uint32_t* w) {
  ws::Limits l;
  if (!w) return l;
  l.max_header_bytes = uint64_t(w[0]) | uint64_t(w[1]) << 32;
  l.max_tensors = w[2];
  l.max_name_bytes = uint64_t(w[3]) | uint64_t(w[4]) << 32;
  l.max_rank = w[5];
  l.max_nesting = w[6];
  l.keep_metadata = w[7] != 0;
  return l;
}

}  // namespace

// Everything a session needs is allocated here, once: the reader, its arena (malloc's 8-byte
// alignment is what it needs) and the input buffer.
WS_EXPORT(ws_session_create) WsSession* ws_session_create(uint32_t arena_size, uint32_t input_cap, const uint32_t* limits) {
  WsSession* s = wsabi::create_arena_handle<WsSession>(arena_size, input_cap, read_limits(limits));
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
  const ws::Event e = s->reader.next();
  uint32_t* w = s->event.w;
  w[0] = static_cast<uint32_t>(e.type);
  w[1] = e.tensor;
  w[2] = ptr32(e.data);
  w[3] = static_cast<uint32_t>(e.size);
  put_u64(w + 4, e.offset);
  if (e.type >= ws::EventType::KvBegin && e.type <= ws::EventType::KvEnd) {
    w[6] = e.kv;
    w[7] = ptr32(e.key.data);
    w[8] = static_cast<uint32_t>(e.key.size);
    w[9] = static_cast<uint32_t>(e.value_type);
    w[10] = static_cast<uint32_t>(e.elem_type);
    put_u64(w + 11, e.count);
    put_u64(w + 13, e.index);
    w[15] = e.first;
    w[16] = e.last;
    put_u64(w + 17, e.u);
    put_u64(w + 19, static_cast<uint64_t>(e.i));
    s->event.f = e.f;
  }
  return w[0];
}

// Refreshes and returns the info struct (reader facts and the error).
WS_EXPORT(ws_session_info) wsabi::InfoOut* ws_session_info(WsSession* s) {
  const ws::Reader& r = s->reader;
  uint32_t* w = s->info.w;
  w[0] = static_cast<uint32_t>(r.format());
  put_u64(w + 1, r.position());
  put_u64(w + 3, r.header_size());
  put_u64(w + 5, r.data_start());
  put_u64(w + 7, r.data_size());
  w[9] = r.tensor_count();
  w[10] = static_cast<uint32_t>(r.arena_used());
  w[11] = static_cast<uint32_t>(r.arena_peak());
  w[12] = static_cast<uint32_t>(r.arena_needed());
  w[13] = r.gguf_version();
  w[14] = r.gguf_alignment();
  put_u64(w + 15, r.gguf_kv_count());
  w[17] = static_cast<uint32_t>(r.gguf_dialect());
  const ws::StrView arch = r.gguf_architecture();
  w[18] = ptr32(arch.data);
  w[19] = static_cast<uint32_t>(arch.size);
  put_u64(w + 20, r.gguf_tensor_infos_offset());
  w[22] = r.tensors().metadata_count();
  w[23] = r.tensors().has_metadata();
  w[24] = static_cast<uint32_t>(s->arena_size);
  wsabi::put_error(&s->info.error, r.error());
  return &s->info;
}

// Tensor i into the item words: 0 name ptr, 1 name length, 2 type (DType or GGML id), 3 rank,
// 4-5 begin, 6-7 end (relative to the data section), 8-9 entry offset, 10-11 element count.
WS_EXPORT(ws_session_tensor) uint32_t* ws_session_tensor(WsSession* s, uint32_t i) {
  const ws::TensorInfo t = s->reader.tensor(i);
  uint32_t* w = s->item;
  w[0] = ptr32(t.name.data);
  w[1] = static_cast<uint32_t>(t.name.size);
  w[2] = t.type;
  w[3] = t.rank;
  put_u64(w + 4, t.begin);
  put_u64(w + 6, t.end);
  put_u64(w + 8, t.entry_offset);
  put_u64(w + 10, t.packed_shape ? t.element_count() : 0);
  return w;
}

// Up to `max` dimensions of tensor i as u32 pairs at `out`; returns the rank.
WS_EXPORT(ws_session_tensor_dims) uint32_t ws_session_tensor_dims(WsSession* s, uint32_t i, uint32_t* out, uint32_t max) {
  const ws::TensorInfo t = s->reader.tensor(i);
  uint32_t k = 0;
  for (ws::ShapeIter it = t.shape(); k < max && !it.done(); ++k) put_u64(out + 2 * k, it.next());
  return t.rank;
}

// Safetensors __metadata__, in header order: reset, then next() until it returns 0. Item words:
// 0 key ptr, 1 key length, 2 value ptr, 3 value length.
WS_EXPORT(ws_session_metadata_reset) void ws_session_metadata_reset(WsSession* s) {
  s->meta_cursor = 0;
  s->meta_index = 0;
}
WS_EXPORT(ws_session_metadata_next) uint32_t ws_session_metadata_next(WsSession* s) {
  const ws::TensorTable& t = s->reader.tensors();
  if (s->meta_index >= t.metadata_count()) return 0;
  const ws::MetadataEntry m = t.metadata_at(&s->meta_cursor);
  ++s->meta_index;
  s->item[0] = ptr32(m.key.data);
  s->item[1] = static_cast<uint32_t>(m.key.size);
  s->item[2] = ptr32(m.value.data);
  s->item[3] = static_cast<uint32_t>(m.value.size);
  return 1;
}

// For ws_index_check_shard (abi_index.cpp).
const ws::TensorTable& wsabi::session_table(const WsSession* s) { return s->reader.tensors(); }
