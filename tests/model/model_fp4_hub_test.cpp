// gpt-oss MXFP4 and NVIDIA ModelOpt NVFP4 checkpoints (issue #27): recognised by config.json's
// quant_method (and ModelOpt's quant_algo) or, without one, by their companion names, and decoded
// to the values of the upstream dequantizers — transformers integrations/mxfp4.py
// convert_moe_packed_tensors (ldexp(FP4_VALUES[nibble], scale - 127), low nibble first) and
// ModelOpt qtensor/nvfp4_tensor.py NVFP4QTensor.dequantize (E2M1[code] * (f32(weight_scale) *
// weight_scale_2)) — recomputed here from the fixtures' stored bytes, f32 exactly and f16 as that
// rounded to nearest even, in every load mode, chunking and access. Fixtures:
// tests/data/conventions/hub/ (tools/samplegen/hub_fixtures.cpp).
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"
#include "weightstream/mlx_config.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::read_file;
using hubtest::stored;
using hubtest::Stored;

using hubtest::output_of;
using hubtest::load;
using hubtest::load_memory;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";
const std::string E = L + "mlp.experts.";

// transformers' FP4_VALUES (integrations/mxfp4.py) and ModelOpt's e2m1_values: the same table.
const float kFp4[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                        -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// convert_moe_packed_tensors: scales - 127, then ldexp of the table value; byte j of a 16-byte
// block gives values 2j (low nibble) and 2j + 1 (high), rows in the stored order.
std::vector<float> gpt_oss_values(const Bytes& blocks, const Bytes& scales) {
  std::vector<float> v;
  for (size_t r = 0; r < scales.size(); ++r) {
    const int exp = int(scales[r]) - 127;
    for (int j = 0; j < 16; ++j) {
      const uint8_t b = blocks[r * 16 + j];
      v.push_back(ldexpf(kFp4[b & 0x0F], exp));
      v.push_back(ldexpf(kFp4[b >> 4], exp));
    }
  }
  return v;
}

// torch.float8_e4m3fn to float32 (finite values: bias 7, subnormals man * 2^-9).
float e4m3fn(uint8_t x) {
  const int e = (x >> 3) & 15, m = x & 7;
  const float v = e == 0 ? ldexpf(float(m), -9) : ldexpf(1.0f + float(m) / 8.0f, e - 7);
  return x & 0x80 ? -v : v;
}

// NVFP4QTensor.dequantize: per_block_scale = float32(scale) * double_scale, then
// e2m1_values[code] * per_block_scale (code: low nibble for the even value), f32.
std::vector<float> modelopt_values(const Bytes& weight, const Bytes& scale, float global) {
  std::vector<float> v;
  for (size_t g = 0; g < scale.size(); ++g) {
    const float s = e4m3fn(scale[g]) * global;
    for (int j = 0; j < 8; ++j) {
      const uint8_t b = weight[g * 8 + j];
      v.push_back(kFp4[b & 0x0F] * s);
      v.push_back(kFp4[b >> 4] * s);
    }
  }
  return v;
}

float f32_at(const Bytes& b, size_t i) {
  float f;
  memcpy(&f, b.data() + 4 * i, 4);
  return f;
}




// Every mode of access and chunking, f32 and f16: `expect` (weight name -> values) decoded, the
// other weights plain, the convention `conv`.
void check_everywhere(const std::string& dir, const std::string& conv, const std::map<std::string, std::vector<float>>& expect,
                      size_t weights, size_t random_out = 128) {
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 11;
        o.out_size = feed == Feed::Random ? random_out : 1 << 16;  // one block of f32 at a time too
        const LoadResult r = load(dir, o);
        const std::string what = dir + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                 std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(std::string(ws::convention_name(r.convention)), conv) << what;
        EXPECT_EQ(r.weight_names.size(), weights) << what;
        EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
        }
      }
}

