// Hand-built GGML blocks for the reference kernels: the validation policy (inf/NaN fp16 scales
// and E8M0 0xFF rejected at the exact byte of the field, decoded when validation is off), BitNet
// I2_S (no ggml vector exists for it), IQ1_M's scattered super-scale, and a few values worked out
// by hand from the block layouts.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <string>
#include <vector>

#include "kernel_api.h"
#include "kernel_test_util.h"
#include "reference/ggml_blocks.h"
#include "weightstream/dequant.h"

namespace {

using kernel_test::Pieces;

constexpr uint64_t kBase = 100000;  // the tensor's file offset in these tests

std::vector<uint8_t> first_blocks(const char* label, size_t n_blocks, size_t block_bytes) {
  std::vector<uint8_t> all = kernel_test::load_shared(std::string("testdata/vectors/ggml/") + label + ".blocks.bin");
  EXPECT_GE(all.size(), n_blocks * block_bytes);
  all.resize(n_blocks * block_bytes);
  return all;
}

ws::DequantSpec spec_for(ws::QuantFormat f, size_t n_blocks, bool validate) {
  ws::DequantSpec spec;
  spec.format = f;
  spec.impl = ws::KernelImpl::Reference;
  spec.elements = uint64_t(n_blocks) * ws::quant_format_info(f).block_elems;
  spec.validate = validate;
  spec.input_offset = kBase;
  return spec;
}

// Feeds `blocks` (as `pieces` cuts them) and returns the first failing status and its offset.
ws::Status decode_status(const ws::DequantSpec& spec, const std::vector<uint8_t>& blocks, size_t piece,
                         uint64_t* offset) {
  ws::Dequantizer d;
  EXPECT_EQ(d.init(spec), ws::Status::Ok);
  std::vector<uint8_t> out(size_t(spec.elements) * 4);
  size_t fed = 0, written = 0;
  while (fed < blocks.size()) {
    size_t n = std::min(piece, blocks.size() - fed), used = 0, w = 0;
    ws::Status s = d.decode(blocks.data() + fed, n, &used, out.data() + written, out.size() - written, &w);
    if (s != ws::Status::Ok) {
      *offset = d.error().offset;
      // The error sticks: later calls report it again.
      EXPECT_EQ(d.decode(blocks.data() + fed, n, &used, out.data(), out.size(), &w), s);
      return s;
    }
    fed += used;
    written += w;
  }
  return ws::Status::Ok;
}

std::vector<float> decode_f32(const ws::DequantSpec& spec, const std::vector<uint8_t>& blocks) {
  return kernel_test::as_floats(kernel_test::decode_in_pieces(spec, blocks.data(), blocks.size(), Pieces()));
}

void put16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

// ---------------------------------------------------------------------------------------------
// Validation: ggml's row validation rejects fp16 scales that are inf or NaN (and MXFP4's E8M0
// 0xFF); the Dequantizer reports InvalidBlockData at the absolute offset of the bad field.

struct BadField {
  const char* label;
  ws::QuantFormat format;
  size_t block;       // which block of the tensor is corrupted
  size_t field;       // byte offset of the fp16 field inside the block
  uint16_t pattern;   // inf or NaN
};

void PrintTo(const BadField& c, std::ostream* os) { *os << c.label << "+" << c.field; }

const BadField kBadFields[] = {
    {"Q4_0", ws::QuantFormat::Q4_0, 2, 0, 0x7C00},    // d = +inf
    {"Q4_0", ws::QuantFormat::Q4_0, 0, 0, 0xFE00},    // d = -NaN, in the very first block
    {"Q4_1", ws::QuantFormat::Q4_1, 3, 2, 0x7E00},    // m = NaN: the second field counts too
    {"Q4_K", ws::QuantFormat::Q4_K, 1, 0, 0xFC00},    // d = -inf
    {"Q4_K", ws::QuantFormat::Q4_K, 2, 2, 0x7C01},    // dmin = signaling NaN
    {"Q2_K", ws::QuantFormat::Q2_K, 1, 80, 0x7C00},   // d sits after the quants in K-blocks
    {"Q6_K", ws::QuantFormat::Q6_K, 1, 208, 0x7C00},
    {"TQ1_0", ws::QuantFormat::TQ1_0, 1, 52, 0x7C00},
    {"IQ2_XXS", ws::QuantFormat::IQ2_XXS, 1, 0, 0x7C00},
};

class RefGgmlValidation : public ::testing::TestWithParam<BadField> {};

TEST_P(RefGgmlValidation, NonFiniteScaleIsRejectedAtItsByte) {
  const BadField& c = GetParam();
  const uint32_t bb = ws::quant_format_info(c.format).block_bytes;
  std::vector<uint8_t> blocks = first_blocks(c.label, 4, bb);
  put16(&blocks[c.block * bb + c.field], c.pattern);
  const uint64_t want = kBase + c.block * bb + c.field;
  for (size_t piece : {blocks.size(), size_t(1), size_t(bb - 1)}) {  // whole, and through the carry
    SCOPED_TRACE(piece);
    uint64_t offset = 0;
    EXPECT_EQ(decode_status(spec_for(c.format, 4, true), blocks, piece, &offset), ws::Status::InvalidBlockData);
    EXPECT_EQ(offset, want);
  }
  uint64_t offset = 0;
  EXPECT_EQ(decode_status(spec_for(c.format, 4, false), blocks, blocks.size(), &offset), ws::Status::Ok);
}

INSTANTIATE_TEST_SUITE_P(Fields, RefGgmlValidation, ::testing::ValuesIn(kBadFields));

// Every fp16 pattern as Q4_1's m (the second field) in the last of 8 blocks: rejected exactly when
// its exponent is all ones, at its byte. The Dequantizer first ORs a bit per scale over the whole
// run (no branch per block) and only then looks for the offender; this checks that pass against
// the definition for all 65536 values, both signs, next to the 0x7BFF / 0x7C00 edge.
TEST(RefGgmlValidation, EveryHalfPatternIsJudgedByItsExponent) {
  std::vector<uint8_t> blocks = first_blocks("Q4_1", 8, 20);
  const uint64_t at = kBase + 7 * 20 + 2;
  int rejected = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    put16(&blocks[7 * 20 + 2], uint16_t(h));
    uint64_t offset = 0;
    const ws::Status s = decode_status(spec_for(ws::QuantFormat::Q4_1, 8, true), blocks, blocks.size(), &offset);
    const bool inf_or_nan = (h & 0x7C00) == 0x7C00;
    ASSERT_EQ(s, inf_or_nan ? ws::Status::InvalidBlockData : ws::Status::Ok) << std::hex << h;
    if (inf_or_nan) {
      ASSERT_EQ(offset, at) << std::hex << h;
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, 2 * 1024);  // exponent 31: 1024 mantissas x 2 signs
}

TEST(RefGgmlValidation, Q4_0InfScaleDecodesWhenValidationIsOff) {
  // d = +inf: (q - 8)·inf is ±inf, and NaN where q = 8 (0·inf). Block 1 stays as ggml decodes it.
  std::vector<uint8_t> blocks = first_blocks("Q4_0", 2, 18);
  put16(&blocks[0], 0x7C00);
  for (int j = 0; j < 16; ++j) blocks[2 + j] = uint8_t(j | ((15 - j) << 4));  // every nibble, both halves
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::Q4_0, 2, false), blocks);
  ASSERT_EQ(y.size(), 64u);
  for (int j = 0; j < 32; ++j) {
    const int q = j < 16 ? j : 15 - (j - 16);
    SCOPED_TRACE(j);
    if (q == 8) {
      EXPECT_TRUE(isnan(y[j]));
    } else {
      EXPECT_TRUE(isinf(y[j]));
      EXPECT_EQ(signbit(y[j]), q < 8);
    }
  }
  std::vector<float> expected = kernel_test::as_floats(kernel_test::load_shared("testdata/vectors/ggml/Q4_0.f32.bin"));
  EXPECT_TRUE(kernel_test::floats_identical(y.data() + 32, expected.data() + 32, 32));
}

