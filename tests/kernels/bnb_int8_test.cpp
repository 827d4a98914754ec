// QuantFormat::BnbInt8 (bitsandbytes LLM.int8, lib/src/kernels/bnb_int8.h): the reference and
// SIMD128 kernels against w = f32(f32(q) * SCB[row]) * f32(7.874015718698502e-3) computed here from
// the bytes, f32 and f16, whole / 1-byte / random pieces; the values torch computes for
// int8_vectorwise_dequant's expression; the Dequantizer's checks.
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

struct Tensor {
  ws::DequantSpec spec;
  std::vector<uint8_t> q, scb;
};

Tensor make(uint64_t rows, uint64_t cols, uint64_t seed) {
  Rng rng(seed);
  Tensor t;
  t.q.resize(rows * cols);
  rng.fill(t.q.data(), t.q.size());
  t.scb.resize(4 * rows);
  for (uint64_t r = 0; r < rows; ++r) {
    const float v = ldexpf(float(1 + rng.below(1000)) / 1000.0f, int(rng.below(40)) - 25);
    memcpy(t.scb.data() + 4 * r, &v, 4);
  }
  t.spec.format = QuantFormat::BnbInt8;
  t.spec.elements = rows * cols;
  t.spec.row_elems = cols;
  t.spec.scale_dtype = DType::F32;
  t.spec.scales = t.scb.data();
  return t;
}

std::vector<float> formula(const Tensor& t) {
  std::vector<float> y;
  const float inv127 = float(7.874015718698502e-3);  // torch: the Python float as float32
  for (uint64_t e = 0; e < t.spec.elements; ++e) {
    float scb;
    memcpy(&scb, t.scb.data() + 4 * (e / t.spec.row_elems), 4);
    volatile float scaled = float(int8_t(t.q[e])) * scb;
    y.push_back(scaled * inv127);
  }
  return y;
}

TEST(BnbInt8, ReferenceAndSimdAreTheFormulaInEveryChunking) {
  const uint64_t shapes[][2] = {{4, 64}, {3, 96}, {2, 4096}, {5, 100}, {7, 9}, {1, 1}, {16, 256}};
  uint64_t seed = 3;
  for (const auto& sh : shapes) {
    const Tensor t = make(sh[0], sh[1], ++seed);
    const std::vector<float> want = formula(t);
    std::vector<uint16_t> want16;
    for (float v : want) want16.push_back(ws::f32_to_f16(v));
    const std::string name = std::to_string(sh[0]) + "x" + std::to_string(sh[1]);
    for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
      for (int cut = 0; cut < 3; ++cut) {
        Pieces p;
        p.kind = cut == 0 ? Pieces::Whole : cut == 1 ? Pieces::Fixed : Pieces::Random;
        p.size = 1;
        p.max_size = 300;
        p.seed = seed;
        p.out_blocks = cut == 2 ? 3 : 0;
        ws::DequantSpec s = t.spec;
        s.impl = impl;
        const std::vector<float> got =
            kernel_test::as_floats(kernel_test::decode_in_pieces(s, t.q.data(), t.q.size(), p));
        ASSERT_EQ(got.size(), want.size()) << name;
        EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), want.size())) << name << " cut " << cut;
        s.out = ws::OutType::F16;
        const std::vector<uint8_t> h = kernel_test::decode_in_pieces(s, t.q.data(), t.q.size(), p);
        ASSERT_EQ(h.size(), 2 * want16.size()) << name;
        EXPECT_TRUE(kernel_test::halves_identical(reinterpret_cast<const uint16_t*>(h.data()), want16.data(),
                                                  want16.size()))
            << name << " f16 cut " << cut;
      }
  }
}