TEST(Fp4Hub, GptOssMxfp4DecodesAsTransformers) {
  const Bytes file = read_file(kHub + "/mxfp4-gpt-oss/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  for (const std::string p : {"gate_up_proj", "down_proj"})
    expect[E + p] = gpt_oss_values(stored(file, E + p + "_blocks").bytes, stored(file, E + p + "_scales").bytes);
  // Spot values the fixture holds: a scale of 0 (2^-127: subnormal results) and one of 254.
  const Bytes sc = stored(file, E + "gate_up_proj_scales").bytes;
  ASSERT_EQ(sc[1], 0);
  ASSERT_EQ(sc[2], 254);
  const Bytes bl = stored(file, E + "gate_up_proj_blocks").bytes;
  EXPECT_EQ(expect[E + "gate_up_proj"][32], ldexpf(kFp4[bl[16] & 15], -127));
  EXPECT_EQ(expect[E + "gate_up_proj"][64], ldexpf(kFp4[bl[32] & 15], 127));
  EXPECT_EQ(expect[E + "gate_up_proj"].size(), 2u * 64 * 64);
  // 9 tensors, the two pairs one weight each: 2 + 5 plain (2 biases, router, q_proj, embeddings).
  check_everywhere("mxfp4-gpt-oss", "mxfp4", expect, 7);
  check_everywhere("mxfp4-gpt-oss-no-config", "mxfp4", expect, 7);
}

TEST(Fp4Hub, GptOssWeightIsNamedShapedAndParameterisedAsTransformersNamesIt) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t i = 0; i < L.weight_count(); ++i) {
      const ws::LogicalWeight& w = L.weight(i);
      if (std::string(w.name.data, w.name.size) != E + "gate_up_proj") continue;
      seen = true;
      EXPECT_EQ(w.rank, 3u);
      EXPECT_EQ(w.shape[0], 2u);   // experts
      EXPECT_EQ(w.shape[1], 64u);  // 2I: the rows (transformers' parameter is axes 1, 2 swapped)
      EXPECT_EQ(w.shape[2], 64u);  // H = G * 32
      EXPECT_EQ(w.format, ws::QuantFormat::MlxMxfp4);
      ws::QuantParameter q[ws::kMaxQuantParameters];
      ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), 5u);
      EXPECT_STREQ(q[0].key, "method");
      EXPECT_STREQ(q[0].text, "mxfp4 (gpt-oss)");
      EXPECT_STREQ(q[1].text, "mxfp4");
      EXPECT_EQ(q[2].number, 4u);
      EXPECT_EQ(q[3].number, 32u);
      EXPECT_STREQ(q[4].text, "U8");
      // The companions: owner() maps both stored tensors to the weight.
      const ws::LogicalModel& m = *L.model();
      ws::PieceRole role;
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Packed), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Packed);
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Scales), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Scales);
    }
  };
  const LoadResult r = load("mxfp4-gpt-oss", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_TRUE(seen);
}

TEST(Fp4Hub, ModelOptNvfp4DecodesAsModelOpt) {
  const Bytes file = read_file(kHub + "/modelopt-nvfp4/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  for (const std::string m : {"mlp.down_proj", "self_attn.q_proj"}) {
    const Bytes g = stored(file, L + m + ".weight_scale_2").bytes;
    expect[L + m + ".weight"] =
        modelopt_values(stored(file, L + m + ".weight").bytes, stored(file, L + m + ".weight_scale").bytes, f32_at(g, 0));
  }
  // The global scale multiplies the block scale first: not MLX's / 2688, not Ollama's order.
  const Bytes w = stored(file, L + "mlp.down_proj.weight").bytes;
  const Bytes s = stored(file, L + "mlp.down_proj.weight_scale").bytes;
  ASSERT_EQ(s[0], 0x38);
  EXPECT_EQ(expect[L + "mlp.down_proj.weight"][0], kFp4[w[0] & 15] * (1.0f * 0.0123f));
  // input_scale stays a plain tensor, handed on: 0.03125 as stored.
  expect[L + "mlp.down_proj.input_scale"] = {0.03125f};
  // 2 quantized + 2 input_scale + norm + lm_head (excluded, BF16).
  check_everywhere("modelopt-nvfp4", "modelopt", expect, 6);
  check_everywhere("modelopt-nvfp4-no-config", "modelopt", expect, 6);
}

