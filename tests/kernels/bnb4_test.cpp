// QuantFormat::Bnb4 (bitsandbytes 4-bit NF4 / FP4, lib/src/kernels/bnb4.h): the reference and
// SIMD128 kernels against the values computed here from the packed bytes and the absmax by
// bitsandbytes' rules (element 2i = the high nibble of byte i; code[nibble] * absmax[e / blocksize]
// in f32; nested absmax = code2[q] * nested_absmax[j / 256] + offset with two roundings), f32 and
// f16, whole, 1-byte and random input pieces and small output pieces; hand-worked values; and the
// Dequantizer's checks of the spec and the stored floats.
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

// bitsandbytes functional.py get_4bit_type: NF4's list as written there; FP4's list in bit order
// (sign bit 8) divided by its largest magnitude, 12 — the tensor bitsandbytes builds, in f32.
float nf4(uint32_t k) {
  static const float kNf4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                                 -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                                 0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                                 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                                 0.7229568362236023f, 1.0f};
  return kNf4[k];
}
float fp4(uint32_t k) {
  static const float kMag[8] = {0.0f, 0.0625f, 8.0f, 12.0f, 4.0f, 6.0f, 2.0f, 3.0f};
  const float v = kMag[k & 7] / 12.0f;
  return (k & 8) ? -v : v;
}

float f32_of(const std::vector<uint8_t>& b, size_t i) {
  float v;
  memcpy(&v, b.data() + 4 * i, 4);
  return v;
}
void put_f32(std::vector<uint8_t>* b, size_t i, float v) { memcpy(b->data() + 4 * i, &v, 4); }

struct Case {
  uint64_t elements, blocksize;
  bool fp4, nested;
};

struct Tensor {
  ws::DequantSpec spec;
  std::vector<uint8_t> q, absmax, nested_absmax, nested_code;
  float offset = 0.0f;
};

// Random codes; positive absmax (as quantize_4bit writes them) from 2^-32 to 2^17, so products
// reach f16 subnormals and overflow (both ways the SIMD128 f16 kernel builds its table); nested: random
// codes, the signed dynamic map's range for the code (any finite floats do), a positive offset.
Tensor make(const Case& c, uint64_t seed) {
  Rng rng(seed);
  Tensor t;
  t.q.resize(c.elements / 2);
  rng.fill(t.q.data(), t.q.size());
  const uint64_t blocks = (c.elements + c.blocksize - 1) / c.blocksize;
  ws::DequantSpec& s = t.spec;
  s.format = QuantFormat::Bnb4;
  s.elements = c.elements;
  s.group = uint32_t(c.blocksize);
  s.bnb_fp4 = c.fp4;
  if (!c.nested) {
    t.absmax.resize(4 * blocks);
    for (uint64_t j = 0; j < blocks; ++j)
      put_f32(&t.absmax, j, ldexpf(float(1 + rng.below(1000)) / 1000.0f, int(rng.below(40)) - 22));
    s.scale_dtype = DType::F32;
  } else {
    t.absmax.resize(blocks);
    rng.fill(t.absmax.data(), t.absmax.size());
    const uint64_t nb = (blocks + 255) / 256;
    t.nested_absmax.resize(4 * nb);
    for (uint64_t j = 0; j < nb; ++j) put_f32(&t.nested_absmax, j, float(1 + rng.below(1000)) / 3333.0f);
    t.nested_code.resize(4 * 256);
    for (uint32_t k = 0; k < 256; ++k) put_f32(&t.nested_code, k, float(int(rng.below(20001)) - 10000) / 10007.0f);
    t.offset = float(1 + rng.below(1000)) / 7777.0f;
    s.scale_dtype = DType::U8;
    s.nested_absmax = t.nested_absmax.data();
    s.nested_code = t.nested_code.data();
    s.nested_group = 256;
    s.nested_offset = t.offset;
  }
  s.scales = t.absmax.data();
  return t;
}

