// Differential test: for every format, the SIMD128 kernel gives exactly the reference kernel's
// output, decoded through the Dequantizer, for random blocks (block counts 1, 2, 7, 64, 257),
// every chunking of the input (whole, 1-byte pieces, random pieces with random output room) and
// the three output types; BF16 output is also checked to be the reference's f32 output rounded by
// ws::f32_to_bf16 (issue #29).
//
// Two kinds of input per case: "valid" (random bytes, with the scale fields that validation
// rejects forced finite, validate = true) and "raw" (all random bytes, validate = false, so inf
// and NaN scales run through the kernels). Values compare as bit patterns; NaNs compare as "is
// NaN, same sign" (payloads of NaNs made by arithmetic are the platform's business; see
// nan_sign_strict for the formats where NaN + NaN leaves even the sign to the compiler).
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernel_api.h"
#include "reference/iq_grids.h"
#include "weightstream/dequant.h"

namespace {

using ws::DType;
using ws::QuantFormat;

struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }
  void fill(uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(next());
  }
};

enum class Global { None, Mlx, Ollama, Divides };  // Divides: compressed-tensors' (global_scale_divides)

struct Case {
  QuantFormat format;
  uint32_t bits = 0, group = 0;
  DType scale_dtype = DType::BF16;
  Global global = Global::None;
};

std::string case_name(const Case& c) {
  std::string n = ws::quant_format_name(c.format);
  if (c.format == QuantFormat::MlxAffine) {
    n += "_b" + std::to_string(c.bits) + "_g" + std::to_string(c.group) + "_" +
         (c.scale_dtype == DType::F32 ? "f32" : c.scale_dtype == DType::F16 ? "f16" : "bf16");
  }
  if (c.global == Global::Mlx) n += "_mlxglobal";
  if (c.global == Global::Ollama) n += "_ollamaglobal";
  if (c.global == Global::Divides) n += "_dividingglobal";
  return n;
}

void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (uint32_t i = 0; i < ws::kQuantFormatCount; ++i) {
    Case c;
    c.format = static_cast<QuantFormat>(i);
    if (c.format == QuantFormat::Fp8Block) continue;  // 2-D scale grids: fp8_block_test.cpp
    if (c.format == QuantFormat::GptqPacked) continue;  // zeros and g_idx: gptq_packed_test.cpp
    if (c.format == QuantFormat::CtPacked) continue;  // rows of words, zero points: model_ct_hub_test.cpp
    if (c.format == QuantFormat::Bnb4) continue;      // absmax per blocksize, nested: bnb4_test.cpp
    if (c.format == QuantFormat::BnbInt8) continue;   // an SCB per row: bnb_int8_test.cpp
    if (c.format == QuantFormat::MlxAffine) {
      for (uint32_t bits : {2u, 3u, 4u, 5u, 6u, 8u})
        for (uint32_t group : {32u, 64u, 128u})
          for (DType dt : {DType::BF16, DType::F16, DType::F32}) {
            c.bits = bits;
            c.group = group;
            c.scale_dtype = dt;
            v.push_back(c);
          }
    } else if (c.format == QuantFormat::MlxNvfp4) {
      for (Global g : {Global::None, Global::Mlx, Global::Ollama, Global::Divides}) {
        c.global = g;
        v.push_back(c);
      }
    } else {
      v.push_back(c);
    }
  }
  return v;
}

// A tensor's inputs: stored bytes and, for companion formats, scales and biases.
struct Inputs {
  ws::DequantSpec spec;
  std::vector<uint8_t> data, scales, biases;
};

bool f16_finite(uint16_t h) { return (h & 0x7C00) != 0x7C00; }

// Makes a stored value of a companion dtype finite (clears one exponent bit if all are set).
void make_finite(uint8_t* p, DType dt) {
  if (dt == DType::F32) {
    if ((p[3] & 0x7F) == 0x7F && (p[2] & 0x80)) p[3] &= 0xBF;
  } else if (dt == DType::F16) {
    if ((p[1] & 0x7C) == 0x7C) p[1] &= 0xFB;
  } else {
    if ((p[1] & 0x7F) == 0x7F && (p[0] & 0x80)) p[1] &= 0xBF;
  }
}

