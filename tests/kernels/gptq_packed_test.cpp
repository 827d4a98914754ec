// QuantFormat::GptqPacked (GPTQ's qweight / qzeros / scales / g_idx, lib/src/kernels/gptq_packed.h):
// integers packed here as AutoGPTQ's / GPTQModel's `pack` packs them (along the input dimension,
// v1 zero points stored minus one into uint32 lanes, so a -1 spills into the lanes above it),
// the words handed to the decoder down qweight's columns (the logical rows), and every value
// checked against scale * (q - zero) computed here from the integers, with zero read as vLLM's
// q_gemm.cu reads a lane ((qzeros >> shift) & mask, + 1 for v1). Reference and SIMD128, f32 and
// f16, every chunking; the Dequantizer's checks of the spec, the g_idx and the scales; AWQ's zero
// lanes (gptq_awq_zeros).
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "weightstream/dequant.h"

namespace {

using kernel_test::Pieces;
using kernel_test::Rng;
using ws::DType;
using ws::QuantFormat;

struct Geometry {
  uint32_t in, out, bits, group;  // group 0: -1 (one group of the whole input)
  bool desc_act;                  // g_idx in a shuffled (activation) order
  bool v1;
};

struct Tensor {
  ws::DequantSpec spec;
  std::vector<uint32_t> code;   // [in][out]
  std::vector<uint32_t> zero;   // [groups][out], the zero point meant (0 .. 2^bits - 1)
  std::vector<uint32_t> gidx;   // [in]
  std::vector<uint8_t> qweight, qzeros, scales, g_idx_bytes;
  std::vector<uint8_t> stream;  // qweight's words down its columns
  uint32_t groups = 0;
};

void put32(std::vector<uint8_t>* v, size_t word, uint32_t x) { memcpy(v->data() + 4 * word, &x, 4); }
uint32_t get32(const std::vector<uint8_t>& v, size_t word) {
  uint32_t x;
  memcpy(&x, v.data() + 4 * word, 4);
  return x;
}

// AutoGPTQ qlinear_cuda_old.py QuantLinear.pack, its bits == 3 branch, for 32 uint32 values v
// (a stored -1 is 0xFFFFFFFF): 10 codes at 3 * j, code 10's low 2 bits at 30 and its bit 2 in
// the next word's bit 0, 10 codes at 3 * j + 1, code 21's low bit at 31 and bits 1..2 in the
// next word's low 2 bits, 10 codes at 3 * j + 2 — uint32 arithmetic, so high bits shifted out
// are lost and a -1's ones stay in its own word.
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

// vLLM csrc/quantization/gptq/q_gemm.cu MatrixView_q3_row::item, column c of the words at `p`
// (a qzeros row): the lanes 10 and 21 joined from two words, the others shifted from one.
uint32_t vllm_q3_item(const uint32_t* p, uint32_t c) {
  const uint32_t zw = c * 3 / 32, zm = c & 31;
  if (zm == 10) return (p[zw] >> 30) | ((p[zw + 1] << 2) & 4);
  if (zm == 21) return (p[zw] >> 31) | ((p[zw + 1] << 1) & 6);
  if (zm < 10) return (p[zw] >> (zm * 3)) & 7;
  if (zm < 21) return (p[zw] >> (zm * 3 - 32)) & 7;
  return (p[zw] >> (zm * 3 - 64)) & 7;
}

// Words of qweight's rows (or qzeros' columns) for n values: n * bits / 32.
uint32_t words_of(uint32_t n, uint32_t bits) { return n * bits / 32; }

Tensor make(const Geometry& g, uint64_t seed) {
  Rng rng(seed);
  Tensor t;
  const uint32_t per = g.bits == 3 ? 32 : 32 / g.bits, mask = (1u << g.bits) - 1;
  const uint32_t group = g.group ? g.group : g.in;
  t.groups = (g.in + group - 1) / group;
  t.code.resize(size_t(g.in) * g.out);
  for (auto& c : t.code) c = uint32_t(rng.below(mask + 1));
  t.zero.resize(size_t(t.groups) * g.out);
  // Zero points 0 included: in v1 they are stored as -1 (the hazard).
  for (auto& z : t.zero) z = uint32_t(rng.below(mask + 1));
  t.gidx.resize(g.in);
  for (uint32_t i = 0; i < g.in; ++i) t.gidx[i] = i / group;
  if (g.desc_act)  // a permutation of the groups' members, as GPTQ's act-order writes g_idx
    for (uint32_t i = g.in - 1; i > 0; --i) std::swap(t.gidx[i], t.gidx[rng.below(i + 1)]);
  // pack (AutoGPTQ qlinear pack / GPTQModel PackableQuantLinear.pack): qweight[r][o] |=
  // code[r * per + j][o] << (bits * j).
  t.qweight.assign(size_t(words_of(g.in, g.bits)) * g.out * 4, 0);
  for (uint32_t r = 0; r < g.in / per && g.bits == 3; ++r)
    for (uint32_t o = 0; o < g.out; ++o) {
      uint32_t v[32], w[3];
      for (uint32_t j = 0; j < 32; ++j) v[j] = t.code[size_t(r * 32 + j) * g.out + o];
      pack3(v, w);
      for (uint32_t k = 0; k < 3; ++k) put32(&t.qweight, size_t(3 * r + k) * g.out + o, w[k]);
    }
  for (uint32_t r = 0; r < g.in / per && g.bits != 3; ++r)
    for (uint32_t o = 0; o < g.out; ++o) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < per; ++j) w |= t.code[size_t(r * per + j) * g.out + o] << (g.bits * j);
      put32(&t.qweight, size_t(r) * g.out + o, w);
    }
  // qzeros[gr][c] |= uint32(zero - 1 for v1) << (bits * j), the zeros of outputs c * per + j: a
  // stored -1 is 0xFFFFFFFF and sets every bit from its lane up.
  const uint32_t zwords = words_of(g.out, g.bits);
  t.qzeros.assign(size_t(t.groups) * zwords * 4, 0);
  for (uint32_t gr = 0; gr < t.groups && g.bits == 3; ++gr)
    for (uint32_t c = 0; c < g.out / 32; ++c) {
      uint32_t v[32], w[3];
      for (uint32_t j = 0; j < 32; ++j) v[j] = t.zero[size_t(gr) * g.out + c * 32 + j] - (g.v1 ? 1u : 0u);
      pack3(v, w);
      for (uint32_t k = 0; k < 3; ++k) put32(&t.qzeros, size_t(gr) * zwords + 3 * c + k, w[k]);
    }
  for (uint32_t gr = 0; gr < t.groups && g.bits != 3; ++gr)
    for (uint32_t c = 0; c < g.out / per; ++c) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < per; ++j) {
        const uint32_t stored = t.zero[size_t(gr) * g.out + c * per + j] - (g.v1 ? 1u : 0u);
        w |= stored << (g.bits * j);
      }
      put32(&t.qzeros, size_t(gr) * (g.out / per) + c, w);
    }
  t.scales.resize(size_t(t.groups) * g.out * 2);
  for (size_t i = 0; i < size_t(t.groups) * g.out; ++i) {
    const uint16_t h = ws::f32_to_f16(ldexpf(float(int(rng.below(2000)) + 1) / 1024.0f, -int(rng.below(8))));
    memcpy(t.scales.data() + 2 * i, &h, 2);
  }
  t.g_idx_bytes.resize(size_t(g.in) * 4);
  for (uint32_t i = 0; i < g.in; ++i) put32(&t.g_idx_bytes, i, t.gidx[i]);
  for (uint32_t o = 0; o < g.out; ++o)
    for (uint32_t r = 0; r < words_of(g.in, g.bits); ++r) {
      const uint32_t w = get32(t.qweight, size_t(r) * g.out + o);
      const size_t at = t.stream.size();
      t.stream.resize(at + 4);
      memcpy(t.stream.data() + at, &w, 4);
    }
  ws::DequantSpec& s = t.spec;
  s.format = QuantFormat::GptqPacked;
  s.elements = uint64_t(g.in) * g.out;
  s.bits = g.bits;
  s.group = group;
  s.row_elems = g.in;
  s.scale_dtype = DType::F16;
  s.scales = t.scales.data();
  s.gptq_groups = t.groups;
  s.gptq_zero_add = g.v1 ? 1 : 0;
  s.gptq_zeros = t.qzeros.data();
  s.gptq_g_idx = t.g_idx_bytes.data();
  return t;
}