// dequantize_4bit's values, computed from the bytes: one rounding per multiplication and addition.
std::vector<float> formula(const Tensor& t, const Case& c) {
  std::vector<float> y(c.elements);
  for (uint64_t e = 0; e < c.elements; ++e) {
    const uint8_t b = t.q[e / 2];
    const uint32_t nib = (e % 2 == 0) ? b >> 4 : b & 15;
    const uint64_t j = e / c.blocksize;
    float a;
    if (!c.nested) {
      a = f32_of(t.absmax, j);
    } else {
      volatile float scaled = f32_of(t.nested_code, t.absmax[j]) * f32_of(t.nested_absmax, j / 256);
      a = scaled + t.offset;
    }
    y[e] = (c.fp4 ? fp4(nib) : nf4(nib)) * a;
  }
  return y;
}

std::string name_of(const Case& c) {
  return std::to_string(c.elements) + " values, blocksize " + std::to_string(c.blocksize) + (c.fp4 ? " fp4" : " nf4") +
         (c.nested ? " nested" : "");
}

const Case kShapes[] = {
    {64 * 32, 64, false, false},   // unit 64
    {3 * 96, 64, false, false},    // a partial last absmax block (288 = 4.5 x 64); unit 32
    {4096 * 3, 4096, false, false},  // unit 256
    {1024 * 6 + 32, 32, false, false},
    {2 * 2 * 3 * 5, 64, false, false},  // unit 4: 60 values, the scalar tail
    {64 * 700, 64, false, false},  // 700 blocks: 3 nested absmax (blocks 0-255, 256-511, 512-699)
    {2, 128, false, false},        // one byte
};

TEST(Bnb4, ReferenceAndSimdAreTheFormulaInEveryChunking) {
  uint64_t seed = 7;
  for (Case c : kShapes)
    for (bool fp : {false, true})
      for (bool nested : {false, true}) {
        c.fp4 = fp;
        c.nested = nested;
        const Tensor t = make(c, ++seed);
        const std::vector<float> want = formula(t, c);
        std::vector<uint16_t> want16;
        for (float v : want) want16.push_back(ws::f32_to_f16(v));
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
            s.out = ws::OutType::F32;
            const std::vector<float> got =
                kernel_test::as_floats(kernel_test::decode_in_pieces(s, t.q.data(), t.q.size(), p));
            ASSERT_EQ(got.size(), want.size()) << name_of(c);
            EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), want.size()))
                << name_of(c) << " impl " << int(impl) << " cut " << cut;
            s.out = ws::OutType::F16;
            const std::vector<uint8_t> h = kernel_test::decode_in_pieces(s, t.q.data(), t.q.size(), p);
            ASSERT_EQ(h.size(), 2 * want16.size()) << name_of(c);
            EXPECT_TRUE(kernel_test::halves_identical(reinterpret_cast<const uint16_t*>(h.data()), want16.data(),
                                                      want16.size()))
                << name_of(c) << " f16 impl " << int(impl) << " cut " << cut;
          }
      }
}

ws::DequantSpec plain_spec(const std::vector<uint8_t>& absmax, uint64_t elements, uint32_t bs, bool fp) {
  ws::DequantSpec s;
  s.format = QuantFormat::Bnb4;
  s.elements = elements;
  s.group = bs;
  s.bnb_fp4 = fp;
  s.scale_dtype = DType::F32;
  s.scales = absmax.data();
  return s;
}

