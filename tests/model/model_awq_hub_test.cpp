// AWQ checkpoints (issue #28): recognised by config.json's / quant_config.json's quant_method
// "awq" or, without one, by `.qweight` + `.qzeros` + `.scales` with AWQ's GEMM shapes, and decoded
// to [out, in] as AutoAWQ reads them (awq/utils/packing_utils.py dequantize_gemm: unpack_awq, then
// reverse_awq_order — the code of output o is lane AWQ_REVERSE_ORDER[o % 8] = 0,4,1,5,2,6,3,7 of
// its word, zeros too — then (q - zero) * scale, no + 1) — recomputed here from the fixtures'
// stored integers, f32 exactly and f16 as that rounded to nearest even, in every chunking,
// seekable and sequential, with output pieces smaller than a row. Fixtures:
// tests/data/conventions/hub/awq* (tools/samplegen/awq_fixtures.cpp, laid out as AutoAWQ's
// WQLinear_GEMM.from_linear; their refusals' verdicts are hub/expected.json's, checked by
// model_quantized_test).
#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::read_file;
using hubtest::stored;
using hubtest::entry_offset;
using hubtest::u32_at;
using hubtest::Stored;

using hubtest::load;
using hubtest::load_memory;
using hubtest::output_of;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

float f16_at(const Bytes& b, size_t i) {
  _Float16 h;
  memcpy(&h, b.data() + 2 * i, 2);
  return float(h);
}

// AutoAWQ's lane of output o % 8 (AWQ_REVERSE_ORDER).
const uint32_t kReverse[8] = {0, 4, 1, 5, 2, 6, 3, 7};

// The module's weight [out, in], from its stored integers: qweight [in, out / 8], qzeros
// [groups, out / 8], scales [groups, out]; q = (qweight[i][o / 8] >> 4 * R[o % 8]) & 15, zero
// likewise from qzeros[g]; value = scale[g][o] * (q - zero), g = i / (in / groups).
std::vector<float> awq_values(const Bytes& file, const std::string& m) {
  const Stored qw = stored(file, m + ".qweight"), qz = stored(file, m + ".qzeros"), sc = stored(file, m + ".scales");
  const uint64_t in = qw.shape[0], words = qw.shape[1], out = sc.shape[1], group = in / sc.shape[0];
  EXPECT_EQ(words * 8, out);
  std::vector<float> v;
  for (uint64_t o = 0; o < out; ++o)
    for (uint64_t i = 0; i < in; ++i) {
      const uint64_t g = i / group;
      const uint32_t shift = 4 * kReverse[o % 8];
      const int32_t q = int32_t((u32_at(qw.bytes, i * words + o / 8) >> shift) & 15);
      const int32_t z = int32_t((u32_at(qz.bytes, g * words + o / 8) >> shift) & 15);
      v.push_back(f16_at(sc.bytes, g * out + o) * float(q - z));
    }
  return v;
}

// GEMV (AutoAWQ awq/modules/linear/gemv.py WQLinear_GEMV.from_linear): qweight [out, in / 8],
// q = (qweight[o][i / 8] >> 4 * (i % 8)) & 15; qzeros [out, W], zero = (qzeros[o][g / 8] >> 4 *
// (g % 8)) & 15; scales [out, 8 W]; value = scale[o][g] * (q - zero), g = i / 32 (the fixtures'
// group_size), W from calculate_zeros_width (the padding unread).
std::vector<float> awq_gemv_values(const Bytes& file, const std::string& m) {
  const Stored qw = stored(file, m + ".qweight"), qz = stored(file, m + ".qzeros"), sc = stored(file, m + ".scales");
  const uint64_t out = qw.shape[0], in = qw.shape[1] * 8, zw = qz.shape[1], group = 32;
  EXPECT_EQ(sc.shape[1], zw * 8);
  std::vector<float> v;
  for (uint64_t o = 0; o < out; ++o)
    for (uint64_t i = 0; i < in; ++i) {
      const uint64_t g = i / group;
      const int32_t q = int32_t((u32_at(qw.bytes, o * (in / 8) + i / 8) >> (4 * (i % 8))) & 15);
      const int32_t z = int32_t((u32_at(qz.bytes, o * zw + g / 8) >> (4 * (g % 8))) & 15);
      v.push_back(f16_at(sc.bytes, o * zw * 8 + g) * float(q - z));
    }
  return v;
}

const char* const kModules[] = {"mlp.down_proj", "self_attn.k_proj"};

// The logical weight of module `m` (its name is the lead's to change: one place).
std::string awq_weight(const std::string& m) { return m + ".weight"; }