TEST(RefGgmlValidation, Q4_KNaNDminDecodesWhenValidationIsOff) {
  // dmin = NaN: every value is d·sc·q - NaN = NaN; the NaN's sign is dmin's (the product's sign
  // does not matter: x - NaN keeps the NaN operand).
  std::vector<uint8_t> blocks = first_blocks("Q4_K", 1, 144);
  put16(&blocks[2], 0x7E00);
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::Q4_K, 1, false), blocks);
  ASSERT_EQ(y.size(), 256u);
  for (float v : y) {
    ASSERT_TRUE(isnan(v));
    ASSERT_FALSE(signbit(v));
  }
}

TEST(RefGgmlValidation, Mxfp4E8m0AllOnesIsRejected) {
  // MXFP4_edge: block i has E8M0 byte i; block 255 is the first 0xFF.
  std::vector<uint8_t> blocks = first_blocks("MXFP4_edge", 256, 17);
  uint64_t offset = 0;
  for (size_t piece : {blocks.size(), size_t(1), size_t(5)}) {
    SCOPED_TRACE(piece);
    EXPECT_EQ(decode_status(spec_for(ws::QuantFormat::MXFP4, 256, true), blocks, piece, &offset),
              ws::Status::InvalidBlockData);
    EXPECT_EQ(offset, kBase + 255 * 17);
  }
  // Validation off: ggml's output, 2^127·F (±2^127 for F = ±1, ±inf from F = ±2 on).
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::MXFP4, 256, false), blocks);
  std::vector<float> expected =
      kernel_test::as_floats(kernel_test::load_shared("testdata/vectors/ggml/MXFP4_edge.f32.bin"));
  ASSERT_EQ(y.size(), expected.size());
  EXPECT_TRUE(kernel_test::floats_identical(y.data(), expected.data(), y.size()));
  // A hand check of the last block: code 1 (+1) and 9 (-1) give ±2^127, code 2 (+2) gives +inf.
  const uint8_t* last = &blocks[255 * 17];
  ASSERT_EQ(last[0], 0xFF);
  int checked = 0;
  for (int j = 0; j < 32; ++j) {
    const int code = j < 16 ? (last[1 + j] & 15) : (last[1 + j - 16] >> 4);
    const float v = y[255 * 32 + j];
    if (code == 1) {
      EXPECT_EQ(v, ldexpf(1.0f, 127));
      ++checked;
    } else if (code == 9) {
      EXPECT_EQ(v, -ldexpf(1.0f, 127));
      ++checked;
    } else if (code == 2) {
      EXPECT_EQ(v, INFINITY);
      ++checked;
    }
  }
  EXPECT_GE(checked, 3);  // the edge set uses every code in every block
}

