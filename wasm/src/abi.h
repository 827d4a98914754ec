// weightstream wasm — conventions of the C ABI the JavaScript bindings call.
//
// - Handles are opaque pointers into wasm memory (a u32 in JS); 0 means "could not allocate".
// - No 64-bit values cross the boundary as arguments or results: Emscripten 3.1.6 without
//   WASM_BIGINT would split them anyway. A u64 travels as two u32 words, low word first, either as
//   two arguments (`lo, hi`) or inside an out-struct. JS joins them with `hi * 2**32 + lo`, which is
//   exact below 2^53 (every file offset), or as a BigInt where values may be larger (GGUF u64 KVs,
//   the "found" values of errors).
// - Out-structs are flat arrays of u32 words (plus one f64 at an 8-aligned word in the event), laid
//   out as the comments below number them; wasm/js/words.mjs reads them by the same word indices.
// - Memory is allocated only when something is created (a model loader, a scratch buffer):
//   streaming never allocates, so the heap views stay valid while bytes flow.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "weightstream/event.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

struct WsLoader;  // abi_loader.cpp: a ws::ModelLoader behind a handle

namespace ws {
class ModelLoader;
class Reader;
struct LogicalWeight;
struct LoadPlan;
}  // namespace ws

#define WS_EXPORT(name) extern "C" __attribute__((export_name(#name), used))

namespace wsabi {

inline void put_u64(uint32_t* w, uint64_t v) {
  w[0] = static_cast<uint32_t>(v);
  w[1] = static_cast<uint32_t>(v >> 32);
}

inline uint32_t ptr32(const void* p) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)); }

// A rejection as JS reads it (words): 0 code, 1-2 offset, 3 tensor index (0xFFFFFFFF: none),
// 4 tensor name ptr, 5 name length, 6 has_found, 7 has_expected, 8-9 found, 10-11 expected.
struct ErrorOut {
  uint32_t w[12];
};
void put_error(ErrorOut* out, const ws::Error& e);

// A reader event (a session's, or a GGUF key-value event the model loader hands on).
// Words: 0 type, 1 tensor, 2 data ptr, 3 size, 4-5 offset, 6 kv, 7 key ptr, 8 key length,
// 9 value_type, 10 elem_type, 11-12 count, 13-14 index, 15 first, 16 last, 17-18 u, 19-20 i (two's
// complement), 21 unused, 22-23 f (a double, bytes 88..95).
struct EventOut {
  uint32_t w[22];
  double f;
};
static_assert(sizeof(EventOut) == 96, "JS reads the event by fixed offsets");
void put_event(EventOut* out, const ws::Event& e);

// A reader's facts (a session's, or one file's of a model loader).
// Words: 0 format, 1-2 position, 3-4 header_size, 5-6 data_start, 7-8 data_size, 9 tensor_count,
// 10 arena_used, 11 arena_peak, 12 arena_needed, 13 gguf_version, 14 gguf_alignment,
// 15-16 gguf_kv_count, 17 dialect, 18 architecture ptr, 19 its length, 20-21 tensor_infos_offset,
// 22 metadata_count, 23 has_metadata, 24 arena size, 25-31 unused; 32-43 the error.
struct InfoOut {
  uint32_t w[32];
  ErrorOut error;
};
void put_info(InfoOut* out, const ws::Reader& r, size_t arena_size);

// A tensor into 12 item words: 0 name ptr, 1 name length, 2 type (DType or GGML id), 3 rank,
// 4-5 begin, 6-7 end (relative to the data section), 8-9 entry offset, 10-11 element count.
void put_tensor(uint32_t* w, const ws::TensorInfo& t);
// Up to `max` dimensions as u32 pairs at `out`; returns the rank.
uint32_t put_dims(uint32_t* out, uint32_t max, const ws::TensorInfo& t);
// Tensors `first`.. of `t` packed for JS, as many as fit (one call instead of two per tensor: a
// DeepSeek-V3 header has 92k). `io` words in: 0 first, 1 records ptr, 2 records capacity (words),
// 3 names ptr, 4 names capacity (bytes); out: 5 tensors written, 6 words written, 7 name bytes
// written. A record: 0 name offset (into the names), 1 name length, 2 type, 3 rank, 4-5 begin,
// 6-7 end, 8-9 entry offset, 10-11 element count (put_tensor's words 2-11), then the rank
// dimensions as u32 pairs. The names are copied one after another, so JS decodes a batch at once.
// Stops before a tensor that does not fit: none written means tensor `first` alone is larger than
// the buffers (a crafted rank or name), which JS reads by itself (put_tensor, put_dims).
constexpr uint32_t kTableRecordWords = 12;
void put_tensors(const ws::TensorTable& t, uint32_t* io);
// The next __metadata__ entry of `t` into item words 0 key ptr, 1 key length, 2 value ptr,
// 3 value length; false past the last. `cursor`/`index` start at 0.
bool put_metadata_next(uint32_t* item, const ws::TensorTable& t, uint32_t* cursor, uint32_t* index);

// A logical weight and its load plan into kWeightWords words: 0 name ptr, 1 name length,
// 2 convention (ws::Convention), 3 mode (ws::QuantMode), 4 bits, 5 group, 6 format
// (ws::QuantFormat), 7 decodable, 8 scale dtype (ws::DType), 9 rank, 10-17 logical shape (rank
// u64s), 18-19 elements, 20 global-scale rule (0 MLX, 1 Ollama, 2 ModelOpt, 3 compressed-tensors: divides), 21 uqff type (uqff.h UqffType), 22-41 pieces
// by PieceRole (table, index; 0xFFFFFFFF when absent), 42 plan: packed_before_companion,
// 43-44 companion bytes, 45-46 sequential scratch, 47-48 seekable scratch.
constexpr uint32_t kWeightWords = 49;
void put_weight(uint32_t* o, const ws::LogicalWeight& w, const ws::LoadPlan& p);

// Limits as JS passes them (8 words: 0-1 max_header_bytes, 2 max_tensors, 3-4 max_name_bytes,
// 5 max_rank, 6 max_nesting, 7 keep_metadata); the defaults when `w` is null.
ws::Limits read_limits(const uint32_t* w);

// The model loader behind a ws_loader_create handle (abi_convert.cpp plans a conversion of it).
ws::ModelLoader& loader_of(WsLoader* h);

// A 64-byte aligned block of at least n bytes (ws_alloc's), or null.
void* alloc64(size_t n);

}  // namespace wsabi
