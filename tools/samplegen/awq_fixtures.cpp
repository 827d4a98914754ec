// ws-make-samples — AWQ modules as AutoAWQ packs them (see awq_fixtures.h).
//
// AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM.from_linear (w_bit 4, pack_num 8):
//   intweight[i][o] = round((W[o][i] + zeros[g][o] * scales[g][o]) / scales[g][o]), g = i / group,
//   as int32 [in, out] (its `.t()`);
//   qweight[i][c] |= intweight[i][8c + order_map[j]] << (4 * j), order_map = 0,2,4,6,1,3,5,7
//   (AWQ_ORDER in awq/utils/packing_utils.py): int32 [in, out / 8];
//   qzeros[g][c] |= zeros[g][8c + order_map[j]] << (4 * j) the same way: int32 [in / group, out / 8]
//   (zeros as the quantizer leaves them, 0..15: no minus one as GPTQ v1 has);
//   scales.half(), [in / group, out].
// The codes are chosen here (the round() above is the quantizer's business); what is laid out is
// exactly what from_linear writes for them. Cross-checked outside the repository (no upstream code
// is part of it): AutoAWQ's own from_linear (at 88e4c76) run under Debian's python3-torch on a
// torch.nn.Linear whose weight is (code - zero) * scale gives these qweight and qzeros bytes, and
// its dequantize_gemm gives `weightstream dequant`'s values (see tests/model/model_awq_hub_test.cpp).
#include "awq_fixtures.h"

#include "half_float.h"
#include "prng.h"

namespace samplegen {

namespace {

void put_u32(std::vector<uint8_t>* d, uint32_t v) {
  for (int k = 0; k < 4; ++k) d->push_back(uint8_t(v >> (8 * k)));
}

constexpr uint32_t kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

}  // namespace

std::vector<RawTensor> awq_module_tensors(const AwqModule& m) {
  const uint32_t group = m.group ? m.group : m.in;
  const uint32_t groups = m.in / group;
  const std::vector<uint8_t> r = xorshift32_bytes(size_t(m.in) * m.out + size_t(groups) * m.out * 2, m.seed, 7);
  size_t at = 0;
  std::vector<uint32_t> code(size_t(m.in) * m.out), zero(size_t(groups) * m.out);  // [in, out], [groups, out]
  for (uint32_t& c : code) c = r[at++] & 0xF;
  for (uint32_t& z : zero) z = r[at++] & 0xF;
  auto pack = [&](const std::vector<uint32_t>& v, uint32_t rows, const std::string& name) {
    RawTensor t{name, "I32", {rows, m.out / 8}, {}};
    for (uint32_t i = 0; i < rows; ++i)
      for (uint32_t c = 0; c < m.out / 8; ++c) {
        uint32_t w = 0;
        for (uint32_t j = 0; j < 8; ++j) w |= v[size_t(i) * m.out + 8 * c + kAwqOrder[j]] << (4 * j);
        put_u32(&t.data, w);
      }
    return t;
  };
  // Scales as a quantizer leaves them: positive, around 2^-6 .. 2^-2.
  RawTensor scales{m.prefix + ".scales", "F16", {groups, m.out}, {}};
  for (uint32_t k = 0; k < groups * m.out; ++k) {
    const uint16_t h = float_to_f16(float(16 + r[at++] % 240) / 1024.0f);
    scales.data.push_back(uint8_t(h));
    scales.data.push_back(uint8_t(h >> 8));
  }
  return {pack(code, m.in, m.prefix + ".qweight"), pack(zero, groups, m.prefix + ".qzeros"), scales};
}

// AutoAWQ awq/modules/linear/gemv.py (w_bit 4, pack_num 8), WQLinear_GEMV.from_linear:
//   qscales [out, W * 8] zero, then qscales[:, :groups] = scales (scales [out, groups] here);
//   intweight [out, in] (no transpose), qweight[o][c] |= intweight[o][8c + j] << (4 * j)
//   (order_map 0..7): int32 [out, in / 8];
//   qzeros [out, W] zero, qzeros[o][c] |= zeros[o][8c + j] << (4 * j) for 8c + j < groups;
//   W = calculate_zeros_width(in, group): ceil(ceil(in / group) / 8), rounded up to a multiple
//   of 4 (group 32), 2 (64) or 1 (>= 128).
// The codes, zeros and scales are drawn as awq_module_tensors draws them. Cross-checked outside
// the repository (no upstream code is part of it): AutoAWQ's gemv.py (at 181b60f) from_linear,
// run under Debian's python3-torch on a torch.nn.Linear whose weight is (code - zero) * scale
// with those scales and zeros, writes the awq-gemv fixture's qweight, qzeros and scales bytes.
std::vector<RawTensor> awq_gemv_module_tensors(const AwqModule& m) {
  const uint32_t group = m.group;
  const uint32_t groups = m.in / group;
  const uint32_t multiple = group >= 128 ? 1 : group == 64 ? 2 : 4;
  const uint32_t words = ((groups + 7) / 8 + multiple - 1) / multiple * multiple;
  const std::vector<uint8_t> r = xorshift32_bytes(size_t(m.in) * m.out + size_t(groups) * m.out * 2, m.seed, 7);
  size_t at = 0;
  std::vector<uint32_t> code(size_t(m.out) * m.in), zero(size_t(m.out) * groups);  // [out, in], [out, groups]
  for (uint32_t& c : code) c = r[at++] & 0xF;
  for (uint32_t& z : zero) z = r[at++] & 0xF;
  RawTensor qweight{m.prefix + ".qweight", "I32", {m.out, m.in / 8}, {}};
  RawTensor qzeros{m.prefix + ".qzeros", "I32", {m.out, words}, {}};
  RawTensor scales{m.prefix + ".scales", "F16", {m.out, words * 8}, {}};
  for (uint32_t o = 0; o < m.out; ++o) {
    for (uint32_t c = 0; c < m.in / 8; ++c) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < 8; ++j) w |= code[size_t(o) * m.in + 8 * c + j] << (4 * j);
      put_u32(&qweight.data, w);
    }
    for (uint32_t c = 0; c < words; ++c) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < 8 && 8 * c + j < groups; ++j) w |= zero[size_t(o) * groups + 8 * c + j] << (4 * j);
      put_u32(&qzeros.data, w);
    }
    for (uint32_t g = 0; g < words * 8; ++g) {
      const uint16_t h = g < groups ? float_to_f16(float(16 + r[at++] % 240) / 1024.0f) : 0;
      scales.data.push_back(uint8_t(h));
      scales.data.push_back(uint8_t(h >> 8));
    }
  }
  return {qweight, qzeros, scales};
}

}  // namespace samplegen
