// weightstream wasm — conventions of the C ABI the JavaScript bindings call.
//
// - Handles are opaque pointers into wasm memory (a u32 in JS); 0 means "could not allocate".
// - No 64-bit values cross the boundary as arguments or results: Emscripten 3.1.6 without
//   WASM_BIGINT would split them anyway. A u64 travels as two u32 words, low word first, either as
//   two arguments (`lo, hi`) or inside an out-struct. JS joins them with `hi * 2**32 + lo`, which is
//   exact below 2^53 (every file offset), or as a BigInt where values may be larger (GGUF u64 KVs,
//   the "found" values of errors).
// - Out-structs are flat arrays of u32 words (plus one f64 at an 8-aligned word in the event), laid
//   out as the comments below number them; wasm/js/abi.mjs reads them by the same word indices.
// - Memory is allocated only when something is created (a session, a dequantizer, an index, a
//   scratch buffer): streaming never allocates, so the heap views stay valid while bytes flow.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

struct WsSession;  // abi_session.cpp

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

// A handle over a caller-sized arena with an input buffer JS copies bytes into (an index, a
// manifest): T has members `arena`, `input`, `input_cap`, `info[]` and a constructor
// T(uint8_t* arena, size_t arena_size, args...). Everything is allocated here, once; nullptr when
// not.
template <class T, class... Args>
T* create_arena_handle(uint32_t arena_size, uint32_t input_cap, const Args&... args) {
  void* mem = malloc(sizeof(T));
  uint8_t* arena = static_cast<uint8_t*>(malloc(arena_size ? arena_size : 8));
  uint8_t* input = static_cast<uint8_t*>(malloc(input_cap ? input_cap : 1));
  if (!mem || !arena || !input) {
    free(mem);
    free(arena);
    free(input);
    return nullptr;
  }
  T* x = new (mem) T(arena, arena_size, args...);
  x->arena = arena;
  x->input = input;
  x->input_cap = input_cap;
  memset(&x->info, 0, sizeof x->info);
  return x;
}

template <class T>
void destroy_arena_handle(T* x) {
  if (!x) return;
  free(x->arena);
  free(x->input);
  x->~T();
  free(x);
}

// The validated table of a session's reader (for the shard index's cross-checks).
const ws::TensorTable& session_table(const WsSession* s);

}  // namespace wsabi