// Worked by hand: NF4 byte 0xF0 is codes 15 (1.0, first) and 0 (-1.0); 0x7E is 0.0 and
// 0.7229568362236023. FP4 byte 0x8B is code 8 (-0.0: dDequantizeFP4Tree's sign times lut[0]) and
// code 11 (-1.0); 0x21 is 8/12 and 0.0625/12.
TEST(Bnb4, HandWorkedValues) {
  std::vector<uint8_t> absmax(4);
  put_f32(&absmax, 0, 2.0f);
  const uint8_t q[32] = {0xF0, 0x7E, 0x8B, 0x21};  // 64 values: one block of 64
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    ws::DequantSpec s = plain_spec(absmax, 64, 64, false);
    s.impl = impl;
    float y[64];
    ws::Error err;
    ASSERT_EQ(ws::dequantize(s, q, 32, y, sizeof y, &err), ws::Status::Ok);
    EXPECT_EQ(y[0], 2.0f);
    EXPECT_EQ(y[1], -2.0f);
    EXPECT_EQ(y[2], 0.0f);
    EXPECT_EQ(y[3], 0.7229568362236023f * 2.0f);
    EXPECT_EQ(y[8], -2.0f);  // byte 4 = 0x00: code 0 twice
    s.bnb_fp4 = true;
    ASSERT_EQ(ws::dequantize(s, q, 32, y, sizeof y, &err), ws::Status::Ok);
    EXPECT_EQ(y[4], 0.0f);
    EXPECT_TRUE(signbit(y[4])) << "code 8 is -0.0";
    EXPECT_EQ(y[5], -2.0f);
    EXPECT_EQ(y[6], 2.0f * 8.0f / 12.0f);
    EXPECT_EQ(y[7], 2.0f * (0.0625f / 12.0f));
    uint16_t h[64];
    s.out = ws::OutType::F16;
    ASSERT_EQ(ws::dequantize(s, q, 32, h, sizeof h, &err), ws::Status::Ok);
    EXPECT_EQ(h[4], 0x8000);  // -0.0
    EXPECT_EQ(h[5], 0xC000);  // -2.0
  }
}

// Nested: absmax = code2[q] * nested_absmax + offset. code2[3] = 0.5, nested_absmax 3.0, offset
// 0.25: absmax 1.75; NF4 code 15 gives 1.75.
TEST(Bnb4, NestedAbsmaxByHand) {
  std::vector<uint8_t> code(1024), nested(4);
  put_f32(&code, 3, 0.5f);
  put_f32(&nested, 0, 3.0f);
  const uint8_t qa[1] = {3};
  const uint8_t q[32] = {0xFF};
  ws::DequantSpec s;
  s.format = QuantFormat::Bnb4;
  s.elements = 64;
  s.group = 64;
  s.scale_dtype = DType::U8;
  s.scales = qa;
  s.nested_absmax = nested.data();
  s.nested_code = code.data();
  s.nested_group = 256;
  s.nested_offset = 0.25f;
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    s.impl = impl;
    float y[64];
    ws::Error err;
    ASSERT_EQ(ws::dequantize(s, q, 32, y, sizeof y, &err), ws::Status::Ok);
    EXPECT_EQ(y[0], 1.75f);
    EXPECT_EQ(y[1], 1.75f);
    EXPECT_EQ(y[2], -1.75f);  // byte 1 = 0x00: code 0, -1.0
  }
}

// Two roundings, not one: code2 = 1 + 2^-23, nested_absmax = 1 + 2^-23, offset = -1. The product
// (1 + 2^-22 + 2^-46) rounds to 1 + 2^-22; + (-1) gives 2^-22. A fused multiply-add would keep the
// 2^-46 (2^-22 + 2^-46).
TEST(Bnb4, NestedAbsmaxIsTwoRoundings) {
  std::vector<uint8_t> code(1024), nested(4);
  const float one_ulp = 1.0f + ldexpf(1.0f, -23);
  put_f32(&code, 0, one_ulp);
  put_f32(&nested, 0, one_ulp);
  const uint8_t qa[1] = {0};
  const uint8_t q[16] = {0xF0};
  ws::DequantSpec s;
  s.format = QuantFormat::Bnb4;
  s.elements = 32;
  s.group = 32;
  s.scale_dtype = DType::U8;
  s.scales = qa;
  s.nested_absmax = nested.data();
  s.nested_code = code.data();
  s.nested_group = 256;
  s.nested_offset = -1.0f;
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    s.impl = impl;
    float y[32];
    ws::Error err;
    ASSERT_EQ(ws::dequantize(s, q, 16, y, sizeof y, &err), ws::Status::Ok);
    EXPECT_EQ(y[0], ldexpf(1.0f, -22));
    EXPECT_EQ(y[1], -ldexpf(1.0f, -22));
  }
}