TEST(Fp4Hub, ModelOptParametersAndGlobalScaleRule) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t i = 0; i < L.weight_count(); ++i) {
      const ws::LogicalWeight& w = L.weight(i);
      if (std::string(w.name.data, w.name.size) != ::L + "mlp.down_proj.weight") continue;
      seen = true;
      EXPECT_EQ(w.shape[0], 8u);
      EXPECT_EQ(w.shape[1], 32u);
      EXPECT_TRUE(w.spec().global_scale_is_modelopt);
      EXPECT_FALSE(w.spec().global_scale_is_ollama);
      EXPECT_TRUE(w.ref(ws::PieceRole::GlobalScale).present());
      ws::QuantParameter q[ws::kMaxQuantParameters];
      ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), 5u);
      EXPECT_STREQ(q[0].text, "modelopt NVFP4");
      EXPECT_STREQ(q[1].text, "nvfp4");
      EXPECT_EQ(q[3].number, 16u);
      EXPECT_STREQ(q[4].text, "F8_E4M3");
    }
  };
  const LoadResult r = load("modelopt-nvfp4", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_TRUE(seen);
}

// ModelOpt FP8 (modelopt_fp8.cpp): f32(e4m3) * weight_scale in f32, as vLLM's modelopt.py
// ModelOptFp8LinearMethod / ModelOptFp8PcPtLinearMethod / ModelOptFp8PbWoLinearMethod apply the
// scale — per tensor, per output row, per 128 x 128 block.
std::vector<float> modelopt_fp8_values(const Bytes& weight, size_t cols, const Bytes& scale, size_t block_rows,
                                       size_t block_cols) {
  const size_t grid_cols = (cols + block_cols - 1) / block_cols;
  std::vector<float> v;
  for (size_t i = 0; i < weight.size(); ++i) {
    const size_t r = i / cols, c = i % cols;
    v.push_back(e4m3fn(weight[i]) * f32_at(scale, (r / block_rows) * grid_cols + c / block_cols));
  }
  return v;
}

TEST(Fp4Hub, ModelOptFp8DecodesAsVllm) {
  {  // quant_algo FP8: one scale a weight; input_scale plain; lm_head excluded (BF16).
    const Bytes file = read_file(kHub + "/modelopt-fp8/model.safetensors");
    std::map<std::string, std::vector<float>> expect;
    for (const std::string m : {"mlp.down_proj", "self_attn.q_proj"})
      expect[L + m + ".weight"] = modelopt_fp8_values(stored(file, L + m + ".weight").bytes, 8,
                                                      stored(file, L + m + ".weight_scale").bytes, 1 << 20, 1 << 20);
    EXPECT_EQ(expect[L + "self_attn.q_proj.weight"][0], 5.0f);  // 1.0 x 5.0 (plain FP8 was 1.0)
    EXPECT_EQ(expect[L + "mlp.down_proj.weight"][0], 0.0013f);
    expect[L + "self_attn.q_proj.input_scale"] = {0.0625f};
    // 2 quantized + 2 input_scale + norm + lm_head.
    check_everywhere("modelopt-fp8", "modelopt", expect, 6);
    check_everywhere("modelopt-fp8-hf-quant-config", "modelopt", expect, 6);
  }
  {  // FP8_PER_CHANNEL_PER_TOKEN: weight_scale [6], one a row.
    const Bytes file = read_file(kHub + "/modelopt-fp8-per-channel/model.safetensors");
    const std::string m = L + "mlp.gate_proj";
    std::map<std::string, std::vector<float>> expect;
    expect[m + ".weight"] = modelopt_fp8_values(stored(file, m + ".weight").bytes, 8, stored(file, m + ".weight_scale").bytes, 1, 8);
    EXPECT_EQ(expect[m + ".weight"][0], 0.5f);
    EXPECT_EQ(expect[m + ".weight"][8], e4m3fn(stored(file, m + ".weight").bytes[8]) * 3.0f);
    check_everywhere("modelopt-fp8-per-channel", "modelopt", expect, 2);
  }
  {  // FP8_PB_WO: [128, 256] in 128 x 128 blocks, scale [1, 1, 2, 1].
    const Bytes file = read_file(kHub + "/modelopt-fp8-pb-wo/model.safetensors");
    const std::string m = L + "mlp.up_proj";
    const Bytes w = stored(file, m + ".weight").bytes;
    std::map<std::string, std::vector<float>> expect;
    expect[m + ".weight"] = modelopt_fp8_values(w, 256, stored(file, m + ".weight_scale").bytes, 128, 128);
    EXPECT_EQ(expect[m + ".weight"][0], 5.0f);
    EXPECT_EQ(expect[m + ".weight"][128], e4m3fn(w[128]) * 0.0078125f);
    // The decoder's unit here is 256 values (fp8_block_unit): 1,024 bytes of f32 at a time.
    check_everywhere("modelopt-fp8-pb-wo", "modelopt", expect, 2, 1024);
  }
}