TEST(RefGgmlValidation, ValidBlocksPassWithValidationOn) {
  // The random vectors are valid data: validation must not reject any of them (subnormal and
  // negative scales included: block 1 of each has the smallest subnormal).
  for (const char* label : {"Q4_0", "Q5_1", "Q2_K", "Q6_K", "IQ4_XS", "TQ2_0", "Q1_0"}) {
    SCOPED_TRACE(label);
    ws::QuantFormat f;
    ASSERT_TRUE(ws::quant_format_from_name(label, &f));
    const uint32_t bb = ws::quant_format_info(f).block_bytes;
    std::vector<uint8_t> blocks = first_blocks(label, 8, bb);
    uint64_t offset = 0;
    EXPECT_EQ(decode_status(spec_for(f, 8, true), blocks, 3, &offset), ws::Status::Ok);
  }
}

// ---------------------------------------------------------------------------------------------
// IQ1_M: the fp16 super-scale is assembled from the top nibbles of the four scales words.

TEST(RefGgmlIq1m, SuperScaleComesFromTheTopNibbles) {
  // README §4: block 0 of the IQ1_M vector has super-scale 1.0 (0x3C00), block 1 the smallest
  // subnormal (0x0001).
  std::vector<uint8_t> blocks = first_blocks("IQ1_M", 2, 56);
  EXPECT_EQ(ws::kernels::ggml::iq1m_super_scale(&blocks[0]), 0x3C00);
  EXPECT_EQ(ws::kernels::ggml::iq1m_super_scale(&blocks[56]), 0x0001);

  // Hand-built: nibble k of the fp16 in the top nibble of word k; the low 12 bits are sub-scales
  // and must not leak in.
  uint8_t block[56] = {};
  put16(block + 48, 0xD123);  // nibble 0 = 0xD
  put16(block + 50, 0xCFFF);  // nibble 1 = 0xC
  put16(block + 52, 0x7000);  // nibble 2 = 0x7
  put16(block + 54, 0xB555);  // nibble 3 = 0xB
  EXPECT_EQ(ws::kernels::ggml::iq1m_super_scale(block), 0xB7CD);
}

