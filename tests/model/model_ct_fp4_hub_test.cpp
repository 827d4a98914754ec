// compressed-tensors nvfp4-pack-quantized and mxfp4-pack-quantized checkpoints (issue #27):
// recognised by config.json's quant_method "compressed-tensors" and its format (nvfp4 also by its
// names alone), and decoded to what compressed-tensors' own decompressors return —
// NVFP4PackedCompressor (compressors/nvfp4/base.py; quantized_compressors/fp4_quantized.py at
// 52792be): unpack_fp4_from_uint8 (low nibble first) then _dequantize's f32 arithmetic,
// E2M1[code] * (f32(weight_scale) / weight_global_scale); MXFP4PackedCompressor
// (compressors/mxfp4/base.py): E2M1[code] * 2^(weight_scale - 127) — recomputed here from the
// fixtures' stored bytes: f32 exactly, f16 as that rounded to nearest even, and bf16 (upstream's
// own output dtype) likewise, in every load mode, chunking and access. Their malformed neighbours'
// verdicts are in hub/expected.json (model_quantized_test.cpp); here, the global scales refused
// when the weight decodes. Fixtures: tests/data/conventions/hub/ct-nvfp4*, ct-mxfp4*
// (tools/samplegen/hub_fixtures.cpp).
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"
#include "weightstream/dequant.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::load;
using hubtest::load_memory;
using hubtest::output_of;
using hubtest::read_file;
using hubtest::stored;
using hubtest::Stored;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

// unpack_fp4_from_uint8's kE2M1ToFloat with the sign of code bit 3 (code 8 is -0.0: the table
// value 0.0 times -1.0).
float e2m1(uint8_t code) {
  static const float kMag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  return code & 8 ? -kMag[code & 7] : kMag[code & 7];
}

// torch.float8_e4m3fn to float32 (finite values: bias 7, subnormals man * 2^-9).
float e4m3fn(uint8_t x) {
  const int e = (x >> 3) & 15, m = x & 7;
  const float v = e == 0 ? ldexpf(float(m), -9) : ldexpf(1.0f + float(m) / 8.0f, e - 7);
  return x & 0x80 ? -v : v;
}

float f32_at(const Bytes& b, size_t i) {
  float f;
  memcpy(&f, b.data() + 4 * i, 4);
  return f;
}

// NVFP4PackedCompressor.decompress: values 2j and 2j + 1 from byte j's low and high nibbles; the
// row's group g of 16 takes weight_scale[g]; _dequantize: scale = f32(scale) / global_scale (one
// f32 division, volatile: no contraction or reordering), then x_q * scale.
std::vector<float> nvfp4_values(const Bytes& packed, const Bytes& scale, float global) {
  std::vector<float> v;
  for (size_t g = 0; g < scale.size(); ++g) {
    volatile float s = e4m3fn(scale[g]);
    s = s / global;
    for (int j = 0; j < 8; ++j) {
      const uint8_t b = packed[g * 8 + j];
      v.push_back(e2m1(b & 15) * s);
      v.push_back(e2m1(b >> 4) * s);
    }
  }
  return v;
}

// MXFP4PackedCompressor.decompress: decompress_mx_scale, 2 ** (e - 127) (exact in bf16), times
// the code's value (exact: two significant bits).
std::vector<float> mxfp4_values(const Bytes& packed, const Bytes& scale) {
  std::vector<float> v;
  for (size_t g = 0; g < scale.size(); ++g)
    for (int j = 0; j < 16; ++j) {
      const uint8_t b = packed[g * 16 + j];
      v.push_back(ldexpf(e2m1(b & 15), int(scale[g]) - 127));
      v.push_back(ldexpf(e2m1(b >> 4), int(scale[g]) - 127));
    }
  return v;
}

// bf16 of f32 values as torch's .to(torch.bfloat16) rounds them (nearest even; finite here).
Bytes bf16_of(const std::vector<float>& v) {
  Bytes b;
  for (float f : v) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFFu + ((u >> 16) & 1u);
    b.push_back(uint8_t(u >> 16));
    b.push_back(uint8_t(u >> 24));
  }
  return b;
}

Bytes output_bytes(const std::vector<float>& v, ws::OutType out) {
  return out == ws::OutType::BF16 ? bf16_of(v) : output_of(v, out);
}

