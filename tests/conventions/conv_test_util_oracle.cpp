#include "conv_test_util_oracle.h"

#include <math.h>

#include "quant_oracle.h"

namespace convtest {

using ws::PieceRole;
using wsoracle::e4m3;
using wsoracle::f32;
using wsoracle::fp4;
using wsoracle::unpack;

const std::vector<uint8_t>& piece(const Bytes& b, const ws::LogicalWeight& w, PieceRole r) {
  const ws::TensorRef& ref = w.ref(r);
  return b[ref.table][ref.index];
}

std::vector<float> oracle_values(const ws::LogicalWeight& w, const Bytes& b, ws::DType plain_dtype) {
  std::vector<float> out;
  const auto& pk = piece(b, w, PieceRole::Packed);
  if (w.params.mode == ws::QuantMode::None) {
    for (uint64_t i = 0; i < w.elements; ++i) out.push_back(float_at(plain_dtype, pk.data(), i));
    return out;
  }
  const auto& sc = piece(b, w, PieceRole::Scales);
  const uint64_t k = w.shape[w.rank - 1], rows = w.elements / k, row_bytes = k * w.params.bits / 8;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t i = 0; i < k; ++i) {
      const uint64_t g = r * (k / w.params.group) + i / w.params.group;
      const uint32_t q = unpack(pk.data() + r * row_bytes, i, w.params.bits);
      float v = 0;
      switch (w.params.mode) {
        case ws::QuantMode::Affine:
          v = float_at(w.scale_dtype, sc.data(), g) * float(q) +
              float_at(w.scale_dtype, piece(b, w, PieceRole::Biases).data(), g);
          break;
        case ws::QuantMode::Mxfp4: v = fp4(q) * ldexpf(1.0f, int(sc[g]) - 127); break;
        case ws::QuantMode::Mxfp8: v = e4m3(uint8_t(q)) * ldexpf(1.0f, int(sc[g]) - 127); break;
        case ws::QuantMode::Nvfp4:
          v = fp4(q) * e4m3(sc[g]);
          if (w.ref(PieceRole::GlobalScale).present()) v *= f32(piece(b, w, PieceRole::GlobalScale).data());
          break;
        default: break;
      }
      out.push_back(v);
    }
  }
  return out;
}

float float_at(ws::DType d, const uint8_t* p, uint64_t i) {
  if (d == ws::DType::BF16) return wsoracle::bf16(p + 2 * i);
  if (d == ws::DType::F16) return wsoracle::f16(p + 2 * i);
  return wsoracle::f32(p + 4 * i);
}

}  // namespace convtest
