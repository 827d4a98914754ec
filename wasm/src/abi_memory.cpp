// weightstream wasm — allocation for the JavaScript side: scratch buffers (dequantizer output,
// companion scales, dimension lists) are allocated once when a load starts and freed at its end.
#include <stdlib.h>

#include "abi.h"

// 64-byte aligned: the dequantizer writes its output here with 16-byte SIMD128 stores, and
// emmalloc's malloc only guarantees 8 bytes, where every fourth store would split a cache line
// (V8 loses about 30 % of its store bandwidth to that; bench/README.md). aligned_alloc wants a
// size that is a multiple of the alignment; sizes near 4 GiB cannot be allocated in any case.
WS_EXPORT(ws_alloc) void* ws_alloc(uint32_t n) { return wsabi::alloc64(n); }
WS_EXPORT(ws_free) void ws_free(void* p) { free(p); }

namespace wsabi {

void* alloc64(size_t n) {
  if (n > 0xFFFFFF00u) return nullptr;
  return aligned_alloc(64, (size_t(n ? n : 1) + 63) & ~size_t(63));
}

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

void put_error(ErrorOut* out, const ws::Error& e) {
  uint32_t* w = out->w;
  w[0] = static_cast<uint32_t>(e.code);
  put_u64(w + 1, e.offset);
  w[3] = e.tensor;
  w[4] = ptr32(e.tensor_name);
  w[5] = static_cast<uint32_t>(e.tensor_name_size);
  w[6] = e.has_found;
  w[7] = e.has_expected;
  put_u64(w + 8, e.found);
  put_u64(w + 10, e.expected);
}

}  // namespace wsabi