TEST(RefGgmlIq1m, HandDecodedGroup) {
  // One IQ1_M block with super-scale 2.0 (0x4000), every grid code 0 (the all -1 point), all
  // sub-scales 0 (dl = d), delta +1/8 except group 1 of sub-block 0 (bit 7 of qh[0]: -1/8), and
  // sub-block 0's second scale 1 (dl = 3d for its groups 2-3).
  uint8_t block[56] = {};
  const uint16_t fp16 = 0x4000;
  for (int k = 0; k < 4; ++k) put16(block + 48 + 2 * k, uint16_t(((fp16 >> (4 * k)) & 0xF) << 12));
  block[48] |= 1 << 3;  // word 0, bits 3..5: sub-block 0's second scale
  block[32] = 0x80;     // qh[0] bit 7: group 1 delta negative
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::IQ1_M, 1, true), std::vector<uint8_t>(block, block + 56));
  ASSERT_EQ(y.size(), 256u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(y[k], 2.0f * (-1.0f + 0.125f));        // group 0: d·(g + 1/8)
    EXPECT_EQ(y[8 + k], 2.0f * (-1.0f - 0.125f));    // group 1: delta -1/8
    EXPECT_EQ(y[16 + k], 6.0f * (-1.0f + 0.125f));   // groups 2-3: dl = 3d
    EXPECT_EQ(y[24 + k], 6.0f * (-1.0f + 0.125f));
    EXPECT_EQ(y[32 + k], 2.0f * (-1.0f + 0.125f));   // sub-block 1: back to dl = d
  }
}

// ---------------------------------------------------------------------------------------------
// BitNet I2_S: value j of each 128-value group is in byte j%32 at shift 6 - 2·(j/32);
// y = (code - 1)·scale, code 3 → +2·scale (see ggml_ternary_quants.cpp for why).

ws::DequantSpec i2s_spec(size_t groups, float scale) {
  ws::DequantSpec spec = spec_for(ws::QuantFormat::I2_S, groups, true);
  spec.has_global_scale = true;
  spec.global_scale = scale;
  return spec;
}

TEST(RefI2S, CodesAtKnownPositions) {
  const float s = 0.75f;
  uint8_t g[32];
  memset(g, 0x55, sizeof g);  // 01 01 01 01: every code 1, zeros
  g[0] = 0x25;   // 00 10 01 01: element 0 code 0, element 32 code 2, elements 64 and 96 code 1
  g[31] = 0x57;  // 01 01 01 11: elements 31, 63, 95 code 1, element 127 code 3
  g[5] = 0x1B;   // 00 01 10 11: elements 5, 37, 69, 101 codes 0, 1, 2, 3
  std::vector<float> want(128, 0.0f);
  want[0] = -0.75f;
  want[32] = 0.75f;
  want[127] = 1.5f;
  want[5] = -0.75f;
  want[37] = 0.0f;
  want[69] = 0.75f;
  want[101] = 1.5f;
  std::vector<float> y = decode_f32(i2s_spec(1, s), std::vector<uint8_t>(g, g + 32));
  ASSERT_EQ(y.size(), 128u);
  EXPECT_TRUE(kernel_test::floats_identical(y.data(), want.data(), 128));
  EXPECT_FALSE(signbit(y[1]));  // code 1 with a positive scale is +0
}

TEST(RefI2S, GroupsFollowEachOtherAndPiecesDoNotMatter) {
  // Three groups of random codes against a decoder written from the layout rule, element by
  // element, fed whole and in 1-byte pieces.
  kernel_test::Rng rng(42);
  std::vector<uint8_t> data(3 * 32);
  rng.fill(data.data(), data.size());
  const float s = 1.25f;
  std::vector<float> want(3 * 128);
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t group = i / 128, j = i % 128;
    const int code = (data[group * 32 + j % 32] >> (6 - 2 * (j / 32))) & 3;
    const float table[4] = {-1.25f, 0.0f, 1.25f, 2.5f};
    want[i] = table[code];
  }
  for (size_t piece : {size_t(0), size_t(1)}) {
    Pieces p;
    if (piece) {
      p.kind = Pieces::Fixed;
      p.size = piece;
    }
    std::vector<float> y = kernel_test::as_floats(kernel_test::decode_in_pieces(i2s_spec(3, s), data.data(), data.size(), p));
    EXPECT_TRUE(kernel_test::floats_identical(y.data(), want.data(), want.size()));
  }
}