Inputs make_inputs(const Case& c, size_t n_blocks, bool valid, uint64_t seed) {
  Rng rng{seed};
  Inputs in;
  ws::DequantSpec& s = in.spec;
  s.format = c.format;
  s.bits = c.bits;
  s.group = c.group;
  s.scale_dtype = c.scale_dtype;
  s.validate = valid;
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(c.format);
  uint32_t block_elems = e.info.block_elems, block_bytes = e.info.block_bytes;
  if (c.format == QuantFormat::MlxAffine) {
    block_elems = c.group;
    block_bytes = c.group * c.bits / 8;
  }
  s.elements = uint64_t(n_blocks) * block_elems;
  in.data.resize(n_blocks * block_bytes);
  rng.fill(in.data.data(), in.data.size());
  if (valid) {
    for (size_t b = 0; b < n_blocks; ++b) {
      uint8_t* blk = in.data.data() + b * block_bytes;
      for (uint8_t f = 0; f < e.n_fp16_fields; ++f) {
        uint16_t h = uint16_t(blk[e.fp16_fields[f]] | (blk[e.fp16_fields[f] + 1] << 8));
        if (!f16_finite(h)) blk[e.fp16_fields[f] + 1] &= 0xFB;  // exponent 31 -> 30
      }
      if (e.e8m0_field >= 0 && blk[e.e8m0_field] == 0xFF) blk[e.e8m0_field] = 0xFE;
      // Scales checked by a per-format function: Q8_K's f32 d (exponent's top bit in byte 3)
      // and IQ1_M's nibble-spread fp16 (exponent's top bit = bit 6 of byte 55).
      if (e.check_block && e.check_block(blk) >= 0) {
        if (c.format == QuantFormat::Q8_K) blk[3] &= 0xBF;
        if (c.format == QuantFormat::IQ1_M) blk[55] &= 0xBF;
      }
    }
  }
  if (e.info.companion) {
    const size_t sb = c.format == QuantFormat::MlxAffine ? (c.scale_dtype == DType::F32 ? 4 : 2) : 1;
    in.scales.resize(n_blocks * sb);
    rng.fill(in.scales.data(), in.scales.size());
    if (c.format == QuantFormat::MlxAffine) {
      in.biases.resize(n_blocks * sb);
      rng.fill(in.biases.data(), in.biases.size());
    }
    if (valid) {
      for (size_t g = 0; g < n_blocks; ++g) {
        if (c.format == QuantFormat::MlxAffine) {
          make_finite(&in.scales[g * sb], c.scale_dtype);
          make_finite(&in.biases[g * sb], c.scale_dtype);
        } else if (c.format == QuantFormat::MlxNvfp4) {
          if ((in.scales[g] & 0x7F) == 0x7F) in.scales[g] ^= 0x01;
        } else if (in.scales[g] == 0xFF) {
          in.scales[g] = 0xFE;
        }
      }
    }
    s.scales = in.scales.data();
    s.biases = in.biases.empty() ? nullptr : in.biases.data();
  }
  if (c.format == QuantFormat::I2_S || c.global != Global::None) {
    s.has_global_scale = true;
    s.global_scale_is_ollama = c.global == Global::Ollama;
    s.global_scale_divides = c.global == Global::Divides;
    uint32_t u = uint32_t(rng.next());
    if (valid) u = (u & 0x807FFFFFu) | (uint32_t(100 + rng.below(50)) << 23);  // finite, moderate
    memcpy(&s.global_scale, &u, 4);
  }
  return in;
}

enum class Chunking { Whole, Bytewise, Random };