// Every output type, chunking and access: `expect` (weight name -> values) decoded, `weights`
// logical weights in all.
void check_everywhere(const std::string& dir, const std::map<std::string, std::vector<float>>& expect, size_t weights) {
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16, ws::OutType::BF16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 13;
        o.out_size = feed == Feed::Random ? 128 : 1 << 16;  // one mxfp4 group of f32 at a time too
        const LoadResult r = load(dir, o);
        const std::string what = dir + " out " + std::to_string(int(out)) + " feed " + std::to_string(int(feed)) +
                                 (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(std::string(ws::convention_name(r.convention)), "compressed-tensors") << what;
        EXPECT_EQ(r.weight_names.size(), weights) << what;
        EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_bytes(e.second, out)) << what << " " << e.first;
        }
      }
}

std::map<std::string, std::vector<float>> nvfp4_expect(const Bytes& file) {
  std::map<std::string, std::vector<float>> expect;
  for (const std::string m : {"mlp.down_proj", "self_attn.q_proj"})
    expect[L + m + ".weight"] = nvfp4_values(stored(file, L + m + ".weight_packed").bytes,
                                             stored(file, L + m + ".weight_scale").bytes,
                                             f32_at(stored(file, L + m + ".weight_global_scale").bytes, 0));
  return expect;
}

TEST(CtFp4Hub, Nvfp4DecodesAsCompressedTensors) {
  const Bytes file = read_file(kHub + "/ct-nvfp4/model.safetensors");
  std::map<std::string, std::vector<float>> expect = nvfp4_expect(file);
  // The first group: scale 0x38 (1.0) over 2688 / 0.7431: the quotient rounded once, then each
  // product; not ModelOpt's product (1.0 * g) nor MLX's / 2688.
  const Bytes p = stored(file, L + "mlp.down_proj.weight_packed").bytes;
  const Bytes s = stored(file, L + "mlp.down_proj.weight_scale").bytes;
  const float g = f32_at(stored(file, L + "mlp.down_proj.weight_global_scale").bytes, 0);
  ASSERT_EQ(s[0], 0x38);
  ASSERT_EQ(g, 2688.0f / 0.7431f);
  volatile float q = 1.0f / g;
  EXPECT_EQ(expect[L + "mlp.down_proj.weight"][0], e2m1(p[0] & 15) * q);
  EXPECT_EQ(expect[L + "mlp.down_proj.weight"].size(), 8u * 32);
  // The order is observable: for some group and code, E2M1 * (s / g) is not (E2M1 * s) / g.
  size_t rounded = 0;
  for (uint8_t sc : s)
    for (float k : {1.5f, 3.0f, 6.0f}) {
      volatile float a = e4m3fn(sc);
      a = a / g;
      volatile float b = e4m3fn(sc) * k;
      b = b / g;
      rounded += float(a * k) != b;
    }
  EXPECT_GT(rounded, 0u);
  // input_global_scale: the activations' scale, a plain tensor handed on as stored.
  expect[L + "mlp.down_proj.input_global_scale"] = {448.0f * 6.0f / 3.25f};
  // 2 quantized + 2 input_global_scale + norm + lm_head (ignored, BF16).
  check_everywhere("ct-nvfp4", expect, 6);
  check_everywhere("ct-nvfp4-no-config", expect, 6);
}

