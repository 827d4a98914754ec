// QuantFormat::Fp8Block (the Hub's block-scaled FP8, lib/src/kernels/fp8_block.h): the reference
// kernel against weight_dequant's formula written out here (y = f32(x) * s[r / br][c / bc] over a
// ceil grid), SIMD128 against the reference bit for bit (f32 and f16, every NaN included), every
// chunking of the input and of the output, and the Dequantizer's checks of the spec and scales.
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

float e4m3fn(uint8_t b) {
  if ((b & 0x7F) == 0x7F) return (b & 0x80) ? -NAN : NAN;
  const int e = (b >> 3) & 0xF, m = b & 7;
  const float v = e == 0 ? ldexpf(float(m), -9) : ldexpf(1.0f + float(m) / 8.0f, e - 7);
  return (b & 0x80) ? -v : v;
}
float e5m2(uint8_t b) {
  const int e = (b >> 2) & 0x1F, m = b & 3;
  float v = e == 0 ? ldexpf(float(m), -16) : e == 31 ? (m ? NAN : INFINITY) : ldexpf(1.0f + float(m) / 4.0f, e - 15);
  return (b & 0x80) ? -v : v;
}
float scale_value(const std::vector<uint8_t>& s, DType dt, size_t i) {
  switch (dt) {
    case DType::F32: {
      float v;
      memcpy(&v, s.data() + 4 * i, 4);
      return v;
    }
    case DType::BF16: {
      const uint32_t u = uint32_t(s[2 * i] | s[2 * i + 1] << 8) << 16;
      float v;
      memcpy(&v, &u, 4);
      return v;
    }
    case DType::F16: return ws::f16_to_f32(uint16_t(s[2 * i] | s[2 * i + 1] << 8));
    default: return s[i] == 0xFF ? NAN : ldexpf(1.0f, int(s[i]) - 127);
  }
}
uint32_t scale_size(DType dt) { return dt == DType::F32 ? 4 : dt == DType::BF16 || dt == DType::F16 ? 2 : 1; }

struct Geometry {
  uint64_t rows, cols, br, bc;
};

struct Tensor {
  ws::DequantSpec spec;
  std::vector<uint8_t> q, scales;
};

// Random FP8 bytes (NaNs included) and finite random scales of `dt` over a ceil grid.
Tensor make(const Geometry& g, DType dt, DType elem, uint64_t seed) {
  Rng rng(seed);
  Tensor t;
  t.q.resize(g.rows * g.cols);
  rng.fill(t.q.data(), t.q.size());
  const uint64_t grid = ((g.rows + g.br - 1) / g.br) * ((g.cols + g.bc - 1) / g.bc);
  t.scales.resize(grid * scale_size(dt));
  for (uint64_t i = 0; i < grid; ++i) {
    uint8_t* p = t.scales.data() + i * scale_size(dt);
    if (dt == DType::F32) {
      const float v = ldexpf(float(int(rng.below(2000)) - 1000) / 997.0f, int(rng.below(40)) - 20);
      memcpy(p, &v, 4);
    } else if (dt == DType::BF16 || dt == DType::F16) {
      const float v = ldexpf(float(int(rng.below(200)) - 100) / 64.0f, int(rng.below(10)) - 5);
      const uint16_t h = dt == DType::F16 ? ws::f32_to_f16(v) : uint16_t([&] {
        uint32_t u;
        memcpy(&u, &v, 4);
        return u >> 16;
      }());
      memcpy(p, &h, 2);
    } else {
      *p = uint8_t(100 + rng.below(50));
    }
  }
  ws::DequantSpec& s = t.spec;
  s.format = QuantFormat::Fp8Block;
  s.elements = g.rows * g.cols;
  s.scale_dtype = dt;
  s.element_dtype = elem;
  s.row_elems = g.cols;
  s.block_rows = g.br;
  s.block_cols = g.bc;
  s.scales = t.scales.data();
  return t;
}