// Decodes the whole tensor with one implementation; returns the output bytes (empty + message
// on a failure).
std::vector<uint8_t> decode(const Inputs& in, ws::KernelImpl impl, ws::OutType out, Chunking chunking, uint64_t seed,
                            std::string* err) {
  ws::DequantSpec spec = in.spec;
  spec.impl = impl;
  spec.out = out;
  ws::Dequantizer d;
  if (d.init(spec) != ws::Status::Ok) {
    *err = "init: status " + std::to_string(int(d.error().code));
    return {};
  }
  const size_t elem_bytes = ws::out_type_bytes(out);
  std::vector<uint8_t> result(spec.elements * elem_bytes, 0xA5);
  const size_t block_out = d.block_output_bytes();
  Rng rng{seed};
  size_t used = 0, written = 0;
  const size_t total = in.data.size();
  while (used < total || written < result.size()) {
    size_t piece = total - used;
    size_t cap = result.size() - written;
    if (chunking == Chunking::Bytewise) {
      piece = piece ? 1 : 0;
      cap = block_out;
    } else if (chunking == Chunking::Random) {
      if (piece) piece = 1 + rng.below(uint32_t(std::min<size_t>(piece, 3 * 300)));
      cap = block_out * (1 + rng.below(8));
    }
    if (cap < block_out) cap = block_out;  // at least one block's output (the tail may be smaller)
    cap = std::min(cap, std::max(result.size() - written, block_out));
    std::vector<uint8_t> tmp;
    uint8_t* outp = result.data() + written;
    if (result.size() - written < cap) {  // never hit: the output always holds whole blocks
      *err = "output room";
      return {};
    }
    size_t in_used = 0, out_written = 0;
    ws::Status s = d.decode(in.data.data() + used, piece, &in_used, outp, cap, &out_written);
    if (s != ws::Status::Ok) {
      *err = "decode: status " + std::to_string(int(s)) + " at " + std::to_string(d.error().offset);
      return {};
    }
    if (in_used == 0 && out_written == 0) {
      *err = "no progress at input " + std::to_string(used);
      return {};
    }
    used += in_used;
    written += out_written;
  }
  if (!d.done()) *err = "decoder not done";
  return result;
}

// Formats whose outputs add two products that can both be NaN (x·d + m: Q4_1, Q5_1; s·q + b:
// MLX affine). IEEE leaves the sign of NaN + NaN open; x86 returns the first operand, but the
// compiler may swap the operands of a commutative add, in the reference as in the SIMD code, so
// which NaN comes out depends on register allocation. For these, a NaN matches any NaN.
bool nan_sign_strict(QuantFormat f) {
  return f != QuantFormat::Q4_1 && f != QuantFormat::Q5_1 && f != QuantFormat::MlxAffine;
}

// First element where a and b differ (NaNs equal if both NaN with the same sign, or any sign when
// !strict_nan_sign); -1 if none.
long long first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, ws::OutType out,
                           bool strict_nan_sign = true) {
  if (a.size() != b.size()) return 0;
  if (out == ws::OutType::F32) {
    for (size_t i = 0; i < a.size() / 4; ++i) {
      uint32_t x, y;
      memcpy(&x, &a[4 * i], 4);
      memcpy(&y, &b[4 * i], 4);
      if (x == y) continue;
      bool xn = (x & 0x7FFFFFFFu) > 0x7F800000u, yn = (y & 0x7FFFFFFFu) > 0x7F800000u;
      if (xn && yn && (!strict_nan_sign || (x >> 31) == (y >> 31))) continue;
      return (long long)i;
    }
  } else {
    for (size_t i = 0; i < a.size() / 2; ++i) {
      uint16_t x, y;
      memcpy(&x, &a[2 * i], 2);
      memcpy(&y, &b[2 * i], 2);
      if (x == y) continue;
      const uint16_t inf = out == ws::OutType::BF16 ? 0x7F80 : 0x7C00;
      bool xn = (x & 0x7FFF) > inf, yn = (y & 0x7FFF) > inf;
      if (xn && yn && (!strict_nan_sign || (x >> 15) == (y >> 15))) continue;
      return (long long)i;
    }
  }
  return -1;
}

std::string hex_at(const std::vector<uint8_t>& v, long long i, ws::OutType out) {
  char buf[16];
  if (out == ws::OutType::F32) {
    uint32_t x;
    memcpy(&x, &v[size_t(i) * 4], 4);
    snprintf(buf, sizeof buf, "0x%08x", x);
  } else {
    uint16_t x;
    memcpy(&x, &v[size_t(i) * 2], 2);
    snprintf(buf, sizeof buf, "0x%04x", x);
  }
  return buf;
}

class SimdDifferential : public ::testing::TestWithParam<Case> {};

