// Reference kernel of UQFF F8Q8 (33-byte blocks {E4M3FN d; i8 qs[32]}, value = qs * d / 448):
// mistral.rs's order, d = e4m3fn(byte) / 448 rounded once, then q * d rounded once; a NaN scale
// byte (0x7F, 0xFF) gives +NaN for the whole block, as the float8 crate's positive NaN does.
#include <gtest/gtest.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "kernel_api.h"
#include "weightstream/dequant.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// E4M3FN from the bit layout: bias 7, subnormals, S.1111.111 NaN.
float e4m3fn_value(uint8_t b) {
  int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
  return float(sign ? -v : v);
}

float expected_value(uint8_t d_byte, int8_t q) {
  if ((d_byte & 0x7F) == 0x7F) return NAN;  // positive
  volatile float d = e4m3fn_value(d_byte) / 448.0f;
  return float(q) * d;
}

std::vector<float> decode(const std::vector<uint8_t>& in, ws::Status* st) {
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::F8Q8;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = in.size() / 33 * 32;
  std::vector<float> out(spec.elements, -1.0f);
  ws::Error err;
  *st = ws::dequantize(spec, in.data(), in.size(), out.data(), out.size() * 4, &err);
  return out;
}

TEST(RefF8Q8, EveryScaleByteTimesEveryInt8) {
  // 256 x 8 blocks: scale byte b is followed by 8 blocks whose int8 values run from -128 to 127.
  std::vector<uint8_t> in(256 * 8 * 33);
  for (int b = 0; b < 256; ++b)
    for (int k = 0; k < 8; ++k) {
      uint8_t* blk = &in[(b * 8 + k) * 33];
      blk[0] = uint8_t(b);
      for (int j = 0; j < 32; ++j) blk[1 + j] = uint8_t(int8_t(k * 32 + j - 128));
    }
  ws::Status st;
  std::vector<float> got = decode(in, &st);
  ASSERT_EQ(st, ws::Status::Ok);
  size_t bad = 0;
  for (int b = 0; b < 256; ++b)
    for (int i = 0; i < 256; ++i) {
      float e = expected_value(uint8_t(b), int8_t(i - 128)), g = got[b * 256 + i];
      bool same = isnan(e) ? isnan(g) && !signbit(g) : bits_of(e) == bits_of(g);
      if (!same && ++bad <= 4) ADD_FAILURE() << "scale byte " << b << " q " << i - 128 << ": expected " << e << " got " << g;
    }
  EXPECT_EQ(bad, 0u);
}

TEST(RefF8Q8, HandComputedBlocks) {
  std::vector<uint8_t> in(3 * 33, 0);
  // Block 0: d = 0x7E = 448 -> d / 448 = 1: the values are the integers.
  in[0] = 0x7E;
  const int8_t qs[4] = {-128, -1, 1, 127};
  for (int j = 0; j < 4; ++j) in[1 + j] = uint8_t(qs[j]);
  // Block 1: d = 0xB8 = -1.0 -> -1/448 (rounded): q = 2 gives -2 * fl(1/448).
  in[33] = 0xB8;
  in[34] = 2;
  // Block 2: d = 0xFF (E4M3FN NaN, sign set): +NaN everywhere.
  in[66] = 0xFF;
  in[67] = 5;
  ws::Status st;
  std::vector<float> got = decode(in, &st);
  ASSERT_EQ(st, ws::Status::Ok);
  EXPECT_EQ(got[0], -128.0f);
  EXPECT_EQ(got[1], -1.0f);
  EXPECT_EQ(got[2], 1.0f);
  EXPECT_EQ(got[3], 127.0f);
  EXPECT_EQ(bits_of(got[4]), 0u);  // q = 0: +0 * 1
  volatile float inv448 = 1.0f / 448.0f;
  EXPECT_EQ(got[32], 2.0f * -inv448);
  EXPECT_EQ(bits_of(got[33]), 0x80000000u);  // q = 0 times a negative d: -0
  for (int j = 0; j < 32; ++j) EXPECT_EQ(bits_of(got[64 + j]), 0x7FC00000u) << j;
}

// q * (d / 448) is not (q * d) / 448: every (scale byte, int8) pair is in the first test, and some
// round differently in the other order, so that test would catch a kernel that divided last.
TEST(RefF8Q8, DividingLastGivesOtherBits) {
  size_t differs = 0;
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;
    for (int q = -128; q < 128; ++q) {
      volatile float prod = float(q) * e4m3fn_value(uint8_t(b));
      if (bits_of(expected_value(uint8_t(b), int8_t(q))) != bits_of(prod / 448.0f)) ++differs;
    }
  }
  EXPECT_GT(differs, 0u);
}

