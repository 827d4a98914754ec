// weightstream wasm — allocation for the JavaScript side: scratch buffers (dequantizer output,
// companion scales, dimension lists) are allocated once when a load starts and freed at its end.
#include <stdlib.h>

#include "abi.h"

WS_EXPORT(ws_alloc) void* ws_alloc(uint32_t n) { return malloc(n ? n : 1); }
WS_EXPORT(ws_free) void ws_free(void* p) { free(p); }

namespace wsabi {

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