TEST_P(SimdDifferential, MatchesReference) {
  const Case& c = GetParam();
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(c.format);
  if (!e.reference || !e.simd128) {
    GTEST_SKIP() << case_name(c) << ": " << (e.reference ? "" : "no reference kernel ")
                 << (e.simd128 ? "" : "no SIMD128 kernel") << " (the completeness test reports it)";
  }
  const size_t kBlocks[] = {1, 2, 7, 64, 257};
  uint64_t seed = 0x5EED0000ull + uint64_t(c.format) * 1000 + c.bits * 100 + c.group + uint64_t(c.scale_dtype) * 7 +
                  uint64_t(c.global) * 3;
  for (size_t n : kBlocks) {
    for (bool valid : {true, false}) {
      ++seed;
      const Inputs in = make_inputs(c, n, valid, seed);
      for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16, ws::OutType::BF16}) {
        std::string err;
        const std::vector<uint8_t> want = decode(in, ws::KernelImpl::Reference, out, Chunking::Whole, 0, &err);
        ASSERT_EQ(err, "") << case_name(c) << " reference, " << n << " blocks";
        if (out == ws::OutType::BF16) {
          // The reference's bf16 is its f32 rounded once (BF16 as BF16: the stored halves).
          const std::vector<uint8_t> f32 = decode(in, ws::KernelImpl::Reference, ws::OutType::F32, Chunking::Whole, 0, &err);
          std::vector<uint8_t> rounded(f32.size() / 2);
          for (size_t i = 0; i < f32.size() / 4; ++i) {
            float v;
            memcpy(&v, &f32[4 * i], 4);
            uint16_t h = ws::f32_to_bf16(v);
            if (c.format == QuantFormat::BF16) memcpy(&h, &in.data[2 * i], 2);
            memcpy(&rounded[2 * i], &h, 2);
          }
          long long i = first_difference(rounded, want, out, nan_sign_strict(c.format));
          ASSERT_EQ(i, -1) << case_name(c) << ": bf16 reference element " << i << " is " << hex_at(want, i, out)
                           << ", its f32 rounded " << hex_at(rounded, i, out);
        }
        for (Chunking ch : {Chunking::Whole, Chunking::Bytewise, Chunking::Random}) {
          const std::vector<uint8_t> got = decode(in, ws::KernelImpl::Simd128, out, ch, seed * 31, &err);
          ASSERT_EQ(err, "") << case_name(c) << " simd128, " << n << " blocks, chunking " << int(ch);
          long long i = first_difference(want, got, out, nan_sign_strict(c.format));
          ASSERT_EQ(i, -1) << case_name(c) << ": " << n << " blocks, " << (valid ? "valid" : "raw") << " input, "
                           << ws::out_type_name(out) << " out, chunking " << int(ch)
                           << ": element " << i << " reference " << hex_at(want, i, out) << " simd128 "
                           << hex_at(got, i, out);
        }
      }
    }
  }
}

