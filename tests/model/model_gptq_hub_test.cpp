// GPTQ checkpoints (issue #28): recognised by config.json's / quantize_config.json's quant_method
// "gptq" or, without one, by `.qweight` + `.qzeros` + `.scales` with GPTQ's shapes, and decoded to
// [out, in] as vLLM reads them (csrc/quantization/gptq/q_gemm.cu: each zero lane (qzeros >>
// shift) & mask, + 1 for checkpoint_format "gptq"; value scale[g][o] * (q - zero), g = g_idx[i]) —
// recomputed here from the fixtures' stored integers, f32 exactly and f16 as that rounded to
// nearest even, in every chunking, seekable and sequential, with output pieces smaller than a row.
// Fixtures: tests/data/conventions/hub/gptq* (tools/samplegen/gptq_fixtures.cpp, laid out as
// AutoGPTQ's / GPTQModel's `pack`).
#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::output_of;
using hubtest::load;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

Bytes read_file(const std::string& path) {
  Bytes b;
  EXPECT_TRUE(modeltest::disk_files("")(path, &b)) << path;
  return b;
}

// A stored tensor's bytes, absolute offset and shape, from the file's header (the test's own
// reading).
struct Stored {
  uint64_t at = 0;
  Bytes bytes;
  std::vector<uint64_t> shape;
};
Stored stored(const Bytes& file, const std::string& name) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t e = h.find("\"" + name + "\":");
  EXPECT_NE(e, std::string::npos) << name;
  Stored s;
  size_t p = h.find("\"shape\":[", e) + 9;
  while (h[p] != ']') {
    s.shape.push_back(strtoull(h.c_str() + p, nullptr, 10));
    p = h.find_first_of(",]", p);
    if (h[p] == ',') ++p;
  }
  const size_t o = h.find("\"data_offsets\":[", e) + 16;
  const uint64_t a = strtoull(h.c_str() + o, nullptr, 10);
  const uint64_t b = strtoull(h.c_str() + h.find(',', o) + 1, nullptr, 10);
  s.at = 8 + n + a;
  s.bytes.assign(file.begin() + long(s.at), file.begin() + long(8 + n + b));
  return s;
}

uint32_t u32_at(const Bytes& b, size_t i) {
  uint32_t v;
  memcpy(&v, b.data() + 4 * i, 4);
  return v;
}
float f16_at(const Bytes& b, size_t i) {
  _Float16 h;
  memcpy(&h, b.data() + 2 * i, 2);
  return float(h);
}

// The module's weight [out, in], from its stored integers: q = (qweight[i / per][o] >> bits *
// (i % per)) & mask; zero = (qzeros[g][o / per] >> bits * (o % per)) & mask, + 1 for v1; value =
// scale[g][o] * (q - zero) with g = g_idx[i].
std::vector<float> gptq_values(const Bytes& file, const std::string& m, uint32_t bits, bool v1) {
  const Stored qw = stored(file, m + ".qweight"), qz = stored(file, m + ".qzeros"), sc = stored(file, m + ".scales"),
               gi = stored(file, m + ".g_idx");
  const uint32_t per = 32 / bits, mask = (1u << bits) - 1;
  const uint64_t out = qw.shape[1], in = qw.shape[0] * per, zcols = qz.shape[1];
  std::vector<float> v;
  for (uint64_t o = 0; o < out; ++o)
    for (uint64_t i = 0; i < in; ++i) {
      const uint32_t g = u32_at(gi.bytes, i);
      const int32_t q = int32_t((u32_at(qw.bytes, (i / per) * out + o) >> (bits * (i % per))) & mask);
      const int32_t z = int32_t((u32_at(qz.bytes, g * zcols + o / per) >> (bits * (o % per))) & mask) + (v1 ? 1 : 0);
      v.push_back(f16_at(sc.bytes, g * out + o) * float(q - z));
    }
  return v;
}



const char* const kModules[] = {"mlp.down_proj", "self_attn.q_proj"};

// Both modules decoded in every access, chunking and output type; the bias and the norm plain.
void check_everywhere(const std::string& dir, uint32_t bits, bool v1) {
  const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  for (const char* m : kModules) expect[L + m + ".weight"] = gptq_values(file, L + m, bits, v1);
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 13;
        o.out_size = feed == Feed::Random ? 96 : 1 << 16;  // pieces of part of a row too
        const LoadResult r = load(dir, o);
        const std::string what = dir + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                 std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(std::string(ws::convention_name(r.convention)), "gptq") << what;
        EXPECT_EQ(r.weight_names.size(), 4u) << what;
        EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
        }
        ASSERT_EQ(r.weights.count(L + "self_attn.q_proj.bias"), 1u) << what;  // plain, as stored
        EXPECT_EQ(r.weights.at(L + "self_attn.q_proj.bias").bytes.size(), out == ws::OutType::F16 ? 64u : 128u) << what;
      }
}

TEST(GptqHub, DecodesAsVllmReadsThePackedIntegers) {
  check_everywhere("gptq", 4, true);                  // group_size -1, config.json
  check_everywhere("gptq-no-config", 4, true);        // names and shapes alone
  check_everywhere("gptq-quantize-config", 4, true);  // AutoGPTQ's quantize_config.json
  check_everywhere("gptq-desc-act", 4, true);         // g_idx in activation order
  check_everywhere("gptq-8bit-v2", 8, false);
  check_everywhere("gptq-2bit", 2, true);
  check_everywhere("gptq-v1-zero-spill", 4, true);
}