// torch 1.13 (Debian) on bitsandbytes' own expressions (bitsandbytes-foundation/bitsandbytes
// 95f9af3): int8_vectorwise_quant of backends/default/ops.py (no outliers) on randn * 0.05 (seed
// 8), and _ops.py's default int8_vectorwise_dequant, `A * stats.view(-1, 1) *
// 7.874015718698502e-3`; the f32 bits it returned.
const int8_t kQ[64] = {
    -71, 83, 125, -21, 22, 65, 127, 8, -38, 79, -71, -45, 68, 55, 2, -6,
    26, 39, -45, -36, -23, -67, 25, -34, -104, 23, 49, 5, -28, 23, 14, 72,
    3, 14, -36, 51, -7, 92, -9, 8, -4, -56, -31, 127, -60, -25, 2, -56,
    -30, -79, 57, 71, -58, 83, 56, -4, 12, 34, 39, 108, 75, 123, 11, 64,
};
const uint32_t kScb[2] = {0x3DDB481Bu, 0x3DEAD53Du};
const uint32_t kOut[64] = {
    0xBD752E5Bu, 0x3D8F4F61u, 0x3DD7D412u, 0xBC910965u, 0x3C97F176u, 0x3D607627u,
    0x3DDB481Bu, 0x3BDD021Fu, 0xBD033942u, 0x3D886750u, 0xBD752E5Bu, 0xBD1B657Eu,
    0x3D6AD241u, 0x3D3DEDD3u, 0x3ADD021Fu, 0xBBA5C197u, 0x3CB391B9u, 0x3D06AD4Bu,
    0xBD1B657Eu, 0xBCF8A263u, 0xBC9ED986u, 0xBD675E38u, 0x3CACA9A8u, 0xBCEAD241u,
    0xBDB391B9u, 0x3C9ED986u, 0x3D2935A0u, 0x3B8A2154u, 0xBCC161DCu, 0x3C9ED986u,
    0x3C4161DCu, 0x3D78A263u, 0x3B3182F4u, 0x3C4F18C7u, 0xBD052236u, 0x3D3C9B23u,
    0xBBCF18C7u, 0x3DAA1D7Fu, 0xBC052236u, 0x3BECAE9Au, 0xBB6CAE9Au, 0xBD4F18C7u,
    0xBCE54925u, 0x3DEAD53Du, 0xBD5DE3B0u, 0xBCB8E869u, 0x3AECAE9Au, 0xBD4F18C7u,
    0xBCDDE3B0u, 0xBD9213C3u, 0x3D52CB81u, 0x3D8348DAu, 0xBD567E3Bu, 0x3D997938u,
    0x3D4F18C7u, 0xBB6CAE9Au, 0x3C3182F4u, 0x3CFB7984u, 0x3D103A66u, 0x3DC7B352u,
    0x3D8AAE4Fu, 0x3DE36FC9u, 0x3C22B80Au, 0x3D6CAE9Au,
};

TEST(BnbInt8, TheValuesTorchComputes) {
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    ws::DequantSpec s;
    s.format = QuantFormat::BnbInt8;
    s.elements = 64;
    s.row_elems = 32;
    s.scale_dtype = DType::F32;
    s.scales = reinterpret_cast<const uint8_t*>(kScb);
    s.impl = impl;
    uint32_t y[64];
    ws::Error err;
    ASSERT_EQ(ws::dequantize(s, kQ, 64, y, sizeof y, &err), ws::Status::Ok);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(y[i], kOut[i]) << i;
  }
}

TEST(BnbInt8, SpecAndScbChecks) {
  std::vector<uint8_t> scb(12);
  const float one = 1.0f, inf = INFINITY;
  for (int r = 0; r < 3; ++r) memcpy(scb.data() + 4 * r, &one, 4);
  ws::DequantSpec s;
  s.format = QuantFormat::BnbInt8;
  s.elements = 96;
  s.row_elems = 32;
  s.scale_dtype = DType::F32;
  s.scales = scb.data();
  s.scales_offset = 500;
  ws::Dequantizer d;
  EXPECT_EQ(d.init(s), ws::Status::Ok);
  ws::DequantSpec b = s;
  b.row_elems = 0;
  EXPECT_EQ(d.init(b), ws::Status::InvalidQuantParams);
  b = s;
  b.elements = 97;  // not whole rows
  EXPECT_EQ(d.init(b), ws::Status::InvalidQuantParams);
  b = s;
  b.scale_dtype = DType::F16;
  EXPECT_EQ(d.init(b), ws::Status::InvalidQuantParams);
  b = s;
  b.scales = nullptr;
  EXPECT_EQ(d.init(b), ws::Status::InvalidQuantParams);
  memcpy(scb.data() + 8, &inf, 4);
  EXPECT_EQ(d.init(s), ws::Status::InvalidBlockData);
  EXPECT_EQ(d.error().offset, 508u);
  // By hand: q = 127 and -127 (0x81) with SCB 2.0 are 254 * f32(1 / 127) and its negation; 0 is 0.
  const float two = 2.0f;
  memcpy(scb.data(), &two, 4);
  b = s;
  b.elements = 32;
  b.scales = scb.data();
  uint8_t q[32] = {127, 0x81};  // 127, -127
  float y[32];
  ws::Error err;
  ASSERT_EQ(ws::dequantize(b, q, 32, y, sizeof y, &err), ws::Status::Ok);
  EXPECT_EQ(y[0], 254.0f * 7.874015718698502e-3f);
  EXPECT_EQ(y[1], -y[0]);
  EXPECT_EQ(y[2], 0.0f);
}

}  // namespace