// One call with more than 8 MiB of output (and a 16-byte aligned destination) takes the native
// non-temporal-store path of the SIMD128 kernels (simd_util.h, run_kernel): same values.
TEST_P(SimdDifferential, LargeOutputMatchesReference) {
  const Case& c = GetParam();
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(c.format);
  if (!e.reference || !e.simd128) GTEST_SKIP() << case_name(c) << ": missing kernel";
  const uint32_t block_elems = c.format == QuantFormat::MlxAffine ? c.group : e.info.block_elems;
  const size_t blocks = ((size_t(9) << 20) / 4 + block_elems - 1) / block_elems + 3;  // > 8 MiB, odd tail
  const Inputs in = make_inputs(c, blocks, /*valid=*/false, 0xB16B10C5ull + uint64_t(c.format));
  std::string err;
  const std::vector<uint8_t> want = decode(in, ws::KernelImpl::Reference, ws::OutType::F32, Chunking::Whole, 0, &err);
  ASSERT_EQ(err, "");
  const std::vector<uint8_t> got = decode(in, ws::KernelImpl::Simd128, ws::OutType::F32, Chunking::Whole, 0, &err);
  ASSERT_EQ(err, "");
  long long i = first_difference(want, got, ws::OutType::F32, nan_sign_strict(c.format));
  ASSERT_EQ(i, -1) << case_name(c) << ": element " << i << " reference " << hex_at(want, i, ws::OutType::F32)
                   << " simd128 " << hex_at(got, i, ws::OutType::F32);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, SimdDifferential, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// The SIMD128 IQ2/IQ3 kernels apply signs to the integer grid value (db * -g) where the reference
// multiplies by -1.0f afterwards ((db * g) * -1); that is bit-identical only while no grid element
// is 0 (a zero would give +0 instead of -0). The grids are format facts; this pins the premise.
TEST(KernelTable, IqSignedGridsHaveNoZeroElement) {
  using namespace ws::kernels;
  size_t zeros = 0;
  for (uint64_t p : kIq2xxsGrid)
    for (int k = 0; k < 8; ++k) zeros += grid_u8(p, k) == 0;
  for (uint64_t p : kIq2xsGrid)
    for (int k = 0; k < 8; ++k) zeros += grid_u8(p, k) == 0;
  for (uint64_t p : kIq2sGrid)
    for (int k = 0; k < 8; ++k) zeros += grid_u8(p, k) == 0;
  for (uint32_t p : kIq3xxsGrid)
    for (int k = 0; k < 4; ++k) zeros += uint8_t(p >> (8 * k)) == 0;
  for (uint32_t p : kIq3sGrid)
    for (int k = 0; k < 4; ++k) zeros += uint8_t(p >> (8 * k)) == 0;
  EXPECT_EQ(zeros, 0u);
}

// Every format has both implementations. Fails until every kernel family has landed.
TEST(KernelTable, EveryFormatHasReferenceAndSimd128) {
  std::string missing;
  for (uint32_t i = 0; i < ws::kQuantFormatCount; ++i) {
    const ws::kernels::FormatEntry& e = ws::kernels::format_entry(static_cast<QuantFormat>(i));
    if (!e.reference) missing += std::string(" ") + e.info.name + "(reference)";
    if (!e.simd128) missing += std::string(" ") + e.info.name + "(simd128)";
  }
  EXPECT_EQ(missing, "") << "formats without a kernel:" << missing;
}


// Every fp16 bit pattern as a block scale (Q8_0's d; Q4_1's d, and m as a permutation of d),
// SIMD128 against the reference, kernels called directly: the vector f16 -> f32 conversion of
// the scale fields (simd_util.h) must agree with fp16_to_f32 on zeros, subnormals, normals, inf
// and NaN alike. The random cases above reach only a few thousand of the 65536 patterns.
bool same_or_both_nan(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  const bool nx = (x & 0x7FFFFFFFu) > 0x7F800000u, ny = (y & 0x7FFFFFFFu) > 0x7F800000u;
  return x == y || (nx && ny && (x >> 31) == (y >> 31));
}

void expect_every_half_scale(QuantFormat f, size_t bb, std::initializer_list<size_t> fields) {
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(f);
  const size_t n = 65536, elems = e.info.block_elems;
  std::vector<uint8_t> blocks(n * bb);
  Rng r{42};
  r.fill(blocks.data(), blocks.size());
  for (size_t b = 0; b < n; ++b) {
    size_t k = 0;
    for (size_t off : fields) {
      const uint16_t h = uint16_t(k++ == 0 ? b : b * 40503u);  // m: an odd multiple, a permutation of d
      memcpy(&blocks[b * bb + off], &h, 2);
    }
  }
  ws::DequantSpec spec;
  spec.format = f;
  spec.elements = n * elems;
  const ws::kernels::KernelContext ctx{&spec, 0};
  std::vector<float> want(n * elems), got(n * elems);
  e.reference(blocks.data(), n, want.data(), ctx);
  // In pieces of 1000 blocks: the in-cache path (a single call this size takes the streaming one,
  // which the differential cases above cover).
  for (size_t b = 0; b < n; b += 1000) e.simd128(blocks.data() + b * bb, std::min<size_t>(1000, n - b), got.data() + b * elems, ctx);
  size_t bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!same_or_both_nan(got[i], want[i])) {
      ADD_FAILURE() << ws::quant_format_name(f) << " block " << i / elems << " value " << i % elems << ": " << got[i]
                    << " vs reference " << want[i];
      ++bad;
    }
}

TEST(SimdEveryHalfScale, Q8_0) { expect_every_half_scale(QuantFormat::Q8_0, 34, {0}); }
TEST(SimdEveryHalfScale, Q4_1) { expect_every_half_scale(QuantFormat::Q4_1, 20, {0, 2}); }

}  // namespace