TEST(CtFp4Hub, Mxfp4DecodesAsCompressedTensors) {
  const Bytes file = read_file(kHub + "/ct-mxfp4/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  for (const std::string m : {"mlp.down_proj", "self_attn.q_proj"})
    expect[L + m + ".weight"] =
        mxfp4_values(stored(file, L + m + ".weight_packed").bytes, stored(file, L + m + ".weight_scale").bytes);
  // The scales 0 (2^-127: subnormal results) and 254 are in the fixture.
  const Bytes s = stored(file, L + "mlp.down_proj.weight_scale").bytes;
  const Bytes p = stored(file, L + "mlp.down_proj.weight_packed").bytes;
  ASSERT_EQ(s[1], 0);
  ASSERT_EQ(s[2], 254);
  EXPECT_EQ(expect[L + "mlp.down_proj.weight"][32], ldexpf(e2m1(p[16] & 15), -127));
  EXPECT_EQ(expect[L + "mlp.down_proj.weight"][64], ldexpf(e2m1(p[32] & 15), 127));
  EXPECT_EQ(expect[L + "mlp.down_proj.weight"].size(), 8u * 64);
  check_everywhere("ct-mxfp4", expect, 4);  // 2 quantized + norm + lm_head
}

TEST(CtFp4Hub, WeightsAreNamedShapedAndParameterised) {
  struct Case {
    std::string dir, method, mode, scale_dtype;
    uint64_t cols, group;
    bool global;
  };
  for (const Case& c : std::vector<Case>{{"ct-nvfp4", "compressed-tensors nvfp4-pack-quantized", "nvfp4", "F8_E4M3", 32, 16, true},
                                         {"ct-nvfp4-no-config", "compressed-tensors nvfp4-pack-quantized", "nvfp4", "F8_E4M3", 32, 16, true},
                                         {"ct-mxfp4", "compressed-tensors mxfp4-pack-quantized", "mxfp4", "U8", 64, 32, false}}) {
    HostOptions o;
    o.mode = ws::ModelLoadMode::Headers;
    bool seen = false;
    o.on_ready = [&](const ws::ModelLoader& ld) {
      const uint32_t i = hubtest::weight_index(ld, L + "mlp.down_proj.weight");
      if (i == ld.weight_count()) return;
      const ws::LogicalWeight& w = ld.weight(i);
      seen = true;
      EXPECT_EQ(w.rank, 2u);
      EXPECT_EQ(w.shape[0], 8u);
      EXPECT_EQ(w.shape[1], c.cols);
      EXPECT_EQ(w.format, c.global ? ws::QuantFormat::MlxNvfp4 : ws::QuantFormat::MlxMxfp4);
      const ws::DequantSpec spec = w.spec();
      EXPECT_EQ(spec.global_scale_divides, c.global) << c.dir;
      EXPECT_FALSE(spec.global_scale_is_modelopt);
      EXPECT_FALSE(spec.global_scale_is_ollama);
      ws::QuantParameter q[ws::kMaxQuantParameters];
      const uint32_t n = ws::quant_parameters(w, q, ws::kMaxQuantParameters);
      ASSERT_EQ(n, c.global ? 6u : 5u) << c.dir;
      EXPECT_EQ(std::string(q[0].text), c.method);
      EXPECT_EQ(std::string(q[1].text), c.mode);
      EXPECT_EQ(q[2].number, 4u);
      EXPECT_EQ(q[3].number, c.group);
      EXPECT_EQ(std::string(q[4].text), c.scale_dtype);
      if (c.global) {
        EXPECT_STREQ(q[5].key, "global_scale");
        EXPECT_STREQ(q[5].text, "divides (weight_global_scale)");
      }
      // owner() maps every stored piece to the weight; input_global_scale stays its own.
      const ws::LogicalModel& m = *ld.model();
      ws::PieceRole role;
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Packed), &role), i);
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Scales), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Scales);
      EXPECT_EQ(w.ref(ws::PieceRole::GlobalScale).present(), c.global);
      if (c.global) {
        EXPECT_EQ(m.owner(w.ref(ws::PieceRole::GlobalScale), &role), i);
        EXPECT_EQ(role, ws::PieceRole::GlobalScale);
      }
    };
    const LoadResult r = load(c.dir, o);
    ASSERT_EQ(r.code, ws::Status::Ok) << c.dir << ": " << r.verdict();
    EXPECT_TRUE(seen) << c.dir;
  }
}