// vLLM's zero: the stored lane (after any spill from the lanes below) plus 1 for v1.
int32_t vllm_zero(const Tensor& t, const Geometry& g, uint32_t gr, uint32_t o) {
  if (g.bits == 3) {
    const uint32_t zwords = words_of(g.out, 3);
    std::vector<uint32_t> row(zwords + 1);  // + 1: item() may read a word past a lane 31
    for (uint32_t k = 0; k < zwords; ++k) row[k] = get32(t.qzeros, size_t(gr) * zwords + k);
    return int32_t(vllm_q3_item(row.data(), o)) + (g.v1 ? 1 : 0);
  }
  const uint32_t per = 32 / g.bits;
  const uint32_t w = get32(t.qzeros, size_t(gr) * (g.out / per) + o / per);
  return int32_t((w >> (g.bits * (o % per))) & ((1u << g.bits) - 1)) + (g.v1 ? 1 : 0);
}

// Logical [out, in]: w[o][i] = scale[g][o] * (code[i][o] - zero), g = g_idx[i].
std::vector<float> formula(const Tensor& t, const Geometry& g) {
  std::vector<float> y;
  for (uint32_t o = 0; o < g.out; ++o)
    for (uint32_t i = 0; i < g.in; ++i) {
      const uint32_t gr = t.gidx[i];
      uint16_t h;
      memcpy(&h, t.scales.data() + 2 * (size_t(gr) * g.out + o), 2);
      y.push_back(ws::f16_to_f32(h) * float(int32_t(t.code[size_t(i) * g.out + o]) - vllm_zero(t, g, gr, o)));
    }
  return y;
}

