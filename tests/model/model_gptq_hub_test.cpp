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

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../../lib/src/conventions/module_regex.h"
#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::read_file;
using hubtest::stored;
using hubtest::u32_at;
using hubtest::Stored;

using hubtest::output_of;
using hubtest::load;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

// The logical weight's name for module `m` (its stored tensors are m + ".qweight", ...): one
// place, so that renaming GPTQ's logical weights is one line here.
std::string weight_name(const std::string& m) { return m + ".weight"; }

float f16_at(const Bytes& b, size_t i) {
  _Float16 h;
  memcpy(&h, b.data() + 2 * i, 2);
  return float(h);
}

// 3 bits: code k of each 32 is bits 3k .. 3k + 2 of 3 consecutive words read as one
// little-endian bit string (`word(n)` gives the n-th word of the run, `base` its first).
uint32_t code3(const std::function<uint32_t(uint64_t)>& word, uint64_t base, uint32_t k) {
  const uint64_t bit = 3u * k;
  uint64_t two = word(base + bit / 32);
  if (bit / 32 + 1 < 3) two |= uint64_t(word(base + bit / 32 + 1)) << 32;
  return uint32_t(two >> (bit % 32)) & 7u;
}

// The module's weight [out, in], from its stored integers: q = (qweight[i / per][o] >> bits *
// (i % per)) & mask; zero = (qzeros[g][o / per] >> bits * (o % per)) & mask, + 1 for v1; value =
// scale[g][o] * (q - zero) with g = g_idx[i]. 3 bits: q = code3 of qweight's column o at rows
// 3 * (i / 32) .., zero = code3 of qzeros' row g at words 3 * (o / 32) ...
std::vector<float> gptq_values(const Bytes& file, const std::string& m, uint32_t bits, bool v1) {
  const Stored qw = stored(file, m + ".qweight"), qz = stored(file, m + ".qzeros"), sc = stored(file, m + ".scales"),
               gi = stored(file, m + ".g_idx");
  const uint32_t per = 32 / bits, mask = (1u << bits) - 1;
  const uint64_t out = qw.shape[1], in = qw.shape[0] * 32 / bits, zcols = qz.shape[1];
  std::vector<float> v;
  for (uint64_t o = 0; o < out; ++o)
    for (uint64_t i = 0; i < in; ++i) {
      const uint32_t g = u32_at(gi.bytes, i);
      int32_t q, z;
      if (bits == 3) {
        q = int32_t(code3([&](uint64_t r) { return u32_at(qw.bytes, r * out + o); }, 3 * (i / 32), uint32_t(i % 32)));
        z = int32_t(code3([&](uint64_t c) { return u32_at(qz.bytes, g * zcols + c); }, 3 * (o / 32), uint32_t(o % 32)));
      } else {
        q = int32_t((u32_at(qw.bytes, (i / per) * out + o) >> (bits * (i % per))) & mask);
        z = int32_t((u32_at(qz.bytes, g * zcols + o / per) >> (bits * (o % per))) & mask);
      }
      z += v1 ? 1 : 0;
      v.push_back(f16_at(sc.bytes, g * out + o) * float(q - z));
    }
  return v;
}



const char* const kModules[] = {"mlp.down_proj", "self_attn.q_proj"};

// Both modules decoded in every access, chunking and output type; the bias and the norm plain.
void check_everywhere(const std::string& dir, uint32_t bits, bool v1) {
  const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
  std::map<std::string, std::vector<float>> expect;
  for (const char* m : kModules) expect[weight_name(L + m)] = gptq_values(file, L + m, bits, v1);
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 13;
        // Pieces of part of a row too (at least a block's values: a 3-bit block is 32, 128 B in f32).
        o.out_size = feed == Feed::Random ? (bits == 3 ? 128 : 96) : 1 << 16;
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
  check_everywhere("gptq-3bit", 3, true);  // 32 codes in 3 words, codes 10 and 21 straddle
}