TEST(Fp4Hub, ModelOptFp8ParametersNameTheScaling) {
  struct Case {
    std::string dir, weight, scaling;
    uint32_t count;
  };
  for (const Case& c : std::vector<Case>{{"modelopt-fp8", "self_attn.q_proj.weight", "tensor", 4},
                                         {"modelopt-fp8-per-channel", "mlp.gate_proj.weight", "channel", 4},
                                         {"modelopt-fp8-pb-wo", "mlp.up_proj.weight", "block", 6}}) {
    HostOptions o;
    o.mode = ws::ModelLoadMode::Headers;
    bool seen = false;
    o.on_ready = [&](const ws::ModelLoader& ld) {
      for (uint32_t i = 0; i < ld.weight_count(); ++i) {
        const ws::LogicalWeight& w = ld.weight(i);
        if (std::string(w.name.data, w.name.size) != L + c.weight) continue;
        seen = true;
        EXPECT_EQ(w.format, ws::QuantFormat::Fp8Block) << c.dir;
        ws::QuantParameter q[ws::kMaxQuantParameters];
        ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), c.count) << c.dir;
        EXPECT_STREQ(q[0].text, "modelopt FP8") << c.dir;
        EXPECT_EQ(std::string(q[1].text), c.scaling) << c.dir;
        if (c.count == 6) {
          EXPECT_EQ(q[2].number, 128u);
          EXPECT_EQ(q[3].number, 128u);
        }
        EXPECT_STREQ(q[c.count - 2].text, "F8_E4M3") << c.dir;
        EXPECT_STREQ(q[c.count - 1].text, "F32") << c.dir;
      }
    };
    const LoadResult r = load(c.dir, o);
    ASSERT_EQ(r.code, ws::Status::Ok) << c.dir << ": " << r.verdict();
    EXPECT_TRUE(seen) << c.dir;
  }
}