// Upstream's values: the first 64-value block of two weights (randn * 0.02 in bf16, seed 28)
// quantized and dequantized by bitsandbytes' own pure-torch CPU code (bitsandbytes-foundation/
// bitsandbytes 95f9af3, backends/default/ops.py quantize_4bit / _dequantize_4bit_compute,
// quantize_blockwise / _dequantize_blockwise_compute; functional.py get_4bit_type,
// create_dynamic_map), run outside this repository on Debian's torch 1.13 (the one change: int64
// instead of int32 gather indices, which that torch requires), as functional.py quantize_4bit /
// dequantize_4bit chain them, nested: compress_statistics (absmax - mean, blocksize 256). The
// f32 bits below are what that code returned; the whole run (8 weights, 787,328 values, both
// kernels, f32 and f16) matched bit for bit but for one thing: FP4 code 8 is +0.0 on that CPU
// path (get_4bit_type's list has the Python integer -0, which is 0) and -0.0 in the CUDA kernels
// (dDequantizeFP4Tree: lut[0] * -1), which this reader follows.
struct Upstream {
  bool fp4;
  uint8_t packed[32];
  uint32_t absmax, qabsmax, nested_code, nested_absmax, offset;
  uint32_t out[64], out_nested[64];
};

const Upstream kNf4 = {
    false,
    {
    0xC4, 0x92, 0x97, 0x26, 0x8C, 0x38, 0x06, 0x7C,
    0xB7, 0x78, 0x8C, 0xB7, 0xA6, 0x14, 0xAE, 0x66,
    0x93, 0xC7, 0x44, 0xD4, 0x56, 0x68, 0x78, 0x63,
    0xCE, 0x76, 0x65, 0x47, 0xB8, 0xA8, 0x58, 0x78,
    },
    0x3D7B0000u, 210u, 0x3EBF999Au, 0x3CBC2AAAu, 0x3D57EAABu,
    {
    0x3CDD3C80u, 0xBC8ECA21u, 0x3C2192EDu, 0xBD03CB18u, 0x3C2192EDu, 0x00000000u, 0xBD03CB18u, 0xBBB6D417u,
    0x3B9FCC18u, 0x3CDD3C80u, 0xBCC63FA3u, 0x3B9FCC18u, 0xBD7B0000u, 0xBBB6D417u, 0x00000000u, 0x3CDD3C80u,
    0x3CA9A22Au, 0x00000000u, 0x00000000u, 0x3B9FCC18u, 0x3B9FCC18u, 0x3CDD3C80u, 0x3CA9A22Au, 0x00000000u,
    0x3C7718C5u, 0xBBB6D417u, 0xBD2EBE91u, 0xBC8ECA21u, 0x3C7718C5u, 0x3D357651u, 0xBBB6D417u, 0xBBB6D417u,
    0x3C2192EDu, 0xBCC63FA3u, 0x3CDD3C80u, 0x00000000u, 0xBC8ECA21u, 0xBC8ECA21u, 0x3D0D3785u, 0xBC8ECA21u,
    0xBC398335u, 0xBBB6D417u, 0xBBB6D417u, 0x3B9FCC18u, 0x00000000u, 0x3B9FCC18u, 0xBBB6D417u, 0xBCC63FA3u,
    0x3CDD3C80u, 0x3D357651u, 0x00000000u, 0xBBB6D417u, 0xBBB6D417u, 0xBC398335u, 0xBC8ECA21u, 0x00000000u,
    0x3CA9A22Au, 0x3B9FCC18u, 0x3C7718C5u, 0x3B9FCC18u, 0xBC398335u, 0x3B9FCC18u, 0x00000000u, 0x3B9FCC18u,
    },
    {
    0x3CDD5894u, 0xBC8EDC40u, 0x3C21A76Du, 0xBD03DBD2u, 0x3C21A76Du, 0x00000000u, 0xBD03DBD2u, 0xBBB6EB4Au,
    0x3B9FE05Fu, 0x3CDD5894u, 0xBCC658CBu, 0x3B9FE05Fu, 0xBD7B1FDAu, 0xBBB6EB4Au, 0x00000000u, 0x3CDD5894u,
    0x3CA9B7B1u, 0x00000000u, 0x00000000u, 0x3B9FE05Fu, 0x3B9FE05Fu, 0x3CDD5894u, 0x3CA9B7B1u, 0x00000000u,
    0x3C773820u, 0xBBB6EB4Au, 0xBD2ED4BDu, 0xBC8EDC40u, 0x3C773820u, 0x3D358D57u, 0xBBB6EB4Au, 0xBBB6EB4Au,
    0x3C21A76Du, 0xBCC658CBu, 0x3CDD5894u, 0x00000000u, 0xBC8EDC40u, 0xBC8EDC40u, 0x3D0D4970u, 0xBC8EDC40u,
    0xBC399ABFu, 0xBBB6EB4Au, 0xBBB6EB4Au, 0x3B9FE05Fu, 0x00000000u, 0x3B9FE05Fu, 0xBBB6EB4Au, 0xBCC658CBu,
    0x3CDD5894u, 0x3D358D57u, 0x00000000u, 0xBBB6EB4Au, 0xBBB6EB4Au, 0xBC399ABFu, 0xBC8EDC40u, 0x00000000u,
    0x3CA9B7B1u, 0x3B9FE05Fu, 0x3C773820u, 0x3B9FE05Fu, 0xBC399ABFu, 0x3B9FE05Fu, 0x00000000u, 0x3B9FE05Fu,
    },
};
const Upstream kFp4 = {
    true,
    {
    0xCE, 0xCE, 0xC6, 0x9F, 0xF2, 0x94, 0x5E, 0x6E,
    0x4A, 0xF3, 0x44, 0x4D, 0x92, 0x6D, 0x4F, 0xEC,
    0x8D, 0xC9, 0x4F, 0xE1, 0xF7, 0xE4, 0x19, 0xC1,
    0x96, 0x41, 0x57, 0x4A, 0xFE, 0x4E, 0x4A, 0xD7,
    },
    0x3D6C0000u, 194u, 0x3E18CCCDu, 0x3CF51C72u, 0x3D5971C7u,
    {
    0xBC9D5556u, 0xBC1D5556u, 0xBC9D5556u, 0xBC1D5556u, 0xBC9D5556u, 0x3C1D5556u, 0xB99D5556u, 0xBC6C0000u,
    0xBC6C0000u, 0x3D1D5556u, 0xB99D5556u, 0x3C9D5556u, 0x3CEC0000u, 0xBC1D5556u, 0x3C1D5556u, 0xBC1D5556u,
    0x3C9D5556u, 0xBD1D5556u, 0xBC6C0000u, 0x3D6C0000u, 0x3C9D5556u, 0x3C9D5556u, 0x3C9D5556u, 0xBCEC0000u,
    0xB99D5556u, 0x3D1D5556u, 0x3C1D5556u, 0xBCEC0000u, 0x3C9D5556u, 0xBC6C0000u, 0xBC1D5556u, 0xBC9D5556u,
    0x00000000u, 0xBCEC0000u, 0xBC9D5556u, 0xB99D5556u, 0x3C9D5556u, 0xBC6C0000u, 0xBC1D5556u, 0x399D5556u,
    0xBC6C0000u, 0x3C6C0000u, 0xBC1D5556u, 0x3C9D5556u, 0x399D5556u, 0xB99D5556u, 0xBC9D5556u, 0x399D5556u,
    0xB99D5556u, 0x3C1D5556u, 0x3C9D5556u, 0x399D5556u, 0x3CEC0000u, 0x3C6C0000u, 0x3C9D5556u, 0xBD1D5556u,
    0xBC6C0000u, 0xBC1D5556u, 0x3C9D5556u, 0xBC1D5556u, 0x3C9D5556u, 0xBD1D5556u, 0xBCEC0000u, 0x3C6C0000u,
    },
    {
    0xBC9D279Au, 0xBC1D279Au, 0xBC9D279Au, 0xBC1D279Au, 0xBC9D279Au, 0x3C1D279Au, 0xB99D279Au, 0xBC6BBB66u,
    0xBC6BBB66u, 0x3D1D279Au, 0xB99D279Au, 0x3C9D279Au, 0x3CEBBB66u, 0xBC1D279Au, 0x3C1D279Au, 0xBC1D279Au,
    0x3C9D279Au, 0xBD1D279Au, 0xBC6BBB66u, 0x3D6BBB66u, 0x3C9D279Au, 0x3C9D279Au, 0x3C9D279Au, 0xBCEBBB66u,
    0xB99D279Au, 0x3D1D279Au, 0x3C1D279Au, 0xBCEBBB66u, 0x3C9D279Au, 0xBC6BBB66u, 0xBC1D279Au, 0xBC9D279Au,
    0x00000000u, 0xBCEBBB66u, 0xBC9D279Au, 0xB99D279Au, 0x3C9D279Au, 0xBC6BBB66u, 0xBC1D279Au, 0x399D279Au,
    0xBC6BBB66u, 0x3C6BBB66u, 0xBC1D279Au, 0x3C9D279Au, 0x399D279Au, 0xB99D279Au, 0xBC9D279Au, 0x399D279Au,
    0xB99D279Au, 0x3C1D279Au, 0x3C9D279Au, 0x399D279Au, 0x3CEBBB66u, 0x3C6BBB66u, 0x3C9D279Au, 0xBD1D279Au,
    0xBC6BBB66u, 0xBC1D279Au, 0x3C9D279Au, 0xBC1D279Au, 0x3C9D279Au, 0xBD1D279Au, 0xBCEBBB66u, 0x3C6BBB66u,
    },
};