const Geometry kGeometries[] = {
    {256, 16, 4, 128, false, true},   // the common export: 4-bit g128, v1
    {256, 16, 4, 128, false, false},  // gptq_v2
    {256, 24, 4, 128, true, true},    // desc_act: g_idx in activation order
    {96, 8, 4, 0, false, true},       // group_size -1
    {64, 8, 4, 32, false, true},
    {128, 12, 8, 64, false, true},    // 8-bit
    {128, 12, 8, 32, true, false},
    {64, 32, 2, 32, false, true},     // 2-bit (the scalar path)
    {40, 8, 4, 8, false, true},       // groups of one word; rows not a multiple of 4 words
    {128, 32, 3, 64, false, true},    // 3-bit: 32 codes in 3 words, codes 10 and 21 straddle
    {96, 64, 3, 32, true, false},     // 3-bit desc_act, gptq_v2, two zero blocks a group
    {64, 32, 3, 0, false, true},      // 3-bit group_size -1
};

std::string name_of(const Geometry& g) {
  return std::to_string(g.in) + "x" + std::to_string(g.out) + " bits " + std::to_string(g.bits) + " group " +
         std::to_string(g.group) + (g.desc_act ? " desc_act" : "") + (g.v1 ? " v1" : " v2");
}

TEST(GptqPacked, ReferenceAndSimdAreTheFormulaInEveryChunking) {
  uint64_t seed = 7;
  for (const Geometry& g : kGeometries) {
    Tensor t = make(g, ++seed);
    const std::vector<float> want = formula(t, g);
    std::vector<uint16_t> want16;
    for (float v : want) want16.push_back(ws::f32_to_f16(v));
    for (bool with_gidx : {true, false}) {
      if (!with_gidx && g.desc_act) continue;
      ws::DequantSpec base = t.spec;
      if (!with_gidx) base.gptq_g_idx = nullptr;
      for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
        for (int cut = 0; cut < 4; ++cut) {
          Pieces p;
          p.kind = cut == 0 ? Pieces::Whole : cut == 1 ? Pieces::Fixed : Pieces::Random;
          p.size = 1;
          p.max_size = cut == 3 ? 2000 : 300;
          p.seed = seed + uint64_t(cut);
          p.out_blocks = cut == 2 ? 3 : 0;
          ws::DequantSpec s = base;
          s.impl = impl;
          s.out = ws::OutType::F32;
          const std::vector<float> got =
              kernel_test::as_floats(kernel_test::decode_in_pieces(s, t.stream.data(), t.stream.size(), p));
          ASSERT_EQ(got.size(), want.size()) << name_of(g);
          EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), want.size()))
              << name_of(g) << " impl " << int(impl) << " cut " << cut << " g_idx " << with_gidx;
          s.out = ws::OutType::F16;
          const std::vector<uint8_t> h = kernel_test::decode_in_pieces(s, t.stream.data(), t.stream.size(), p);
          ASSERT_EQ(h.size(), 2 * want16.size()) << name_of(g);
          EXPECT_TRUE(kernel_test::halves_identical(reinterpret_cast<const uint16_t*>(h.data()), want16.data(),
                                                    want16.size()))
              << name_of(g) << " f16 impl " << int(impl) << " cut " << cut << " g_idx " << with_gidx;
        }
    }
  }
}