// The kernels alone: the portable reference and SIMD128 give the upstream values, f32 and f16,
// for both layouts (the loads above run the Auto choice, SIMD128).
TEST(Fp4Hub, ReferenceAndSimdKernelsGiveTheUpstreamValues) {
  const Bytes ox = read_file(kHub + "/mxfp4-gpt-oss/model.safetensors");
  const Bytes nv = read_file(kHub + "/modelopt-nvfp4/model.safetensors");
  struct Case {
    ws::DequantSpec spec;
    Bytes packed;
    std::vector<float> want;
  };
  std::vector<Case> cases;
  {
    Case c;
    c.packed = stored(ox, E + "gate_up_proj_blocks").bytes;
    static Bytes scales;
    scales = stored(ox, E + "gate_up_proj_scales").bytes;
    c.spec.format = ws::QuantFormat::MlxMxfp4;
    c.spec.elements = c.packed.size() * 2;
    c.spec.scales = scales.data();
    c.want = gpt_oss_values(c.packed, scales);
    cases.push_back(c);
  }
  {
    Case c;
    c.packed = stored(nv, L + "mlp.down_proj.weight").bytes;
    static Bytes scales;
    scales = stored(nv, L + "mlp.down_proj.weight_scale").bytes;
    const float g = f32_at(stored(nv, L + "mlp.down_proj.weight_scale_2").bytes, 0);
    c.spec.format = ws::QuantFormat::MlxNvfp4;
    c.spec.elements = c.packed.size() * 2;
    c.spec.scales = scales.data();
    c.spec.has_global_scale = true;
    c.spec.global_scale = g;
    c.spec.global_scale_is_modelopt = true;
    c.want = modelopt_values(c.packed, scales, g);
    cases.push_back(c);
  }
  for (const Case& c : cases)
    for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
      for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16}) {
        ws::DequantSpec spec = c.spec;
        spec.impl = impl;
        spec.out = out;
        Bytes got(c.want.size() * (out == ws::OutType::F32 ? 4 : 2));
        ws::Error e;
        ASSERT_EQ(ws::dequantize(spec, c.packed.data(), c.packed.size(), got.data(), got.size(), &e), ws::Status::Ok);
        EXPECT_TRUE(got == output_of(c.want, out)) << int(spec.format) << " impl " << int(impl) << " out " << int(out);
      }
}

// Values refused when the weight decodes, each at its byte: a weight_scale_2 of zero, NaN or
// inf; a gpt-oss E8M0 scale of 0xFF (transformers' ldexp by 128 is not MLX's +inf: no value is
// handed on rather than either).
TEST(Fp4Hub, BadGlobalAndBlockScalesAreRefusedAtTheirBytes) {
  const Bytes nv = read_file(kHub + "/modelopt-nvfp4-no-config/model.safetensors");
  const Stored g = stored(nv, L + "mlp.down_proj.weight_scale_2");
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7FC00000u, 0x7F800000u}) {
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
  const Bytes ox = read_file(kHub + "/mxfp4-gpt-oss-no-config/model.safetensors");
  const Stored sc = stored(ox, E + "down_proj_scales");
  Bytes f = ox;
  f[sc.at + 5] = 0xFF;
  for (bool seekable : {true, false}) {
    HostOptions o;
    o.seekable = seekable;
    const LoadResult r = load_memory({{"model.safetensors", f}}, o);
    EXPECT_EQ(r.code, ws::Status::InvalidBlockData) << r.verdict();
    EXPECT_EQ(r.offset, sc.at + 5);
    EXPECT_EQ(r.tensor, E + "down_proj");
  }
}