// Both modules decoded in every access, chunking and output type; the bias, the norm and lm_head
// (modules_to_not_convert) plain.
void check_everywhere(const std::string& dir, bool gemv = false) {
  const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  for (const char* m : kModules)
    expect[awq_weight(L + m)] = gemv ? awq_gemv_values(file, L + m) : awq_values(file, L + m);
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 17;
        o.out_size = feed == Feed::Random ? 96 : 1 << 16;  // pieces of part of a row too
        const LoadResult r = load(dir, o);
        const std::string what = dir + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                 std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(std::string(ws::convention_name(r.convention)), "awq") << what;
        EXPECT_EQ(r.weight_names.size(), 5u) << what;
        EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
        }
        ASSERT_EQ(r.weights.count("lm_head.weight"), 1u) << what;  // plain, as stored
        EXPECT_EQ(r.weights.at("lm_head.weight").bytes.size(), out == ws::OutType::F16 ? 512u : 1024u) << what;
      }
}

TEST(AwqHub, DecodesAsAutoAwqReadsThePackedIntegers) {
  check_everywhere("awq");               // config.json, version gemm
  check_everywhere("awq-no-config");     // names and shapes alone
  check_everywhere("awq-quant-config");  // AutoAWQ's quant_config.json (w_bit, q_group_size)
  check_everywhere("awq-exllama");       // version exllama: the same GEMM tensors
}

TEST(AwqHub, DecodesGemvAsFromLinearPacksIt) {
  check_everywhere("awq-gemv", true);  // version gemv: [out, in / 8], padded qzeros and scales
}

// The GEMV fixture is laid out as from_linear lays it: natural lanes (input 1 of output 0 in
// lane 1), companions padded to calculate_zeros_width(64, 32) = 4 words, the padding zero.
TEST(AwqHub, GemvFixtureHoldsFromLinearsLayout) {
  const Bytes file = read_file(kHub + "/awq-gemv/model.safetensors");
  const std::string D = L + "mlp.down_proj";
  const Stored qw = stored(file, D + ".qweight"), qz = stored(file, D + ".qzeros"), sc = stored(file, D + ".scales");
  EXPECT_EQ(qw.shape, (std::vector<uint64_t>{32, 8}));
  EXPECT_EQ(qz.shape, (std::vector<uint64_t>{32, 4}));
  EXPECT_EQ(sc.shape, (std::vector<uint64_t>{32, 32}));
  for (uint64_t o = 0; o < 32; ++o) {
    EXPECT_EQ(u32_at(qz.bytes, 4 * o) >> 8, 0u) << o;  // lanes past the 2 groups
    for (uint64_t c = 1; c < 4; ++c) EXPECT_EQ(u32_at(qz.bytes, 4 * o + c), 0u) << o;
    for (uint64_t g = 2; g < 32; ++g) EXPECT_EQ(f16_at(sc.bytes, 32 * o + g), 0.0f) << o;
  }
  const std::vector<float> v = awq_gemv_values(file, D);
  const uint32_t w0 = u32_at(qw.bytes, 0), z0 = u32_at(qz.bytes, 0);
  EXPECT_EQ(v[1], f16_at(sc.bytes, 0) * float(int32_t((w0 >> 4) & 15) - int32_t(z0 & 15)));
  EXPECT_EQ(v[64 + 32], f16_at(sc.bytes, 33) *
                            float(int32_t(u32_at(qw.bytes, 12) & 15) - int32_t((u32_at(qz.bytes, 4) >> 4) & 15)));
}

TEST(AwqHub, GemvWeightIsParameterisedAndStreamsAsStored) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& ld) {
    const uint32_t i = hubtest::weight_index(ld, awq_weight(L + "self_attn.k_proj"));
    if (i == ld.weight_count()) return;
    const ws::LogicalWeight& w = ld.weight(i);
    seen = true;
    EXPECT_EQ(w.shape[0], 32u);  // out
    EXPECT_EQ(w.shape[1], 96u);  // in
    EXPECT_EQ(w.format, ws::QuantFormat::GptqPacked);
    EXPECT_FALSE(w.awq_packed);
    EXPECT_EQ(w.awq_gemv_zero_words, 4u);
    EXPECT_FALSE(w.gptq_transposed());
    const ws::DequantSpec s = w.spec();
    EXPECT_FALSE(s.gptq_awq_zeros);
    EXPECT_EQ(s.gptq_zero_words, 4u);
    EXPECT_EQ(s.gptq_zero_add, 0u);
    EXPECT_EQ(s.gptq_groups, 3u);
    ws::QuantParameter q[ws::kMaxQuantParameters];
    ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), 5u);
    EXPECT_EQ(q[2].number, 32u);  // group
    EXPECT_STREQ(q[3].text, "gemv");
    // Plan numbers: no transposition; sequentially the qweight ([32, 12] words: 1,536 B) waits
    // for its companions (qzeros [32, 4] words: 512 B, scales [32, 32] halves: 2,048 B), which
    // come after it in the file; seekable reads the companions, then streams the qweight.
    const ws::LoadPlan p = ws::plan_weight(*ld.model(), i, 1 << 20);
    EXPECT_EQ(p.sequential_scratch, 1536u + 512u + 2048u);
    EXPECT_EQ(p.seekable_scratch, 1536u + 512u + 2048u);
    EXPECT_EQ(ws::plan_weight(*ld.model(), i, 1024).seekable_scratch, 1024u + 512u + 2048u);
  };
  const LoadResult r = load("awq-gemv", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_TRUE(seen);
}