std::vector<float> formula(const Tensor& t, const Geometry& g) {
  std::vector<float> y;
  const uint64_t gc = (g.cols + g.bc - 1) / g.bc;
  for (uint64_t r = 0; r < g.rows; ++r)
    for (uint64_t c = 0; c < g.cols; ++c) {
      const uint8_t b = t.q[r * g.cols + c];
      const float x = t.spec.element_dtype == DType::F8_E5M2 ? e5m2(b) : e4m3fn(b);
      y.push_back(x * scale_value(t.scales, t.spec.scale_dtype, (r / g.br) * gc + c / g.bc));
    }
  return y;
}

const Geometry kGeometries[] = {
    {6, 8, 4, 4},        // the DeepSeek-V3 layout, scaled: a ragged row grid
    {7, 12, 3, 5},       // ragged in both dimensions; unit 1 (5 is odd)
    {130, 256, 128, 128},  // 128 x 128 blocks, a ragged last row block
    {3, 200, 3, 200},    // per tensor: one block of the whole weight (unit 8)
    {5, 96, 1, 96},      // per channel
    {2, 1024, 2, 1024},  // per tensor, unit 256
    {9, 48, 2, 16},      // unit 16
};

std::string name_of(const Geometry& g, DType dt, DType elem) {
  return std::to_string(g.rows) + "x" + std::to_string(g.cols) + " blocks " + std::to_string(g.br) + "x" +
         std::to_string(g.bc) + " " + ws::dtype_name(dt) + " " + ws::dtype_name(elem);
}

TEST(Fp8Block, ReferenceAndSimdAreTheFormulaInEveryChunking) {
  uint64_t seed = 1;
  for (const Geometry& g : kGeometries)
    for (DType dt : {DType::F32, DType::BF16, DType::F16, DType::F8_E8M0, DType::U8})
      for (DType elem : {DType::F8_E4M3, DType::F8_E5M2}) {
        Tensor t = make(g, dt, elem, ++seed);
        const std::vector<float> want = formula(t, g);
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
            const std::vector<uint8_t> f = kernel_test::decode_in_pieces(s, t.q.data(), t.q.size(), p);
            const std::vector<float> got = kernel_test::as_floats(f);
            ASSERT_EQ(got.size(), want.size()) << name_of(g, dt, elem);
            EXPECT_TRUE(kernel_test::floats_identical(got.data(), want.data(), want.size()))
                << name_of(g, dt, elem) << " impl " << int(impl) << " cut " << cut;
            s.out = ws::OutType::F16;
            const std::vector<uint8_t> h = kernel_test::decode_in_pieces(s, t.q.data(), t.q.size(), p);
            ASSERT_EQ(h.size(), 2 * want16.size()) << name_of(g, dt, elem);
            EXPECT_TRUE(kernel_test::halves_identical(reinterpret_cast<const uint16_t*>(h.data()), want16.data(),
                                                      want16.size()))
                << name_of(g, dt, elem) << " f16 impl " << int(impl) << " cut " << cut;
          }
      }
}

// The number: E4M3 1.0 (0x38) in a block whose scale is 5.0 decodes to 5.0.
TEST(Fp8Block, OneTimesItsBlockScale) {
  const uint8_t q[8] = {0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38};
  const float scales[2] = {5.0f, 0.5f};
  ws::DequantSpec s;
  s.format = QuantFormat::Fp8Block;
  s.elements = 8;
  s.scale_dtype = DType::F32;
  s.row_elems = 4;
  s.block_rows = 1;
  s.block_cols = 4;
  s.scales = reinterpret_cast<const uint8_t*>(scales);
  float out[8];
  ws::Error e;
  ASSERT_EQ(ws::dequantize(s, q, 8, out, sizeof out, &e), ws::Status::Ok);
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[3], 5.0f);
  EXPECT_EQ(out[4], 0.5f);
}