// The recognition rules: quant_method picks the row; ModelOpt's quant_algo picks the variant
// (FP8 is not this row's: refused by name until its decoder lands); a half of a pair is no
// scheme; a config naming another method is refused whatever the names.
TEST(Fp4Hub, RecognitionByMethodAlgoAndNames) {
  const Bytes nv = read_file(kHub + "/modelopt-nvfp4-no-config/model.safetensors");
  const Bytes ox = read_file(kHub + "/mxfp4-gpt-oss-no-config/model.safetensors");
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  auto cfg = [](const std::string& section) {
    const std::string t = "{\"quantization_config\": {" + section + "}}";
    return Bytes(t.begin(), t.end());
  };
  {  // A quant_algo not decoded (ModelOpt's W4A8_AWQ): refused by name.
    const LoadResult r = load_memory({{"model.safetensors", nv}, {"config.json", cfg("\"quant_algo\": \"W4A8_AWQ\", \"quant_method\": \"modelopt\"")}}, o);
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << r.verdict();
    EXPECT_EQ(r.detail, "modelopt (config.json quant_method)");
  }
  {  // FP8 is decoded (modelopt_fp8.cpp): over NVFP4's U8 weights its scale is beside no F8 weight.
    const LoadResult r = load_memory({{"model.safetensors", nv}, {"config.json", cfg("\"quant_algo\": \"FP8\", \"quant_method\": \"modelopt\"")}}, o);
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
  }
  {
    const LoadResult r = load_memory({{"model.safetensors", nv}, {"config.json", cfg("\"quant_method\": \"modelopt\"")}}, o);
    EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
    EXPECT_EQ(std::string(ws::convention_name(r.convention)), "modelopt");
  }
  {
    // awq is decoded too (issue #28): over gpt-oss's tensors its own are absent.
    const LoadResult r = load_memory({{"model.safetensors", ox}, {"config.json", cfg("\"quant_method\": \"awq\"")}}, o);
    EXPECT_EQ(r.code, ws::Status::QuantizationTensorsAbsent) << r.verdict();
    EXPECT_EQ(r.detail, "awq (quant_method): no <m>.qweight with its <m>.qzeros and <m>.scales");
  }
  {
    // gptq is decoded (issue #28): over gpt-oss's tensors its own are absent.
    const LoadResult r = load_memory({{"model.safetensors", ox}, {"config.json", cfg("\"quant_method\": \"gptq\"")}}, o);
    EXPECT_EQ(r.code, ws::Status::QuantizationTensorsAbsent) << r.verdict();
    EXPECT_EQ(r.detail, "gptq (quant_method): no <m>.qweight with its <m>.qzeros and <m>.scales");
  }
  {
    const LoadResult r = load_memory({{"model.safetensors", ox}, {"config.json", cfg("\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\"")}}, o);
    EXPECT_EQ(r.code, ws::Status::ConventionMissingCompanion) << r.verdict();
  }
}