// The interleave is real: decoding the words in GPTQ's lane order would give other values, and
// the fixture's first word holds output 8c + AWQ_ORDER[j] in lane j.
TEST(AwqHub, FixtureHoldsTheInterleave) {
  const Bytes file = read_file(kHub + "/awq/model.safetensors");
  const Stored qw = stored(file, L + "mlp.down_proj.qweight");
  const std::vector<float> v = awq_values(file, L + "mlp.down_proj");
  // Output 1 of input 0 is lane 4 (AWQ_ORDER[4] = 1), not lane 1.
  const uint32_t w0 = u32_at(qw.bytes, 0);
  EXPECT_NE((w0 >> 4) & 15, (w0 >> 16) & 15);
  const Stored qz = stored(file, L + "mlp.down_proj.qzeros"), sc = stored(file, L + "mlp.down_proj.scales");
  const int32_t q = int32_t((w0 >> 16) & 15), z = int32_t((u32_at(qz.bytes, 0) >> 16) & 15);
  EXPECT_EQ(v[64], f16_at(sc.bytes, 1) * float(q - z));  // row 1 (output 1), input 0
}

TEST(AwqHub, WeightIsNamedShapedAndParameterised) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& ld) {
    const uint32_t i = hubtest::weight_index(ld, L + "self_attn.k_proj.weight");
    if (i == ld.weight_count()) return;
    const ws::LogicalWeight& w = ld.weight(i);
    seen = true;
    EXPECT_EQ(w.rank, 2u);
    EXPECT_EQ(w.shape[0], 32u);  // out
    EXPECT_EQ(w.shape[1], 96u);  // in
    EXPECT_EQ(w.format, ws::QuantFormat::GptqPacked);
    EXPECT_TRUE(w.awq_packed);
    const ws::DequantSpec s = w.spec();
    EXPECT_TRUE(s.gptq_awq_zeros);
    EXPECT_EQ(s.gptq_zero_add, 0u);
    EXPECT_EQ(s.gptq_groups, 3u);
    ws::QuantParameter q[ws::kMaxQuantParameters];
    ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), 5u);
    EXPECT_STREQ(q[0].text, "awq");
    EXPECT_EQ(q[1].number, 4u);   // bits
    EXPECT_EQ(q[2].number, 32u);  // group
    EXPECT_STREQ(q[3].text, "gemm");
    EXPECT_STREQ(q[4].text, "F16");
    const ws::LogicalModel& m = *ld.model();
    ws::PieceRole role;
    EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Packed), &role), i);
    EXPECT_EQ(role, ws::PieceRole::Packed);
    EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Biases), &role), i);  // qzeros
    EXPECT_EQ(role, ws::PieceRole::Biases);
    EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Scales), &role), i);
    // Plan numbers: both modes hold the stored qweight ([96, 4] words: 1,536 B) and every
    // companion (qzeros [3, 4] words, scales [3, 32] halves), plus the transposition buffer.
    const ws::LoadPlan p = ws::plan_weight(m, i, 1 << 20);
    EXPECT_EQ(p.sequential_scratch, 1536u + 3u * 4 * 4 + 3u * 32 * 2 + ws::kTransposeScratchBytes);
    EXPECT_EQ(p.seekable_scratch, p.sequential_scratch);
  };
  const LoadResult r = load("awq", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_TRUE(seen);
}

