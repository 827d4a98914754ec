// weightstream wasm — ws::Dequantizer behind a handle. JS describes the tensor in a spec struct,
// then hands stored bytes (a view of the session's input buffer, or bytes it copied into scratch)
// to ws_dequant_decode, which writes values into an output buffer JS allocated once.
#include <new>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "weightstream/dequant.h"

using wsabi::put_u64;

namespace {

// The spec as JS writes it (words): 0 format, 1 out (0 f32, 1 f16), 2 impl (0 auto, 1 reference,
// 2 simd128), 3-4 elements, 5 bits, 6 group, 7 scale dtype (a DType), 8 scales ptr, 9 biases ptr,
// 10 has_global_scale, 11 global_scale (f32 bits), 12 global_scale_is_ollama, 13 validate,
// 14-15 input_offset, 16-17 scales_offset.
ws::DequantSpec read_spec(const uint32_t* w) {
  ws::DequantSpec s;
  s.format = static_cast<ws::QuantFormat>(w[0]);
  s.out = w[1] ? ws::OutType::F16 : ws::OutType::F32;
  s.impl = static_cast<ws::KernelImpl>(w[2]);
  s.elements = uint64_t(w[3]) | uint64_t(w[4]) << 32;
  s.bits = w[5];
  s.group = w[6];
  s.scale_dtype = static_cast<ws::DType>(w[7]);
  s.scales = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(w[8]));
  s.biases = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(w[9]));
  s.has_global_scale = w[10] != 0;
  memcpy(&s.global_scale, &w[11], 4);
  s.global_scale_is_ollama = w[12] != 0;
  s.validate = w[13] != 0;
  s.input_offset = uint64_t(w[14]) | uint64_t(w[15]) << 32;
  s.scales_offset = uint64_t(w[16]) | uint64_t(w[17]) << 32;
  return s;
}

}  // namespace

struct WsDequant {
  ws::Dequantizer d;
  uint32_t spec[18];
  // Words: 0 in_used, 1 out_written, 2 done, 3-4 elements_done, 5-6 input_bytes,
  // 7 block_output_bytes, 8 impl; 9-20 the error (abi.h).
  uint32_t out[9];
  wsabi::ErrorOut error;
};

WS_EXPORT(ws_dequant_create) WsDequant* ws_dequant_create() {
  void* mem = malloc(sizeof(WsDequant));
  if (!mem) return nullptr;
  WsDequant* d = new (mem) WsDequant();
  memset(d->spec, 0, sizeof d->spec);
  memset(d->out, 0, sizeof d->out);
  return d;
}

WS_EXPORT(ws_dequant_destroy) void ws_dequant_destroy(WsDequant* d) {
  if (!d) return;
  d->~WsDequant();
  free(d);
}

// Where JS writes the spec before ws_dequant_init.
WS_EXPORT(ws_dequant_spec) uint32_t* ws_dequant_spec(WsDequant* d) { return d->spec; }
WS_EXPORT(ws_dequant_out) uint32_t* ws_dequant_out(WsDequant* d) { return d->out; }

static void refresh(WsDequant* d) {
  d->out[2] = d->d.done();
  put_u64(d->out + 3, d->d.elements_done());
  put_u64(d->out + 5, d->d.input_bytes());
  d->out[7] = static_cast<uint32_t>(d->d.block_output_bytes());
  d->out[8] = static_cast<uint32_t>(d->d.impl());
  wsabi::put_error(&d->error, d->d.error());
}

WS_EXPORT(ws_dequant_init) uint32_t ws_dequant_init(WsDequant* d) {
  const ws::Status s = d->d.init(read_spec(d->spec));
  refresh(d);
  return static_cast<uint32_t>(s);
}

WS_EXPORT(ws_dequant_decode) uint32_t ws_dequant_decode(WsDequant* d, const uint8_t* in, uint32_t in_size,
                                                        void* out, uint32_t out_cap) {
  size_t in_used = 0, out_written = 0;
  const ws::Status s = d->d.decode(in, in_size, &in_used, out, out_cap, &out_written);
  d->out[0] = static_cast<uint32_t>(in_used);
  d->out[1] = static_cast<uint32_t>(out_written);
  refresh(d);
  return static_cast<uint32_t>(s);
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
