// weightstream wasm — the dequantizer's kernel on its own, for bench/js/bench.mjs: the figure the
// JS streaming path (createReader, loadToWebGPU) is compared with, measured in the same process on
// the same engine. Not used by the package; it adds a loop around ws::Dequantizer, which every
// load links anyway.
//
// Why an export and not a loader over bytes in memory: the loader's own work (planning, reads,
// events) would sit in the reference figure, and the ratio the issue asks for is the JS path's
// against the kernel's.
#include "abi.h"
#include "weightstream/dequant.h"

// Decodes one tensor, its stored bytes at `in` (in_size) fed in pieces of `piece` bytes into one
// output buffer of out_cap bytes that every call overwrites (as the loader's output piece is),
// `reps` times. Words: 0 format (QuantFormat), 1 out (OutType), 2 bits, 3 group, 4 scale dtype,
// 5 scales ptr, 6 biases ptr, 7-8 elements, 9 piece, 10 out ptr, 11 out_cap, 12 in ptr,
// 13 in_size, 14 reps. Returns the Status (Ok when every rep decoded the whole tensor).
WS_EXPORT(ws_bench_decode) uint32_t ws_bench_decode(const uint32_t* w) {
  ws::DequantSpec s;
  s.format = static_cast<ws::QuantFormat>(w[0]);
  s.out = static_cast<ws::OutType>(w[1]);
  s.bits = w[2];
  s.group = w[3];
  s.scale_dtype = static_cast<ws::DType>(w[4]);
  s.scales = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(w[5]));
  s.biases = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(w[6]));
  s.elements = uint64_t(w[7]) | uint64_t(w[8]) << 32;
  const size_t piece = w[9] ? w[9] : 1;
  uint8_t* out = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(w[10]));
  const size_t out_cap = w[11];
  const uint8_t* in = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(w[12]));
  const size_t in_size = w[13];
  for (uint32_t r = 0; r < w[14]; ++r) {
    ws::Dequantizer dq;
    ws::Status st = dq.init(s);
    if (st != ws::Status::Ok) return static_cast<uint32_t>(st);
    size_t at = 0;
    while (at < in_size) {
      const size_t n = in_size - at < piece ? in_size - at : piece;
      size_t used = 0;
      while (used < n) {  // one piece: decode until it is consumed, the output piece reused
        size_t u = 0, written = 0;
        st = dq.decode(in + at + used, n - used, &u, out, out_cap, &written);
        if (st != ws::Status::Ok) return static_cast<uint32_t>(st);
        if (u == 0 && written == 0) return static_cast<uint32_t>(ws::Status::UsageError);
        used += u;
      }
      at += n;
    }
    if (!dq.done()) return static_cast<uint32_t>(ws::Status::UsageError);
  }
  return 0;
}