// mistral.rs pads the flattened weight to whole 32-value blocks (f8q8 `from_weight`) and drops
// the decoded tail (`dequantize`: output[..n]): ceil(elements / 32) blocks are read, the values
// past `elements` never written. Until issue #14 the Dequantizer refused such counts (the test
// asserted InvalidQuantParams for 48 elements); upstream writes them for any layer whose element
// count is not a multiple of 32.
TEST(RefF8Q8, PaddedLastBlockReadsWholeBlocks) {
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::F8Q8;
  for (uint64_t elements : {1ull, 31ull, 33ull, 48ull, 60ull, 64ull}) {
    spec.elements = elements;
    ws::Dequantizer d;
    ASSERT_EQ(d.init(spec), ws::Status::Ok) << elements;
    EXPECT_EQ(d.input_bytes(), (elements + 31) / 32 * 33) << elements;
  }
  // Other block formats still hold whole blocks of the tensor's values.
  spec.format = ws::QuantFormat::Q8_0;
  spec.elements = 48;
  ws::Dequantizer q;
  EXPECT_EQ(q.init(spec), ws::Status::InvalidQuantParams);
}

// Every chunking of the input, output buffers from the tail's exact size up, f32 and f16, both
// kernels: the first `elements` values of the padded blocks, and not one byte written past them.
TEST(RefF8Q8, PaddedLastBlockDropsItsTailInEveryChunking) {
  for (uint64_t elements : {1ull, 20ull, 60ull, 95ull}) {
    const uint64_t blocks = (elements + 31) / 32;
    std::vector<uint8_t> in(blocks * 33);
    for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 37 + 11);
    for (uint64_t b = 0; b < blocks; ++b) in[b * 33] = uint8_t(0x30 + b * 5);  // finite scales
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16}) {
      const size_t vb = out == ws::OutType::F32 ? 4 : 2;
      for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
        // in pieces: whole, 1 byte, 7 bytes; output room: the whole tensor, one block, the tail only
        for (size_t piece : {in.size(), size_t(1), size_t(7)}) {
          for (size_t room : {size_t(elements * vb), size_t(32 * vb), size_t((elements - (blocks - 1) * 32) * vb)}) {
            ws::DequantSpec spec;
            spec.format = ws::QuantFormat::F8Q8;
            spec.elements = elements;
            spec.out = out;
            spec.impl = impl;
            ws::Dequantizer d;
            ASSERT_EQ(d.init(spec), ws::Status::Ok);
            std::vector<uint8_t> got;
            std::vector<uint8_t> buf(room + 64, 0xAB);  // a canary past the room given
            size_t at = 0;
            bool stuck = false;
            while (at < in.size() && !stuck) {
              const size_t n = std::min(piece, in.size() - at);
              size_t used = 0;
              while (used < n) {
                size_t in_used = 0, out_bytes = 0;
                const ws::Status st = d.decode(in.data() + at + used, n - used, &in_used, buf.data(), room, &out_bytes);
                if (st == ws::Status::OutputTooSmall) {  // a room below a whole block before the last
                  ASSERT_LT(room, 32 * vb);
                  stuck = true;
                  break;
                }
                ASSERT_EQ(st, ws::Status::Ok);
                for (size_t k = room; k < buf.size(); ++k) ASSERT_EQ(buf[k], 0xAB) << "written past the room";
                got.insert(got.end(), buf.begin(), buf.begin() + out_bytes);
                if (in_used == 0 && out_bytes == 0) break;
                used += in_used;
              }
              at += n;
            }
            if (stuck) {
              EXPECT_GT(blocks, 1u);  // only a tensor with whole blocks before its tail
              continue;
            }
            EXPECT_TRUE(d.done()) << elements;
            ASSERT_EQ(got.size(), elements * vb) << elements << " piece " << piece << " room " << room;
            for (uint64_t i = 0; i < elements; ++i) {
              const float e = expected_value(in[i / 32 * 33], int8_t(in[i / 32 * 33 + 1 + i % 32]));
              if (out == ws::OutType::F32) {
                float g;
                memcpy(&g, &got[i * 4], 4);
                ASSERT_EQ(bits_of(g), bits_of(e)) << elements << " [" << i << "]";
              } else {
                uint16_t h;
                memcpy(&h, &got[i * 2], 2);
                ASSERT_EQ(h, ws::f32_to_f16(e)) << elements << " [" << i << "]";
              }
            }
          }
        }
      }
    }
  }
}

// The one-shot call: the stored bytes of ceil(elements / 32) blocks, room for `elements` values.
TEST(RefF8Q8, OneShotPaddedTensor) {
  std::vector<uint8_t> in(2 * 33, 0);
  in[0] = 0x7E;  // 448 / 448 = 1
  in[33] = 0x7E;
  for (int j = 0; j < 32; ++j) in[1 + j] = uint8_t(j), in[34 + j] = uint8_t(100 + j);
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::F8Q8;
  spec.elements = 40;
  std::vector<float> out(40);
  ws::Error err;
  ASSERT_EQ(ws::dequantize(spec, in.data(), in.size(), out.data(), out.size() * 4, &err), ws::Status::Ok);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], float(i));
  for (int i = 32; i < 40; ++i) EXPECT_EQ(out[i], float(100 + i - 32));
  // 40 values take two blocks: one block's bytes are too few.
  EXPECT_EQ(ws::dequantize(spec, in.data(), 33, out.data(), out.size() * 4, &err), ws::Status::InvalidQuantParams);
}

}  // namespace