TEST(Bnb4, TheValuesBitsandbytesComputes) {
  for (const Upstream* u : {&kNf4, &kFp4}) {
    std::vector<uint8_t> absmax(4), code(1024), nested(4);
    memcpy(absmax.data(), &u->absmax, 4);
    memcpy(code.data() + 4 * u->qabsmax, &u->nested_code, 4);
    memcpy(nested.data(), &u->nested_absmax, 4);
    const uint8_t qa[1] = {uint8_t(u->qabsmax)};
    for (bool nest : {false, true})
      for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
        ws::DequantSpec s = plain_spec(absmax, 64, 64, u->fp4);
        s.impl = impl;
        if (nest) {
          s.scale_dtype = DType::U8;
          s.scales = qa;
          s.nested_absmax = nested.data();
          s.nested_code = code.data();
          s.nested_group = 256;
          memcpy(&s.nested_offset, &u->offset, 4);
        }
        uint32_t y[64];
        ws::Error err;
        ASSERT_EQ(ws::dequantize(s, u->packed, 32, y, sizeof y, &err), ws::Status::Ok);
        const uint32_t* want = nest ? u->out_nested : u->out;
        for (int i = 0; i < 64; ++i) {
          const bool code8 = u->fp4 && ((i % 2 == 0 ? u->packed[i / 2] >> 4 : u->packed[i / 2] & 15) == 8);
          EXPECT_EQ(y[i], code8 ? 0x80000000u : want[i]) << (u->fp4 ? "fp4" : "nf4") << " nested " << nest << " value " << i;
          if (code8) {
            EXPECT_EQ(want[i], 0u);  // upstream CPU path: +0.0
          }
        }
      }
  }
}