// A weight_global_scale of zero (either sign), NaN or inf: InvalidBlockData at its bytes when the
// weight decodes (the division would give inf or NaN everywhere: no scale a writer made); with
// validate off, IEEE's quotient. An E4M3 NaN block scale (0x7F) and an E8M0 255 likewise at
// their bytes.
TEST(CtFp4Hub, BadGlobalAndBlockScalesAreRefusedAtTheirBytes) {
  const Bytes nv = read_file(kHub + "/ct-nvfp4-no-config/model.safetensors");
  const Stored g = stored(nv, L + "mlp.down_proj.weight_global_scale");
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7FC00000u, 0x7F800000u, 0xFF800000u}) {
    Bytes f = nv;
    memcpy(f.data() + g.at, &bits, 4);
    for (Feed feed : {Feed::Whole, Feed::OneByte})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.feed = feed;
        o.seekable = seekable;
        const LoadResult r = load_memory({{"model.safetensors", f}}, o);
        EXPECT_EQ(r.code, ws::Status::InvalidBlockData) << bits << ": " << r.verdict();
        EXPECT_EQ(r.offset, g.at) << bits;
        EXPECT_EQ(r.tensor, L + "mlp.down_proj.weight") << bits;
      }
  }
  {
    const Stored s = stored(nv, L + "self_attn.q_proj.weight_scale");
    Bytes f = nv;
    f[s.at + 3] = 0x7F;
    const LoadResult r = load_memory({{"model.safetensors", f}}, HostOptions());
    EXPECT_EQ(r.code, ws::Status::InvalidBlockData) << r.verdict();
    EXPECT_EQ(r.offset, s.at + 3);
    EXPECT_EQ(r.tensor, L + "self_attn.q_proj.weight");
  }
  {
    const Bytes mx = read_file(kHub + "/ct-mxfp4/model.safetensors");
    const Bytes cfg = read_file(kHub + "/ct-mxfp4/config.json");
    const Stored s = stored(mx, L + "mlp.down_proj.weight_scale");
    Bytes f = mx;
    f[s.at + 5] = 0xFF;
    for (bool seekable : {true, false}) {
      HostOptions o;
      o.seekable = seekable;
      const LoadResult r = load_memory({{"model.safetensors", f}, {"config.json", cfg}}, o);
      EXPECT_EQ(r.code, ws::Status::InvalidBlockData) << r.verdict();
      EXPECT_EQ(r.offset, s.at + 5);
      EXPECT_EQ(r.tensor, L + "mlp.down_proj.weight");
    }
  }
}

// The kernels alone: reference and SIMD128 give compressed-tensors' values, f32, f16 and bf16,
// for a zero global scale with validate off IEEE's quotients (inf, NaN) alike in both.
TEST(CtFp4Hub, ReferenceAndSimdKernelsAgreeWithUpstream) {
  const Bytes nv = read_file(kHub + "/ct-nvfp4/model.safetensors");
  const Bytes packed = stored(nv, L + "self_attn.q_proj.weight_packed").bytes;
  const Bytes scales = stored(nv, L + "self_attn.q_proj.weight_scale").bytes;
  const float g = f32_at(stored(nv, L + "self_attn.q_proj.weight_global_scale").bytes, 0);
  const std::vector<float> want = nvfp4_values(packed, scales, g);
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16, ws::OutType::BF16}) {
      ws::DequantSpec spec;
      spec.format = ws::QuantFormat::MlxNvfp4;
      spec.elements = packed.size() * 2;
      spec.scales = scales.data();
      spec.has_global_scale = true;
      spec.global_scale = g;
      spec.global_scale_divides = true;
      spec.impl = impl;
      spec.out = out;
      Bytes got(want.size() * ws::out_type_bytes(out));
      ws::Error e;
      ASSERT_EQ(ws::dequantize(spec, packed.data(), packed.size(), got.data(), got.size(), &e), ws::Status::Ok);
      EXPECT_TRUE(got == output_bytes(want, out)) << "impl " << int(impl) << " out " << int(out);
    }
  // Zero global scale, validate off: both implementations the same bytes (inf and NaN).
  Bytes ref, simd;
  for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128}) {
    ws::DequantSpec spec;
    spec.format = ws::QuantFormat::MlxNvfp4;
    spec.elements = packed.size() * 2;
    spec.scales = scales.data();
    spec.has_global_scale = true;
    spec.global_scale = 0.0f;
    spec.global_scale_divides = true;
    spec.validate = false;
    spec.impl = impl;
    Bytes got(spec.elements * 4);
    ws::Error e;
    ASSERT_EQ(ws::dequantize(spec, packed.data(), packed.size(), got.data(), got.size(), &e), ws::Status::Ok);
    (impl == ws::KernelImpl::Reference ? ref : simd) = got;
  }
  EXPECT_TRUE(ref == simd);
  // Both rules at once is no spec.
  ws::DequantSpec both;
  both.format = ws::QuantFormat::MlxNvfp4;
  both.elements = 16;
  both.scales = scales.data();
  both.has_global_scale = true;
  both.global_scale = 1.0f;
  both.global_scale_divides = both.global_scale_is_modelopt = true;
  ws::Dequantizer d;
  EXPECT_EQ(d.init(both), ws::Status::InvalidQuantParams);
}