// ModelOpt's hf_quant_config.json (no config.json): read because the tensor names show a
// scheme; its quant_algo picks the variant. The other files (quantize_config.json, ...) are asked
// for only while none has named the method, and never for a model whose names show none.
TEST(Fp4Hub, OtherConfigFilesAreReadWhenTheNamesShowAScheme) {
  const Bytes file = read_file(kHub + "/modelopt-nvfp4-hf-quant-config/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  const std::string m = L + "mlp.down_proj";
  expect[m + ".weight"] = modelopt_values(stored(file, m + ".weight").bytes, stored(file, m + ".weight_scale").bytes,
                                          f32_at(stored(file, m + ".weight_scale_2").bytes, 0));
  check_everywhere("modelopt-nvfp4-hf-quant-config", "modelopt", expect, 6);

  const Bytes hf = read_file(kHub + "/modelopt-nvfp4-hf-quant-config/hf_quant_config.json");
  auto asked = [](const std::map<std::string, Bytes>& files, std::vector<std::string>* names) {
    const modeltest::Files inner = modeltest::memory_files(files);
    return modeltest::Files([inner, names](const std::string& n, Bytes* out) {
      names->push_back(n);
      return inner(n, out);
    });
  };
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  {  // hf_quant_config.json names it: the next files are not asked for.
    std::vector<std::string> names;
    const LoadResult r = modeltest::load_model(asked({{"model.safetensors", file}, {"hf_quant_config.json", hf}}, &names),
                                               ws::ModelEntry::Auto, "model.safetensors", o);
    EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
    EXPECT_EQ(std::count(names.begin(), names.end(), "quantize_config.json"), 0);
    EXPECT_GE(std::count(names.begin(), names.end(), "hf_quant_config.json"), 1);
  }
  {  // A variant not decoded (NVFP4_AWQ): refused by name, the file named.
    std::string t(hf.begin(), hf.end());
    t.replace(t.find("\"NVFP4\""), 7, "\"NVFP4_AWQ\"");
    const LoadResult r = load_memory({{"model.safetensors", file}, {"hf_quant_config.json", Bytes(t.begin(), t.end())}}, o);
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << r.verdict();
    EXPECT_EQ(r.detail, "modelopt (hf_quant_config.json)");
  }
  {  // None of the files: the names alone (all three asked for, each missing).
    std::vector<std::string> names;
    const LoadResult r = modeltest::load_model(asked({{"model.safetensors", file}}, &names), ws::ModelEntry::Auto,
                                               "model.safetensors", o);
    EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
    for (const char* n : {"config.json", "hf_quant_config.json", "quantize_config.json", "quant_config.json"})
      EXPECT_GE(std::count(names.begin(), names.end(), n), 1) << n;
  }
  {  // A plain model: config.json only.
    std::vector<std::string> names;
    const Bytes plain = read_file(kHub + "/unknown-method/model.safetensors");
    const LoadResult r = modeltest::load_model(asked({{"model.safetensors", plain}}, &names), ws::ModelEntry::Auto,
                                               "model.safetensors", o);
    EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
    EXPECT_EQ(std::count(names.begin(), names.end(), "hf_quant_config.json"), 0);
    EXPECT_EQ(std::count(names.begin(), names.end(), "config.json"), 1);
  }
}

TEST(Fp4Hub, ConfigReaderKeepsModelOptQuantAlgo) {
  alignas(8) static uint8_t arena[4096];
  const std::string text = "{\"quantization_config\": {\"exclude_modules\": [\"lm_head\"], \"group_size\": 16, "
                           "\"kv_cache_quant_algo\": null, \"producer\": {\"name\": \"modelopt\"}, "
                           "\"quant_algo\": \"NVFP4\", \"quant_method\": \"modelopt\"}}";
  for (size_t piece : {text.size(), size_t(1)}) {
    ws::MlxQuantConfig c(arena, sizeof arena);
    for (size_t at = 0; at < text.size(); at += piece)
      ASSERT_EQ(c.feed(text.data() + at, std::min(piece, text.size() - at)), ws::Status::Ok);
    ASSERT_EQ(c.finish(), ws::Status::Ok);
    EXPECT_TRUE(c.has_method());
    EXPECT_TRUE(c.has_algo());
    EXPECT_EQ(std::string(c.algo().data, c.algo().size), "NVFP4");
    EXPECT_EQ(std::string(c.method().data, c.method().size), "modelopt");
  }
  // The other files: their writer's method when they name none; hf_quant_config.json's
  // "quantization" object is the section; AutoGPTQ's / AutoAWQ's root object is.
  struct Other {
    ws::ConfigSource source;
    std::string text, method, algo;
  };
  for (const Other& x : std::vector<Other>{
           {ws::ConfigSource::HfQuantConfig, "{\"producer\": {\"name\": \"modelopt\"}, \"quantization\": {\"quant_algo\": \"FP8\"}}", "modelopt", "FP8"},
           {ws::ConfigSource::QuantizeConfig, "{\"bits\": 4, \"group_size\": -1, \"desc_act\": true}", "gptq", ""},
           {ws::ConfigSource::QuantizeConfig, "{\"bits\": 4, \"quant_method\": \"awq\"}", "awq", ""},
           {ws::ConfigSource::QuantConfig, "{\"zero_point\": true, \"q_group_size\": 128, \"w_bit\": 4, \"version\": \"GEMM\"}", "awq", ""}}) {
    ws::MlxQuantConfig o(arena, sizeof arena);
    o.set_source(x.source);
    ASSERT_EQ(o.feed(x.text.data(), x.text.size()), ws::Status::Ok) << x.text;
    ASSERT_EQ(o.finish(), ws::Status::Ok) << x.text;
    EXPECT_TRUE(o.has_method()) << x.text;
    EXPECT_FALSE(o.has_quantization()) << x.text;
    EXPECT_EQ(std::string(o.method().data, o.method().size), x.method) << x.text;
    EXPECT_EQ(std::string(o.algo().data, o.algo().size), x.algo) << x.text;
  }
  ws::MlxQuantConfig c(arena, sizeof arena);
  const std::string null_algo = "{\"quantization_config\": {\"quant_algo\": null, \"quant_method\": \"modelopt\"}}";
  ASSERT_EQ(c.feed(null_algo.data(), null_algo.size()), ws::Status::Ok);
  ASSERT_EQ(c.finish(), ws::Status::Ok);
  EXPECT_FALSE(c.has_algo());
}

}  // namespace