// The config's other spellings and values, over the awq fixture's tensors: version case and the
// layouts that store GEMM decode; GEMV, gemv_fast, marlin, llm-awq and zero_point false are refused
// by name; bits other than 4 by their bits; a group that does not divide the inputs.
TEST(AwqHub, ConfigVariants) {
  const Bytes model = read_file(kHub + "/awq/model.safetensors");
  auto run = [&](const std::string& section) {
    const std::string t = "{\"quantization_config\": {" + section + "}}";
    HostOptions o;
    return load_memory({{"model.safetensors", model}, {"config.json", Bytes(t.begin(), t.end())}}, o);
  };
  for (const char* v : {"\"GEMM\"", "\"Exllama\"", "\"ipex\""}) {
    const LoadResult r = run(std::string("\"quant_method\": \"awq\", \"bits\": 4, \"version\": ") + v);
    EXPECT_EQ(r.code, ws::Status::Ok) << v << ": " << r.verdict();
    EXPECT_EQ(std::string(ws::convention_name(r.convention)), "awq") << v;
  }
  for (const char* v : {"gemv_fast", "marlin"}) {
    const LoadResult r = run(std::string("\"quant_method\": \"awq\", \"version\": \"") + v + "\"");
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << v << ": " << r.verdict();
    EXPECT_EQ(r.detail, std::string("awq version ") + v + " (the GEMM layout, exllama/ipex which store it, and GEMV are decoded)");
    EXPECT_EQ(r.tensor, L + "mlp.down_proj.qweight");
  }
  // GEMV: a group calculate_zeros_width raises for (absent, -1, 48) is refused by name.
  for (const char* g : {"", ", \"group_size\": -1", ", \"group_size\": 48"}) {
    const LoadResult r = run(std::string("\"quant_method\": \"awq\", \"version\": \"GEMV\"") + g);
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << g << ": " << r.verdict();
    EXPECT_EQ(r.detail, "awq gemv group_size not 32, 64 or >= 128 (calculate_zeros_width takes no other)") << g;
  }
  {
    // GEMV over GEMM tensors: down_proj's qweight [64, 4] is out 64, in 32; its scales have 2 rows.
    const LoadResult r = run("\"group_size\": 32, \"quant_method\": \"awq\", \"version\": \"gemv\"");
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
    EXPECT_EQ(r.tensor, L + "mlp.down_proj.scales");
    EXPECT_EQ(r.found, 2u);
    EXPECT_EQ(r.expected, 64u);
  }
  {
    const LoadResult r = run("\"backend\": \"llm-awq\", \"quant_method\": \"awq\"");
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << r.verdict();
    EXPECT_EQ(r.detail, "awq backend llm-awq (MIT llm-awq's packing; AutoAWQ's GEMM layout is decoded)");
  }
  {
    const LoadResult r = run("\"backend\": \"autoawq\", \"quant_method\": \"awq\", \"zero_point\": true");
    EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
  }
  {
    const LoadResult r = run("\"quant_method\": \"awq\", \"zero_point\": false");
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << r.verdict();
    EXPECT_EQ(r.detail, "awq zero_point false (AutoAWQ writes no GEMM checkpoint without zero points)");
  }
  {
    const LoadResult r = run("\"bits\": 3, \"quant_method\": \"awq\"");
    EXPECT_EQ(r.code, ws::Status::ConventionBitsNotAllowed) << r.verdict();
    EXPECT_EQ(r.tensor, L + "mlp.down_proj.qweight");
    EXPECT_EQ(r.offset, entry_offset(model, L + "mlp.down_proj.qweight"));
    EXPECT_TRUE(r.has_found);
    EXPECT_EQ(r.found, 3u);
  }
  {
    // group_size 24 does not divide down_proj's 64 inputs (WQLinear_GEMM asserts it does).
    const LoadResult r = run("\"group_size\": 24, \"quant_method\": \"awq\"");
    EXPECT_EQ(r.code, ws::Status::ConventionGroupNotDividing) << r.verdict();
    EXPECT_EQ(r.tensor, L + "mlp.down_proj.scales");
  }
  {
    // group_size 64: one group for down_proj, but its scales have two rows.
    const LoadResult r = run("\"group_size\": 64, \"quant_method\": \"awq\"");
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
    EXPECT_EQ(r.tensor, L + "mlp.down_proj.scales");
    EXPECT_EQ(r.found, 2u);
    EXPECT_EQ(r.expected, 1u);
  }
}

// The malformed neighbours' found / expected values (their statuses, tensors and offsets are
// expected.json's).
TEST(AwqHub, ShapeErrorsSayWhatWasExpected) {
  {
    const LoadResult r = load("awq-qweight-cols", HostOptions());
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
    EXPECT_EQ(r.found, 5u);
    EXPECT_EQ(r.expected, 4u);
  }
  {
    const LoadResult r = load("awq-qzeros-shape", HostOptions());
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
    EXPECT_EQ(r.found, 32u);
    EXPECT_EQ(r.expected, 4u);
  }
  {
    const LoadResult r = load("awq-gemv-qzeros-unpadded", HostOptions());
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
    EXPECT_EQ(r.found, 1u);
    EXPECT_EQ(r.expected, 4u);
  }
  {
    const LoadResult r = load("awq-gemv-gemm-tensors", HostOptions());
    EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << r.verdict();
    EXPECT_EQ(r.found, 2u);
    EXPECT_EQ(r.expected, 64u);
  }
}

}  // namespace