// GPTQModel's dynamic rules (hub/gptq-dynamic): "+:.*\.(?:down|gate)_proj$" gives down_proj 8
// bits (the section's group_size 32), up_proj keeps the section's 4, "-:model\.layers\.[0-9]+
// \.self_attn\.q_proj" leaves q_proj a plain F16 weight; values from the stored integers at the
// bits each module's rule gives, in every chunking and access.
TEST(GptqHub, DynamicRulesGiveEachModuleItsBits) {
  const std::string dir = "gptq-dynamic";
  const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
  const std::vector<float> down = gptq_values(file, L + "mlp.down_proj", 8, true);
  const std::vector<float> up = gptq_values(file, L + "mlp.up_proj", 4, true);
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 17;
        o.out_size = feed == Feed::Random ? 96 : 1 << 16;
        const LoadResult r = load(dir, o);
        const std::string what = std::to_string(int(out)) + " feed " + std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(r.weight_names.size(), 4u) << what;
        ASSERT_EQ(r.weights.count(weight_name(L + "mlp.down_proj")), 1u) << what;
        ASSERT_EQ(r.weights.count(weight_name(L + "mlp.up_proj")), 1u) << what;
        EXPECT_TRUE(r.weights.at(weight_name(L + "mlp.down_proj")).bytes == output_of(down, out)) << what;
        EXPECT_TRUE(r.weights.at(weight_name(L + "mlp.up_proj")).bytes == output_of(up, out)) << what;
        ASSERT_EQ(r.weights.count(L + "self_attn.q_proj.weight"), 1u) << what;  // plain, as stored
        EXPECT_EQ(r.weights.at(L + "self_attn.q_proj.weight").bytes.size(), out == ws::OutType::F16 ? 2048u : 4096u) << what;
      }
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  std::map<std::string, uint32_t> bits;
  o.on_ready = [&](const ws::ModelLoader& ld) {
    for (uint32_t i = 0; i < ld.weight_count(); ++i) {
      const ws::LogicalWeight& w = ld.weight(i);
      bits[std::string(w.name.data, w.name.size)] = w.params.bits;
      if (w.format == ws::QuantFormat::GptqPacked) {
        EXPECT_EQ(w.params.group, 32u);
      }
    }
  };
  ASSERT_EQ(load(dir, o).code, ws::Status::Ok);
  EXPECT_EQ(bits[weight_name(L + "mlp.down_proj")], 8u);
  EXPECT_EQ(bits[weight_name(L + "mlp.up_proj")], 4u);
}