// The fixtures hold what they say: desc_act's g_idx is no input / group, and the v1 zero point 0
// is stored as -1 with its ones over the lanes above (each read as 15 + 1 = 16).
TEST(GptqHub, FixturesHoldTheCasesTheyName) {
  const Bytes desc = read_file(kHub + "/gptq-desc-act/model.safetensors");
  const Stored gi = stored(desc, L + "mlp.down_proj.g_idx");
  bool monotonic = true;
  for (uint32_t i = 0; i < 64; ++i) monotonic = monotonic && u32_at(gi.bytes, i) == i / 16;
  EXPECT_FALSE(monotonic);
  const Bytes spill = read_file(kHub + "/gptq-v1-zero-spill/model.safetensors");
  EXPECT_EQ(u32_at(stored(spill, L + "mlp.down_proj.qzeros").bytes, 0), 0xFFFFFFFFu);
  const std::vector<float> v = gptq_values(spill, L + "mlp.down_proj", 4, true);
  const Stored qw = stored(spill, L + "mlp.down_proj.qweight"), sc = stored(spill, L + "mlp.down_proj.scales");
  // Output 0, input 0: scale * (q - 16).
  EXPECT_EQ(v[0], f16_at(sc.bytes, 0) * float(int32_t(u32_at(qw.bytes, 0) & 15) - 16));
}

TEST(GptqHub, WeightIsNamedShapedAndParameterised) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& ld) {
    for (uint32_t i = 0; i < ld.weight_count(); ++i) {
      const ws::LogicalWeight& w = ld.weight(i);
      if (std::string(w.name.data, w.name.size) != L + "mlp.down_proj.weight") continue;
      seen = true;
      EXPECT_EQ(w.rank, 2u);
      EXPECT_EQ(w.shape[0], 32u);  // out
      EXPECT_EQ(w.shape[1], 64u);  // in
      EXPECT_EQ(w.format, ws::QuantFormat::GptqPacked);
      ws::QuantParameter q[ws::kMaxQuantParameters];
      ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), 6u);
      EXPECT_STREQ(q[0].text, "gptq");
      EXPECT_EQ(q[1].number, 8u);   // bits
      EXPECT_EQ(q[2].number, 32u);  // group
      EXPECT_STREQ(q[3].text, "gptq_v2");
      EXPECT_STREQ(q[4].text, "stored");
      EXPECT_STREQ(q[5].text, "F16");
      const ws::LogicalModel& m = *ld.model();
      ws::PieceRole role;
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Packed), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Packed);
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Biases), &role), i);  // qzeros
      EXPECT_EQ(role, ws::PieceRole::Biases);
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::GlobalScale), &role), i);  // g_idx
      // Plan numbers: both modes hold the stored qweight ([16, 32] words: 2,048 B) and every
      // companion (qzeros [2, 8] words, scales [2, 32] halves, g_idx 64 words), plus the
      // transposition buffer.
      const ws::LoadPlan p = ws::plan_weight(m, i, 1 << 20);
      EXPECT_EQ(p.sequential_scratch, 2048u + 2u * 8 * 4 + 2u * 32 * 2 + 64u * 4 + ws::kTransposeScratchBytes);
      EXPECT_EQ(p.seekable_scratch, p.sequential_scratch);
    }
  };
  const LoadResult r = load("gptq-8bit-v2", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_TRUE(seen);
}

// A g_idx value past the scales' groups: the header is GPTQ's, the value is refused when the
// weight decodes, at its byte, in every access.
TEST(GptqHub, GroupIndexPastTheGroupsIsRefusedAtItsByte) {
  const Bytes file = read_file(kHub + "/gptq-g-idx-range/model.safetensors");
  const Stored gi = stored(file, L + "mlp.down_proj.g_idx");
  ASSERT_EQ(u32_at(gi.bytes, 40), 2u);
  for (Feed feed : {Feed::Whole, Feed::OneByte})
    for (bool seekable : {true, false}) {
      HostOptions o;
      o.feed = feed;
      o.seekable = seekable;
      const LoadResult r = load("gptq-g-idx-range", o);
      EXPECT_EQ(r.code, ws::Status::QuantGroupIndexOutOfRange) << r.verdict();
      EXPECT_EQ(r.offset, gi.at + 4 * 40);
      EXPECT_EQ(r.tensor, L + "mlp.down_proj.weight");
    }
}

// The weight of `<m>.qweight` is named `<m>.weight` (composed: no header string spells it); a
// tensor already so named is a second weight of that name, refused at the packed tensor's entry.
TEST(GptqHub, ATensorNamedAsTheDequantizedWeightIsADuplicate) {
  const Bytes file = read_file(kHub + "/gptq/model.safetensors");
  uint64_t n = 0;
  memcpy(&n, file.data(), 8);
  std::string header(file.begin() + 8, file.begin() + 8 + long(n));
  const std::string from = "\"" + L + "self_attn.q_proj.bias\"", to = "\"" + L + "mlp.down_proj.weight\"";
  const size_t at = header.find(from);
  ASSERT_NE(at, std::string::npos);
  header.replace(at, from.size(), to + " ");  // one byte shorter: a space keeps the length
  Bytes edited(file);
  memcpy(edited.data() + 8, header.data(), header.size());
  for (bool seekable : {true, false}) {
    HostOptions o;
    o.seekable = seekable;
    o.feed = Feed::OneByte;
    const LoadResult r = hubtest::load_memory(
        {{"model.safetensors", edited}, {"config.json", read_file(kHub + "/gptq/config.json")}}, o);
    EXPECT_EQ(r.code, ws::Status::DuplicateTensorName) << r.verdict();
    EXPECT_EQ(r.tensor, L + "mlp.down_proj.qweight");
    EXPECT_EQ(r.offset, 8 + header.find("\"" + L + "mlp.down_proj.qweight\""));
    EXPECT_EQ(r.detail, L + "mlp.down_proj.weight is stored too: it names this qweight's weight");
  }
}

}  // namespace
