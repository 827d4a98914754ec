// ws-make-samples — GPTQ modules as the upstream packers write them (see gptq_fixtures.h).
//
// AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py QuantLinear.pack (GPTQModel
// gptqmodel/nn_modules/qlinear/__init__.py PackableQuantLinear.pack is the same layout):
//   intweight[i][o] = round(W[o][i] / scale[g_idx[i]][o] + zero[g_idx[i]][o]) as uint32, [in, out];
//   qweight[r][o] |= intweight[r * (32 / bits) + j][o] << (bits * j)      (bits 2, 4, 8);
//   bits 3: each 32 inputs fill 3 rows — 10 codes at 3 * j, the 11th's low 2 bits at 30 and its
//   bit 2 at the next row's bit 0, 10 codes at 3 * j + 1, the 22nd's bit 0 at 31 and bits 1..2
//   at the next row's bits 0..1, 10 codes at 3 * j + 2 (pack3 below, uint32 arithmetic);
//   zeros -= 1 (v1 only), then zeros.numpy().astype(np.uint32): a zero point of 0 becomes
//   0xFFFFFFFF, and qzeros[g][c] |= zeros[g][c * (32 / bits) + j] << (bits * j) ORs its ones into
//   every lane above j (bits 3: qzeros[g][3c .. 3c + 2] packed from outputs 32c .. 32c + 31 as
//   qweight's rows are; a -1's ones stay in its own word, shifted out of the top);
//   scales.t() as float16, [groups, out]; g_idx int32 [in]: i // group_size, or with desc_act the
//   group of each input in the activation order GPTQ quantized it (a permutation of those).
// The codes are chosen here (the round() above is the quantizer's business); what is laid out is
// exactly what pack writes for them.
#include "gptq_fixtures.h"

#include "half_float.h"
#include "prng.h"

namespace samplegen {

namespace {

void put_u32(std::vector<uint8_t>* d, uint32_t v) {
  for (int k = 0; k < 4; ++k) d->push_back(uint8_t(v >> (8 * k)));
}

// qlinear_cuda_old.py pack's bits == 3 loop over 32 values (uint32; a stored -1 is 0xFFFFFFFF).
void pack3(const uint32_t* v, uint32_t w[3]) {
  w[0] = w[1] = w[2] = 0;
  for (uint32_t j = 0; j < 10; ++j) w[0] |= v[j] << (3 * j);
  w[0] |= v[10] << 30;
  w[1] |= (v[10] >> 2) & 1;
  for (uint32_t j = 0; j < 10; ++j) w[1] |= v[11 + j] << (3 * j + 1);
  w[1] |= v[21] << 31;
  w[2] |= (v[21] >> 1) & 3;
  for (uint32_t j = 0; j < 10; ++j) w[2] |= v[22 + j] << (3 * j + 2);
}

}  // namespace

std::vector<RawTensor> gptq_module_tensors(const GptqModule& m) {
  const uint32_t per = m.bits == 3 ? 32 : 32 / m.bits, words = m.bits == 3 ? 3 : 1, mask = (1u << m.bits) - 1;
  const uint32_t group = m.group ? m.group : m.in;
  const uint32_t groups = (m.in + group - 1) / group;
  const std::vector<uint8_t> r = xorshift32_bytes(size_t(m.in) * m.out + size_t(groups) * m.out * 3 + m.in, m.seed, 7);
  size_t at = 0;
  std::vector<uint32_t> code(size_t(m.in) * m.out), zero(size_t(groups) * m.out);
  for (uint32_t& c : code) c = r[at++] & mask;
  for (uint32_t& z : zero) z = r[at++] & mask;
  if (m.zero_zero) zero[0] = 0;
  std::vector<uint32_t> g_idx(m.in);
  for (uint32_t i = 0; i < m.in; ++i) g_idx[i] = i / group;
  if (m.desc_act)  // activation order: the same groups, shuffled over the inputs
    for (uint32_t i = m.in - 1; i > 0; --i) std::swap(g_idx[i], g_idx[r[at++] % (i + 1)]);
  RawTensor qweight{m.prefix + ".qweight", "I32", {m.in / per * words, m.out}, {}};
  if (m.bits == 3) {
    std::vector<uint32_t> rows(size_t(m.in / 32 * 3) * m.out);
    for (uint32_t b = 0; b < m.in / 32; ++b)
      for (uint32_t o = 0; o < m.out; ++o) {
        uint32_t v[32], w[3];
        for (uint32_t j = 0; j < 32; ++j) v[j] = code[size_t(b * 32 + j) * m.out + o];
        pack3(v, w);
        for (uint32_t k = 0; k < 3; ++k) rows[size_t(3 * b + k) * m.out + o] = w[k];
      }
    for (uint32_t w : rows) put_u32(&qweight.data, w);
  }
  for (uint32_t row = 0; row < m.in / per && m.bits != 3; ++row)
    for (uint32_t o = 0; o < m.out; ++o) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < per; ++j) w |= code[size_t(row * per + j) * m.out + o] << (m.bits * j);
      put_u32(&qweight.data, w);
    }
  RawTensor qzeros{m.prefix + ".qzeros", "I32", {groups, m.out / per * words}, {}};
  for (uint32_t g = 0; g < groups && m.bits == 3; ++g)
    for (uint32_t c = 0; c < m.out / 32; ++c) {
      uint32_t v[32], w[3];
      for (uint32_t j = 0; j < 32; ++j) v[j] = zero[size_t(g) * m.out + c * 32 + j] - (m.v1 ? 1u : 0u);
      pack3(v, w);
      for (uint32_t k = 0; k < 3; ++k) put_u32(&qzeros.data, w[k]);
    }
  for (uint32_t g = 0; g < groups && m.bits != 3; ++g)
    for (uint32_t c = 0; c < m.out / per; ++c) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < per; ++j) w |= (zero[size_t(g) * m.out + c * per + j] - (m.v1 ? 1u : 0u)) << (m.bits * j);
      put_u32(&qzeros.data, w);
    }
  // Scales as a quantizer leaves them: positive, around 2^-6 .. 2^-2.
  RawTensor scales{m.prefix + ".scales", "F16", {groups, m.out}, {}};
  for (uint32_t k = 0; k < groups * m.out; ++k) {
    const uint16_t h = float_to_f16(float(16 + r[at++] % 240) / 1024.0f);
    scales.data.push_back(uint8_t(h));
    scales.data.push_back(uint8_t(h >> 8));
  }
  RawTensor gi{m.prefix + ".g_idx", "I32", {m.in}, {}};
  for (uint32_t v : g_idx) put_u32(&gi.data, v);
  return {qweight, qzeros, scales, gi};
}

}  // namespace samplegen