// AWQ's zero points (issue #28; AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM.from_linear):
// the 8 outputs of a qzeros word in AWQ_ORDER = 0,2,4,6,1,3,5,7 (lane j holds output 8c +
// AWQ_ORDER[j]), read with gptq_awq_zeros from lane AWQ_REVERSE_ORDER[o % 8]; nothing added.
// The words of the logical rows are the same stream (the loader gathers AWQ's qweight into it).
TEST(GptqPacked, AwqZeroLanesInEveryChunking) {
  const uint32_t kOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  uint64_t seed = 40;
  for (const Geometry& g : {Geometry{256, 16, 4, 128, false, false}, Geometry{64, 32, 4, 32, false, false},
                            Geometry{40, 8, 4, 8, false, false}, Geometry{96, 24, 4, 0, false, false}}) {
    Tensor t = make(g, ++seed);
    const std::vector<float> want = formula(t, g);  // zeros as meant, no + 1
    std::vector<uint16_t> want16;
    for (float v : want) want16.push_back(ws::f32_to_f16(v));
    for (uint32_t gr = 0; gr < t.groups; ++gr)
      for (uint32_t c = 0; c < g.out / 8; ++c) {
        uint32_t w = 0;
        for (uint32_t j = 0; j < 8; ++j) w |= t.zero[size_t(gr) * g.out + 8 * c + kOrder[j]] << (4 * j);
        put32(&t.qzeros, size_t(gr) * (g.out / 8) + c, w);
      }
    ws::DequantSpec base = t.spec;
    base.gptq_g_idx = nullptr;
    base.gptq_awq_zeros = true;
    for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
      for (int cut = 0; cut < 3; ++cut) {
        Pieces p;
        p.kind = cut == 0 ? Pieces::Whole : cut == 1 ? Pieces::Fixed : Pieces::Random;
        p.size = 1;
        p.max_size = 300;
        p.seed = seed + uint64_t(cut);
        ws::DequantSpec s = base;
        s.impl = impl;
        s.out = ws::OutType::F32;
        const std::vector<float> got =
            kernel_test::as_floats(kernel_test::decode_in_pieces(s, t.stream.data(), t.stream.size(), p));
        ASSERT_EQ(got.size(), want.size()) << name_of(g);
        EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), want.size()))
            << name_of(g) << " awq impl " << int(impl) << " cut " << cut;
        s.out = ws::OutType::F16;
        const std::vector<uint8_t> h = kernel_test::decode_in_pieces(s, t.stream.data(), t.stream.size(), p);
        ASSERT_EQ(h.size(), 2 * want16.size()) << name_of(g);
        EXPECT_TRUE(kernel_test::halves_identical(reinterpret_cast<const uint16_t*>(h.data()), want16.data(), want16.size()))
            << name_of(g) << " awq f16 impl " << int(impl) << " cut " << cut;
      }
    // Read in GPTQ's lane order instead, the same words give other values (the interleave matters).
    ws::DequantSpec plain = base;
    plain.gptq_awq_zeros = false;
    std::vector<float> other(want.size());
    ws::Error e;
    ASSERT_EQ(ws::dequantize(plain, t.stream.data(), t.stream.size(), other.data(), other.size() * 4, &e), ws::Status::Ok);
    EXPECT_FALSE(kernel_test::floats_identical(other.data(), want.data(), want.size())) << name_of(g);
  }
  // AWQ's lanes are 8 a word: with 8 bits the spec is refused.
  Tensor t = make({128, 12, 8, 64, false, false}, 3);
  t.spec.gptq_awq_zeros = true;
  ws::Dequantizer d;
  EXPECT_EQ(d.init(t.spec), ws::Status::InvalidQuantParams);
}