TEST(RefI2S, NeedsTheTensorScale) {
  ws::DequantSpec spec = spec_for(ws::QuantFormat::I2_S, 1, true);
  ws::Dequantizer d;
  EXPECT_EQ(d.init(spec), ws::Status::InvalidQuantParams);
  ws::QuantFormat f;
  ASSERT_TRUE(ws::quant_format_from_ggml(ws::kGgmlTypeI2S, ws::GgmlDialect::BitNet, &f));
  EXPECT_EQ(f, ws::QuantFormat::I2_S);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed values from the block layouts (complementing the ggml vectors: these pin the
// element order with values one can check on paper).

TEST(RefGgmlHand, Q5_0FifthBitOrder) {
  // d = 0.5; qs[j] = 0x00; qh bit j set only for j = 3 (low half) and j = 16 + 5 (high half):
  // y[3] = (16 - 16)·0.5 = 0, y[21] = 0, every other value (0 - 16)·0.5 = -8.
  uint8_t b[22] = {};
  put16(b, 0x3800);
  const uint32_t qh = (1u << 3) | (1u << 21);
  for (int k = 0; k < 4; ++k) b[2 + k] = uint8_t(qh >> (8 * k));
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::Q5_0, 1, true), std::vector<uint8_t>(b, b + 22));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j == 3 || j == 21) ? 0.0f : -8.0f) << j;
}

TEST(RefGgmlHand, Q8_KRoundsOnce) {
  // d = 0.1f (not a short binary fraction), q = 3: d·q rounded once in f32.
  uint8_t b[292] = {};
  const float d = 0.1f;
  memcpy(b, &d, 4);
  b[4] = 3;
  b[5] = uint8_t(-128);
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::Q8_K, 1, true), std::vector<uint8_t>(b, b + 292));
  volatile float three = 3.0f, m128 = -128.0f;  // keep the products at run time, as the kernel does
  EXPECT_EQ(y[0], d * three);
  EXPECT_EQ(y[1], d * m128);
  EXPECT_EQ(y[2], 0.0f);
}

TEST(RefGgmlHand, Tq1_0TritOrder) {
  // Byte 243·t/243 encodings: the byte for trits (t0..t4) = ceil(256·T/243), T = Σ t_n·3^(4-n).
  // qs[0] encodes trits 2,0,1,1,2 → values 0, 32, 64, 96, 128 are +d, -d, 0, 0, +d.
  const int trits[5] = {2, 0, 1, 1, 2};
  int T = 0;
  for (int n = 0; n < 5; ++n) T = T * 3 + trits[n];
  uint8_t b[54];
  memset(b, 0, sizeof b);
  // Everything else: byte 0 decodes to trits 0 (-d); fine for the check below.
  b[0] = uint8_t((256 * T + 242) / 243);
  put16(b + 52, 0x4000);  // d = 2
  std::vector<float> y = decode_f32(spec_for(ws::QuantFormat::TQ1_0, 1, true), std::vector<uint8_t>(b, b + 54));
  const float want[5] = {2.0f, -2.0f, 0.0f, 0.0f, 2.0f};
  for (int n = 0; n < 5; ++n) EXPECT_EQ(y[32 * n], want[n]) << n;
  EXPECT_EQ(y[1], -2.0f);  // a zero byte is five 0-trits
}

}  // namespace

namespace {

// IQ1_M's super-scale and Q8_K's f32 d are validated too (the per-format block check).
TEST(GgmlBlockValidationHook, Iq1mSuperScaleAndQ8kD) {
  // IQ1_M: a block whose four scale words carry an fp16 inf (0x7C00) in their top nibbles.
  std::vector<uint8_t> iq1m(56, 0);
  const uint16_t inf = 0x7C00;
  for (int w = 0; w < 4; ++w) {
    uint16_t word = uint16_t(((inf >> (4 * w)) & 0xF) << 12);
    iq1m[48 + 2 * w] = uint8_t(word);
    iq1m[48 + 2 * w + 1] = uint8_t(word >> 8);
  }
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::IQ1_M;
  spec.elements = 256;
  spec.input_offset = 1000;
  std::vector<float> out(256);
  ws::Error err;
  EXPECT_EQ(ws::dequantize(spec, iq1m.data(), iq1m.size(), out.data(), out.size() * 4, &err),
            ws::Status::InvalidBlockData);
  EXPECT_EQ(err.offset, 1048u);
  spec.validate = false;
  EXPECT_EQ(ws::dequantize(spec, iq1m.data(), iq1m.size(), out.data(), out.size() * 4, &err), ws::Status::Ok);

  // Q8_K: d = NaN (f32 0x7FC00000) at byte 0.
  std::vector<uint8_t> q8k(292, 0);
  q8k[2] = 0xC0;
  q8k[3] = 0x7F;
  ws::DequantSpec k;
  k.format = ws::QuantFormat::Q8_K;
  k.elements = 256;
  EXPECT_EQ(ws::dequantize(k, q8k.data(), q8k.size(), out.data(), out.size() * 4, &err),
            ws::Status::InvalidBlockData);
  EXPECT_EQ(err.offset, 0u);
}

}  // namespace