TEST(Bnb4, SpecAndStoredFloatChecks) {
  std::vector<uint8_t> absmax(4 * 8);
  for (size_t j = 0; j < 8; ++j) put_f32(&absmax, j, 1.0f);
  ws::Dequantizer d;
  // Blocksizes bitsandbytes writes: powers of two 32..4096.
  for (uint32_t bs : {48u, 96u, 16u, 8192u, 0u}) {
    ws::DequantSpec s = plain_spec(absmax, 256, bs, false);
    s.input_offset = 100;
    EXPECT_EQ(d.init(s), ws::Status::InvalidQuantParams) << bs;
    EXPECT_EQ(d.error().offset, 100u);
  }
  for (uint32_t bs : {32u, 64u, 128u, 256u, 512u, 1024u, 2048u, 4096u})
    EXPECT_EQ(d.init(plain_spec(absmax, 256, bs, false)), ws::Status::Ok) << bs;
  EXPECT_EQ(d.init(plain_spec(absmax, 255, 64, false)), ws::Status::InvalidQuantParams);  // odd count
  ws::DequantSpec s = plain_spec(absmax, 256, 64, false);
  s.scales = nullptr;
  EXPECT_EQ(d.init(s), ws::Status::InvalidQuantParams);
  s = plain_spec(absmax, 256, 64, false);
  s.scale_dtype = DType::BF16;
  EXPECT_EQ(d.init(s), ws::Status::InvalidQuantParams);
  s.scale_dtype = DType::U8;  // nested without its companions
  EXPECT_EQ(d.init(s), ws::Status::InvalidQuantParams);
  // A non-finite absmax: InvalidBlockData at its bytes (block 2 of 4).
  put_f32(&absmax, 2, INFINITY);
  s = plain_spec(absmax, 256, 64, false);
  s.scales_offset = 1000;
  EXPECT_EQ(d.init(s), ws::Status::InvalidBlockData);
  EXPECT_EQ(d.error().offset, 1008u);
  s.validate = false;
  EXPECT_EQ(d.init(s), ws::Status::Ok);
  // Nested: a NaN nested absmax or code entry at its bytes; a non-finite offset is a bad parameter.
  std::vector<uint8_t> code(1024), nested(8), qa(300);
  put_f32(&nested, 1, NAN);
  ws::DequantSpec n;
  n.format = QuantFormat::Bnb4;
  n.elements = 300 * 64;
  n.group = 64;
  n.scale_dtype = DType::U8;
  n.scales = qa.data();
  n.nested_absmax = nested.data();
  n.nested_code = code.data();
  n.nested_group = 256;
  n.nested_absmax_offset = 2000;
  n.nested_code_offset = 3000;
  EXPECT_EQ(d.init(n), ws::Status::InvalidBlockData);
  EXPECT_EQ(d.error().offset, 2004u);
  put_f32(&nested, 1, 1.0f);
  put_f32(&code, 255, -INFINITY);
  EXPECT_EQ(d.init(n), ws::Status::InvalidBlockData);
  EXPECT_EQ(d.error().offset, 3000u + 4 * 255);
  put_f32(&code, 255, 1.0f);
  EXPECT_EQ(d.init(n), ws::Status::Ok);
  n.nested_offset = NAN;
  EXPECT_EQ(d.init(n), ws::Status::InvalidQuantParams);
  n.nested_offset = 0.0f;
  n.nested_group = 100;  // not a power of two
  EXPECT_EQ(d.init(n), ws::Status::InvalidQuantParams);
}

}  // namespace