// The v1 hazard by hand: 4-bit, zero points {0, 5, ...}: the first is stored as -1, so the
// word is 0xFFFFFFFF and vLLM reads every lane as 15 + 1 = 16 — output 0 reads 16, not 0.
TEST(GptqPacked, V1NegativeZeroSpillsAsVllmReadsIt) {
  const uint32_t qweight[1 * 8] = {0x00000000u, 0, 0, 0, 0, 0, 0, 0};  // [in/8 = 1][out = 8], codes 0
  uint32_t stream[8];
  for (int o = 0; o < 8; ++o) stream[o] = qweight[o];
  const uint32_t qzeros[1] = {0xFFFFFFFFu};  // zero 0 of output 0 stored as -1, spilled over lanes 1..7
  const uint16_t scales[8] = {0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00};  // 1.0
  ws::DequantSpec s;
  s.format = QuantFormat::GptqPacked;
  s.elements = 64;
  s.bits = 4;
  s.group = 8;
  s.row_elems = 8;
  s.scale_dtype = DType::F16;
  s.scales = reinterpret_cast<const uint8_t*>(scales);
  s.gptq_groups = 1;
  s.gptq_zero_add = 1;
  s.gptq_zeros = reinterpret_cast<const uint8_t*>(qzeros);
  float out[64];
  ws::Error e;
  ASSERT_EQ(ws::dequantize(s, stream, sizeof stream, out, sizeof out, &e), ws::Status::Ok);
  for (int k = 0; k < 64; ++k) EXPECT_EQ(out[k], -16.0f) << k;
}

TEST(GptqPacked, SpecGidxAndScaleChecks) {
  Tensor t = make({64, 8, 4, 32, false, true}, 3);
  t.spec.input_offset = 1000;
  t.spec.scales_offset = 2000;
  t.spec.gptq_g_idx_offset = 3000;
  ws::Dequantizer d;
  ASSERT_EQ(d.init(t.spec), ws::Status::Ok);
  EXPECT_EQ(d.input_bytes(), 64u * 8u / 2u);
  auto refused = [&](ws::DequantSpec s) {
    ws::Dequantizer x;
    EXPECT_EQ(x.init(s), ws::Status::InvalidQuantParams);
    EXPECT_EQ(x.error().offset, 1000u);
  };
  ws::DequantSpec s = t.spec;
  s.bits = 3;  // 8 rows (outputs) are no whole 3-word block of qzeros (32)
  refused(s);
  s = t.spec;
  s.bits = 3;
  s.elements = 32 * 48;
  s.row_elems = 48;  // 3 bits: rows of 48 inputs are one and a half 3-word blocks
  refused(s);
  {
    const Tensor t3 = make({64, 32, 3, 32, false, true}, 3);
    ws::Dequantizer x;  // whole blocks: 3 words (12 bytes) a block of 32 codes
    ASSERT_EQ(x.init(t3.spec), ws::Status::Ok);
    EXPECT_EQ(x.input_bytes(), 32u * 64u * 3u / 8u);
  }
  s = t.spec;
  s.bits = 5;
  refused(s);
  s = t.spec;
  s.gptq_zeros = nullptr;
  refused(s);
  s = t.spec;
  s.row_elems = 60;  // 512 values are not rows of 60
  refused(s);
  s = t.spec;
  s.row_elems = 4;  // half a word
  s.elements = 4 * 16;
  refused(s);
  s = t.spec;
  s.gptq_g_idx = nullptr;
  s.gptq_groups = 1;  // 64 inputs in groups of 32 need 2
  refused(s);
  s = t.spec;
  s.scale_dtype = DType::I32;
  refused(s);
  // g_idx past the groups: the value's byte.
  put32(&t.g_idx_bytes, 5, 2);
  ws::Dequantizer v;
  EXPECT_EQ(v.init(t.spec), ws::Status::QuantGroupIndexOutOfRange);
  EXPECT_EQ(v.error().offset, 3020u);
  t.spec.validate = false;  // not a block check: a group past the scales reads past them
  EXPECT_EQ(v.init(t.spec), ws::Status::QuantGroupIndexOutOfRange);
  put32(&t.g_idx_bytes, 5, 0);
  t.spec.validate = true;
  // An inf scale (the third).
  const uint16_t inf = 0x7C00;
  memcpy(t.scales.data() + 4, &inf, 2);
  EXPECT_EQ(v.init(t.spec), ws::Status::InvalidBlockData);
  EXPECT_EQ(v.error().offset, 2004u);
  t.spec.validate = false;
  EXPECT_EQ(v.init(t.spec), ws::Status::Ok);
}

}  // namespace