// Recognition: the format picks the build; the config's weights arguments are checked against
// it (refused by name otherwise); without config.json only nvfp4's names say the scheme.
TEST(CtFp4Hub, ConfigArgumentsAreCheckedAgainstTheFormat) {
  const Bytes nv = read_file(kHub + "/ct-nvfp4/model.safetensors");
  const std::string cfg = [] {
    const Bytes b = read_file(kHub + "/ct-nvfp4/config.json");
    return std::string(b.begin(), b.end());
  }();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string c = cfg;
    const size_t at = c.find(from, c.find("\"weights\""));
    EXPECT_NE(at, std::string::npos) << from;
    c.replace(at, from.size(), to);
    return Bytes(c.begin(), c.end());
  };
  struct Case {
    Bytes config;
    ws::Status status;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {with("\"num_bits\": 4", "\"num_bits\": 8"), ws::Status::QuantizationUnsupported,
       "compressed-tensors nvfp4-pack-quantized weights other than 4-bit float (config.json)"},
      {with("\"type\": \"float\"", "\"type\": \"int\""), ws::Status::QuantizationUnsupported,
       "compressed-tensors nvfp4-pack-quantized weights other than 4-bit float (config.json)"},
      {with("\"group_size\": 16", "\"group_size\": 32"), ws::Status::QuantizationUnsupported,
       "compressed-tensors nvfp4-pack-quantized group_size other than 16 (config.json)"},
      {with("\"symmetric\": true", "\"symmetric\": false"), ws::Status::QuantizationUnsupported,
       "compressed-tensors FP4 asymmetric weights (config.json)"},
  };
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  for (const Case& c : cases) {
    const LoadResult r = load_memory({{"model.safetensors", nv}, {"config.json", c.config}}, o);
    EXPECT_EQ(r.code, c.status) << c.detail << ": " << r.verdict();
    EXPECT_EQ(r.detail, c.detail);
  }
  // The config's `ignore` (a `re:` entry) or its targets leaving a module stored nvfp4 unquantized:
  // the files contradict the config (module_lists.h, as for pack-quantized).
  {
    std::string a = cfg;
    a.replace(a.find("\"lm_head\""), 9, "\"lm_head\", \"re:.*down_proj$\"");
    const LoadResult r = load_memory({{"model.safetensors", nv}, {"config.json", Bytes(a.begin(), a.end())}}, o);
    EXPECT_EQ(r.code, ws::Status::ConventionExcludedQuantized) << r.verdict();
    EXPECT_EQ(r.tensor, "model.layers.0.mlp.down_proj.weight_packed");
    EXPECT_EQ(r.detail, "stored quantized, yet ignore \"re:.*down_proj$\" leaves it unquantized (config.json)");
    std::string t = cfg;
    t.replace(t.find("\"Linear\""), 8, "\"re:.*mlp.*\"");
    const LoadResult q = load_memory({{"model.safetensors", nv}, {"config.json", Bytes(t.begin(), t.end())}}, o);
    EXPECT_EQ(q.code, ws::Status::ConventionExcludedQuantized) << q.verdict();
    EXPECT_EQ(q.detail, "stored quantized, yet no config_groups target with weights matches it (config.json)");
  }
  // The mxfp4 format over nvfp4's tensors: its scale grid is not U8 [out, in / 32].
  std::string mx = cfg;
  mx.replace(mx.find("\"format\": \"nvfp4-pack-quantized\""), 32, "\"format\": \"mxfp4-pack-quantized\"");
  {
    std::string a = mx;
    for (size_t at; (at = a.find("\"group_size\": 16")) != std::string::npos;) a.replace(at, 16, "\"group_size\": 32");
    const LoadResult r = load_memory({{"model.safetensors", nv}, {"config.json", Bytes(a.begin(), a.end())}}, o);
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << r.verdict();  // nvfp4's weight_global_scale
    EXPECT_EQ(r.detail, "compressed-tensors mxfp4-pack-quantized weight with a weight_global_scale");
  }
}

}  // namespace
