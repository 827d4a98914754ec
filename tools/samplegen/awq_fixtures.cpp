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

}  // namespace samplegen
