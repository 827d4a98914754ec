// weightstream wasm — ws::ShardIndex behind a handle: the index JSON is streamed in through an
// input buffer like a session's, then each shard session's table is cross-checked at its
// HeaderReady, and finish_checks() closes the model.
#include <new>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "weightstream/shard_index.h"

using wsabi::ptr32;
using wsabi::put_u64;

struct WsIndex {
  ws::ShardIndex index;
  uint8_t* arena;
  uint8_t* input;
  uint32_t input_cap;
  // Words: 0-11 the error (abi.h); 12 tensor count, 13 shard count, 14 has_total_size,
  // 15-16 total_size, 17-18 checked_bytes, 19 arena_needed, 20 string ptr, 21 string length.
  uint32_t info[22];
  WsIndex(uint8_t* a, size_t n) : index(a, n) {}
};

WS_EXPORT(ws_index_create) WsIndex* ws_index_create(uint32_t arena_size, uint32_t input_cap) {
  return wsabi::create_arena_handle<WsIndex>(arena_size, input_cap);
}

WS_EXPORT(ws_index_destroy) void ws_index_destroy(WsIndex* x) { wsabi::destroy_arena_handle(x); }

WS_EXPORT(ws_index_input) uint8_t* ws_index_input(WsIndex* x) { return x->input; }

WS_EXPORT(ws_index_info) uint32_t* ws_index_info(WsIndex* x) {
  const ws::ShardIndex& i = x->index;
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(x->info), i.error());
  x->info[12] = i.tensor_count();
  x->info[13] = i.shard_count();
  x->info[14] = i.has_total_size();
  put_u64(x->info + 15, i.total_size());
  put_u64(x->info + 17, i.checked_bytes());
  x->info[19] = static_cast<uint32_t>(i.arena_needed());
  return x->info;
}

WS_EXPORT(ws_index_feed) uint32_t ws_index_feed(WsIndex* x, uint32_t n) {
  return static_cast<uint32_t>(x->index.feed(x->input, n < x->input_cap ? n : x->input_cap));
}
WS_EXPORT(ws_index_finish) uint32_t ws_index_finish(WsIndex* x) {
  return static_cast<uint32_t>(x->index.finish());
}

static uint32_t put_str(WsIndex* x, ws::StrView v) {
  x->info[20] = ptr32(v.data);
  x->info[21] = static_cast<uint32_t>(v.size);
  return 20;
}

// Names go to info words 20-21; these return that word index.
WS_EXPORT(ws_index_shard_name) uint32_t ws_index_shard_name(WsIndex* x, uint32_t shard) {
  return put_str(x, x->index.shard_name(shard));
}
WS_EXPORT(ws_index_tensor_name) uint32_t ws_index_tensor_name(WsIndex* x, uint32_t entry) {
  return put_str(x, x->index.tensor_name(entry));
}
WS_EXPORT(ws_index_tensor_shard) uint32_t ws_index_tensor_shard(WsIndex* x, uint32_t entry) {
  return x->index.tensor_shard(entry);
}
// Names to look up are copied into the input buffer first (n bytes).
WS_EXPORT(ws_index_find_tensor) uint32_t ws_index_find_tensor(WsIndex* x, uint32_t n) {
  return x->index.find_tensor(reinterpret_cast<const char*>(x->input), n);
}
WS_EXPORT(ws_index_check_shard) uint32_t ws_index_check_shard(WsIndex* x, const WsSession* s, uint32_t n) {
  return static_cast<uint32_t>(
      x->index.check_shard(reinterpret_cast<const char*>(x->input), n, wsabi::session_table(s)));
}
WS_EXPORT(ws_index_finish_checks) uint32_t ws_index_finish_checks(WsIndex* x) {
  return static_cast<uint32_t>(x->index.finish_checks());
}