// f16 output at its edges, in a 16-value unit (the SIMD128 kernel rounds in registers there):
// products on the half-subnormal grid and its ties (round to even), -0, NaN, overflow to inf;
// both kernels the formula rounded as f32_to_f16, and the edges by value.
TEST(Fp8Block, HalfOutputEdgesRoundToNearestEven) {
  uint8_t q[32] = {0x01, 0x02, 0x03, 0x38, 0x80, 0x7F, 0xFF, 0x81, 0x05, 0x06, 0x07, 0x08, 0x00, 0x39, 0x3A, 0x40,
                   0x7E, 0xFE, 0x38, 0x77, 0x78, 0x7F, 0x00, 0x80, 0x01, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36};
  // Row 0: 2^-16 (E4M3's 2^-9 .. becomes 2^-25 ..); row 1: 1000 (448 * 1000 overflows).
  const float scales[2] = {ldexpf(1.0f, -16), 1000.0f};
  ws::DequantSpec s;
  s.format = QuantFormat::Fp8Block;
  s.elements = 32;
  s.scale_dtype = DType::F32;
  s.element_dtype = DType::F8_E4M3;
  s.row_elems = 16;
  s.block_rows = 1;
  s.block_cols = 16;
  s.scales = reinterpret_cast<const uint8_t*>(scales);
  s.out = ws::OutType::F16;
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    s.impl = impl;
    uint16_t out[32];
    ws::Error e;
    ASSERT_EQ(ws::dequantize(s, q, 32, out, sizeof out, &e), ws::Status::Ok);
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(out[i], ws::f32_to_f16(e4m3fn(q[i]) * scales[i / 16])) << "impl " << int(impl) << " value " << i;
    EXPECT_EQ(out[0], 0x0000);   // 2^-25: the tie between 0 and 2^-24, to even
    EXPECT_EQ(out[1], 0x0001);   // 2^-24
    EXPECT_EQ(out[2], 0x0002);   // 1.5 * 2^-24: a tie, to even
    EXPECT_EQ(out[3], 0x0100);   // 2^-16
    EXPECT_EQ(out[4], 0x8000);   // -0
    EXPECT_EQ(out[5] & 0x7E00, 0x7E00);  // NaN, quiet
    EXPECT_EQ(out[6] & 0xFE00, 0xFE00);  // -NaN
    EXPECT_EQ(out[16], 0x7C00);  // 448 * 1000: inf
    EXPECT_EQ(out[17], 0xFC00);  // -inf
    EXPECT_EQ(out[18], 0x63D0);  // 1000
  }
}

// The spec's checks (InvalidQuantParams at the tensor's offset) and, with validate, scales that
// are inf/NaN or the E8M0 NaN 0xFF (InvalidBlockData at the scale's byte).
TEST(Fp8Block, SpecAndScaleChecks) {
  Tensor t = make({4, 8, 4, 4}, DType::F32, DType::F8_E4M3, 3);
  t.spec.input_offset = 1000;
  t.spec.scales_offset = 2000;
  ws::Dequantizer d;
  ASSERT_EQ(d.init(t.spec), ws::Status::Ok);
  EXPECT_EQ(d.input_bytes(), 32u);
  auto refused = [&](ws::DequantSpec s) {
    ws::Dequantizer x;
    EXPECT_EQ(x.init(s), ws::Status::InvalidQuantParams);
    EXPECT_EQ(x.error().offset, 1000u);
  };
  ws::DequantSpec s = t.spec;
  s.block_rows = 0;
  refused(s);
  s = t.spec;
  s.block_cols = 0;
  refused(s);
  s = t.spec;
  s.row_elems = 5;  // 32 values are not rows of 5
  refused(s);
  s = t.spec;
  s.scales = nullptr;
  refused(s);
  s = t.spec;
  s.scale_dtype = DType::I32;
  refused(s);
  s = t.spec;
  s.element_dtype = DType::BF16;
  refused(s);
  // An inf F32 scale (the second) and an E8M0 0xFF.
  const float inf = INFINITY;
  memcpy(t.scales.data() + 4, &inf, 4);
  ws::Dequantizer v;
  EXPECT_EQ(v.init(t.spec), ws::Status::InvalidBlockData);
  EXPECT_EQ(v.error().offset, 2004u);
  t.spec.validate = false;
  EXPECT_EQ(v.init(t.spec), ws::Status::Ok);
  Tensor e = make({4, 8, 2, 4}, DType::F8_E8M0, DType::F8_E4M3, 4);
  e.spec.scales_offset = 50;
  e.scales[3] = 0xFF;
  EXPECT_EQ(v.init(e.spec), ws::Status::InvalidBlockData);
  EXPECT_EQ(v.error().offset, 53u);
}

}  // namespace