// re.match semantics over the subset module_regex.h reads (anchored at the start only; `$` at
// the end), each verdict what Python's re.match gives; the rest refused by name.
TEST(GptqHub, DynamicRegexSubsetMatchesAsReMatch) {
  using ws::conv_detail::regex_match;
  using ws::conv_detail::regex_unsupported;
  struct Case {
    const char* re;
    const char* name;
    bool match;
  };
  const Case cases[] = {
      {".*\\.down_proj", "model.layers.0.mlp.down_proj", true},
      {"down_proj", "model.layers.0.mlp.down_proj", false},  // anchored at the start
      {"model\\.layers\\.1", "model.layers.10.mlp.up_proj", true},  // not at the end
      {"model\\.layers\\.1\\.", "model.layers.10.mlp.up_proj", false},
      {".*\\.(?:1[0-5])\\..*gate.*", "model.layers.13.mlp.gate_proj", true},
      {".*\\.(?:1[0-5])\\..*gate.*", "model.layers.16.mlp.gate_proj", false},
      {".*\\.(?:down|gate)_proj$", "model.layers.0.mlp.gate_proj", true},
      {".*\\.(?:down|gate)_proj$", "model.layers.0.mlp.gate_proj_x", false},
      {"model\\.layers\\.[0-9]+\\.self_attn\\.q_proj", "model.layers.27.self_attn.q_proj", true},
      {"model\\.layers\\.\\d+\\.self_attn\\.[qkv]_proj", "model.layers.3.self_attn.k_proj", true},
      {"model\\.layers\\.\\d+\\.self_attn\\.[^qk]_proj", "model.layers.3.self_attn.k_proj", false},
      {"^lm_head$", "lm_head", true},
      {"(model\\.)?layers\\.(0|1)\\.", "layers.1.mlp", true},
      {"(?:ab)+c", "ababc", true},
      {"(?:ab)+c", "c", false},
      {"a*?b", "aaab", true},
      {"x|model", "model.layers.0", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(regex_unsupported(c.re, strlen(c.re)), nullptr) << c.re;
    EXPECT_EQ(regex_match(c.re, strlen(c.re), c.name, strlen(c.name)), c.match) << c.re << " ~ " << c.name;
  }
  const std::pair<const char*, const char*> refused[] = {
      {".*layers\\.\\d{2}\\.", "{m,n} repetition"},
      {".*(?=down)", "lookaround, flags or named groups"},
      {"(?i)model", "lookaround, flags or named groups"},
      {"(a)\\1", "an escape other than punctuation, \\d, \\w, \\s"},
      {"a$b", "$ before the end"},
      {"(ab", "an unclosed ("},
      {"ab)", "an unbalanced )"},
      {"[ab", "an unclosed ["},
      {"*a", "a quantifier with nothing to repeat"},
      {"a**", "a nested quantifier"},
  };
  for (const auto& r : refused) {
    const char* why = regex_unsupported(r.first, strlen(r.first));
    ASSERT_NE(why, nullptr) << r.first;
    EXPECT_STREQ(why, r.second) << r.first;
    EXPECT_FALSE(regex_match(r.first, strlen(r.first), "ab", 2)) << r.first;
  }
  std::string long_re;
  for (int i = 0; i < 63; ++i) long_re += 'a';
  EXPECT_STREQ(regex_unsupported(long_re.data(), long_re.size()), "more than 62 atoms");
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
  // 3 bits: qweight [64 * 3 / 32, 32], qzeros [2 groups, 32 * 3 / 32]; output 0's zero point 0
  // stored as -1 fills its word from lane 0 up (lanes 0..9 and lane 10's low 2 bits), and input
  // 10 of output 0 straddles rows 0 and 1 of qweight's column 0.
  const Bytes b3 = read_file(kHub + "/gptq-3bit/model.safetensors");
  const Stored q3 = stored(b3, L + "mlp.down_proj.qweight"), z3 = stored(b3, L + "mlp.down_proj.qzeros"),
               s3 = stored(b3, L + "mlp.down_proj.scales");
  EXPECT_EQ(q3.shape, (std::vector<uint64_t>{6, 32}));
  EXPECT_EQ(z3.shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(u32_at(z3.bytes, 0), 0xFFFFFFFFu);
  const std::vector<float> v3 = gptq_values(b3, L + "mlp.down_proj", 3, true);
  EXPECT_EQ(v3[0], f16_at(s3.bytes, 0) * float(int32_t(u32_at(q3.bytes, 0) & 7) - 8));  // zero 7 + 1
  const int32_t q10 = int32_t((u32_at(q3.bytes, 0) >> 30) | ((u32_at(q3.bytes, 32) & 1u) << 2));
  EXPECT_EQ(v3[10], f16_at(s3.bytes, 0) * float(q10 - 8));
}

TEST(GptqHub, WeightIsNamedShapedAndParameterised) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& ld) {
    const uint32_t i = hubtest::weight_index(ld, weight_name(L + "mlp.down_proj"));
    if (i == ld.weight_count()) return;
    const ws::LogicalWeight& w = ld.weight(i);
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
      EXPECT_EQ(r.tensor, weight_name(L + "mlp.down_proj"));
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

// The GptqZeroSpill warning a v1 module's qzeros raise (warning.h), from the stored words: every
// lane whose code is all ones (a stored -1, read by vLLM as 2^bits) counted, the offset the first
// such lane's word (3 bits: its 3-word block); "" when it has none.
std::string spill_warning(const Bytes& file, const std::string& m, uint32_t bits) {
  const Stored qz = stored(file, m + ".qzeros");
  const uint32_t mask = (1u << bits) - 1, words = bits == 3 ? 3 : 1, lanes = bits == 3 ? 32 : 32 / bits;
  uint64_t count = 0, first = 0;
  for (uint64_t b = 0; b < qz.bytes.size() / 4; b += words) {
    uint32_t hits = 0;
    for (uint32_t k = 0; k < lanes; ++k) {
      const uint32_t code = bits == 3 ? code3([&](uint64_t n) { return u32_at(qz.bytes, n); }, b, k)
                                      : (u32_at(qz.bytes, b) >> (bits * k)) & mask;
      hits += code == mask;
    }
    if (hits && !count) first = qz.at + 4 * b;
    count += hits;
  }
  if (!count) return "";
  return "GptqZeroSpill@" + std::to_string(first) + " tensor=" + m + ".qzeros file=model.safetensors weight=" +
         weight_name(m) + " count=" + std::to_string(count);
}

// GPTQ v1's zero spill is a warning, decoded all the same (issue #28): Validate reads every byte
// and warns of every v1 module whose qzeros hold an all-ones lane, Decode of the selected ones —
// the same warnings in every chunking, seekable and sequential (the qzeros scanned as read, by
// range or as the stream passes, units split across pieces joined); Headers reads no data and
// warns of none; gptq_v2 stores a zero point of 0 as 0 and warns of none.
TEST(GptqHub, V1ZeroSpillIsAWarningWithItsTensorOffsetAndCount) {
  struct Case {
    const char* dir;
    uint32_t bits;
  };
  for (const Case c : {Case{"gptq-v1-zero-spill", 4}, Case{"gptq-3bit", 3}, Case{"gptq-2bit", 2}, Case{"gptq-8bit-v2", 8}}) {
    const Bytes file = read_file(kHub + "/" + c.dir + "/model.safetensors");
    std::vector<std::string> all;
    for (const char* m : kModules)
      if (std::string(c.dir) != "gptq-8bit-v2")
        if (const std::string w = spill_warning(file, L + m, c.bits); !w.empty()) all.push_back(w);
    std::sort(all.begin(), all.end());
    if (std::string(c.dir) == "gptq-v1-zero-spill") {
      ASSERT_EQ(all.size(), 1u);  // down_proj's first word is all ones (q_proj has no zero point 0)
      EXPECT_NE(all[0].find("down_proj.qzeros file"), std::string::npos);
    }
    if (std::string(c.dir) == "gptq-3bit") {
      ASSERT_FALSE(all.empty());
    }
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Validate, ws::ModelLoadMode::Decode, ws::ModelLoadMode::Headers})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
        for (bool seekable : {true, false}) {
          HostOptions o;
          o.mode = mode;
          o.feed = feed;
          o.seekable = seekable;
          o.seed = 5;
          std::vector<std::string> want = mode == ws::ModelLoadMode::Headers ? std::vector<std::string>{} : all;
          if (mode == ws::ModelLoadMode::Decode) {  // one module selected: its warning only
            const std::string m = feed == Feed::OneByte ? "self_attn.q_proj" : "mlp.down_proj";
            o.select_all = false;
            o.select = {weight_name(L + m)};
            want.clear();
            for (const std::string& w : all)
              if (w.find(m + ".qzeros") != std::string::npos) want.push_back(w);
          }
          const LoadResult r = load(c.dir, o);
          const std::string what = std::string(c.dir) + " mode " + std::to_string(int(mode)) + " feed " +
                                   std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
          ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
          EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
          std::vector<std::string> got = r.warnings;
          std::sort(got.begin(), got.end());
          EXPECT_EQ(got, want) << what;
        }
  }
}

TEST(GptqHub, WarningNamesDescriptionsAndMessageComeFromTheLibrary) {
  EXPECT_STREQ(ws::warning_name(ws::WarningCode::GptqZeroSpill), "GptqZeroSpill");
  ws::WarningCode c;
  ASSERT_TRUE(ws::warning_from_name("GptqZeroSpill", &c));
  EXPECT_EQ(c, ws::WarningCode::GptqZeroSpill);
  EXPECT_FALSE(ws::warning_from_name("NoSuchWarning", &c));
  EXPECT_STREQ(ws::warning_name(ws::WarningCode::Count_), "Unknown");
  ws::Warning w;
  w.code = ws::WarningCode::GptqZeroSpill;
  w.count = 12;
  char buf[1024];
  const size_t n = ws::warning_message(w, buf, sizeof buf);
  ASSERT_LT(n, sizeof buf);
  EXPECT_EQ(std::string(buf), std::string(ws::warning_description(w.code)) + ": 12 in this tensor. " +
                                  ws::warning_fix(w.code));
  // Cut to fit, NUL-terminated, the full length returned.
  char small[8];
  EXPECT_EQ(ws::warning_message(w, small, sizeof small), n);
  EXPECT_EQ(std::string(small), std::string(buf, 7));
}
