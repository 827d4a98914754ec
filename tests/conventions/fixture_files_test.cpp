// The committed convention fixtures (tests/data/conventions, written by `ws-make-samples
// --conventions`): they equal the generator's output; every logical weight of every fixture,
// read from the files in whole / 1-byte / random pieces and decoded in whole / 1-byte / random
// pieces, equals values computed from the unpacked integers and scales (conv_test_util_oracle.h);
// malformed variants fail with exact codes, offsets and names; the 3-shard model is one logical
// model across files.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "conv_test_util_oracle.h"
#include "convention_fixtures.h"
#include "quant_oracle.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"
#include "weightstream/mlx_config.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/reader.h"
#include "weightstream/sha256.h"
#include "weightstream/shard_index.h"

namespace {

namespace fs = std::filesystem;
using convtest::Bytes;
using convtest::oracle_values;
using convtest::Parsed;
using convtest::piece;
using convtest::Split;
using ws::PieceRole;
using ws::Status;
using wsoracle::f32;

const std::string kDir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions";

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
std::string read_text(const std::string& path) {
  std::vector<uint8_t> b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

// One file through the Reader in pieces (its size declared); every tensor's bytes kept.
void parse(const std::vector<uint8_t>& file, Split split, Parsed* p) { convtest::parse(file, split, 11, true, p); }

// lib's decoding, the packed bytes given to one Dequantizer in pieces per `split`.
std::vector<float> decode(const ws::LogicalWeight& w, const Bytes& b, Split split) {
  ws::DequantSpec s = w.spec();
  if (w.ref(PieceRole::Scales).present()) s.scales = piece(b, w, PieceRole::Scales).data();
  if (w.ref(PieceRole::Biases).present()) s.biases = piece(b, w, PieceRole::Biases).data();
  if (w.ref(PieceRole::GlobalScale).present()) {
    s.has_global_scale = true;
    s.global_scale = f32(piece(b, w, PieceRole::GlobalScale).data());
  }
  const auto& in = piece(b, w, PieceRole::Packed);
  std::vector<float> out(w.elements);
  ws::Dequantizer d;
  EXPECT_EQ(d.init(s), Status::Ok);
  size_t at = 0, written = 0;
  std::vector<size_t> cuts = convtest::pieces(in.size(), split, 5);
  for (size_t n : cuts) {
    size_t used = 0;
    while (used < n) {
      size_t in_used = 0, out_bytes = 0;
      EXPECT_EQ(d.decode(in.data() + at + used, n - used, &in_used, reinterpret_cast<uint8_t*>(out.data()) + written,
                         out.size() * 4 - written, &out_bytes),
                Status::Ok);
      if (in_used == 0 && out_bytes == 0) break;
      used += in_used;
      written += out_bytes;
    }
    at += n;
  }
  EXPECT_TRUE(d.done()) << w.name.data;
  EXPECT_EQ(written, out.size() * 4);
  return out;
}

// Every weight: lib's values (decoded in every split) equal the oracle's, bit for bit.
void check_values(const ws::LogicalModel& m, const Bytes& b, uint32_t* quantized) {
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LogicalWeight& w = m.weight(i);
    ASSERT_TRUE(w.decodable) << w.name.data;
    const std::vector<float> want = oracle_values(w, b, m.tensor(w.ref(PieceRole::Packed)).dtype());
    ASSERT_EQ(want.size(), w.elements);
    for (Split split : convtest::kSplits) {
      const std::vector<float> got = decode(w, b, split);
      for (size_t k = 0; k < got.size(); ++k)
        ASSERT_EQ(memcmp(&got[k], &want[k], 4), 0) << std::string(w.name.data, w.name.size) << " [" << k << "]";
    }
    if (w.params.mode != ws::QuantMode::None) ++*quantized;
  }
}

alignas(8) uint8_t g_arena[16384];

std::string name_of(const ws::Error& e) { return e.tensor_name ? std::string(e.tensor_name, e.tensor_name_size) : ""; }
std::string name_of(const ws::StrView& v) { return std::string(v.data, v.size); }

TEST(FixtureFiles, CommittedFixturesEqualTheGenerator) {
  std::set<std::string> committed;
  for (const auto& e : fs::recursive_directory_iterator(kDir))
    if (e.is_regular_file() && e.path().extension() != ".md") committed.insert(fs::relative(e.path(), kDir).string());
  std::set<std::string> generated;
  for (const samplegen::SampleFile& f : samplegen::build_convention_fixtures()) {
    generated.insert(f.path);
    EXPECT_TRUE(read_bytes(kDir + "/" + f.path) == f.bytes)
        << f.path << " differs from the generator: run ws-make-samples --conventions tests/data/conventions";
  }
  EXPECT_EQ(committed, generated);
  // 12 + uqff/ (two shards, residual, config.json) + issue #14: mlx-overrides/ (2), ollama-inferred/
  // (manifest, 2 blobs), uqff-f8q8/ (4), malformed/ (8 cases in 19 files, expected.json); issue #27:
  // hub/ (5 cases in 8 files, expected.json); FP8: 10 more cases in 19 files (fp8-block-default
  // has no config.json); gpt-oss mxfp4 / ModelOpt nvfp4: 7 malformed cases in 14 files, 2
  // other-config refusals in 4, 5 decoded models in 9; compressed-tensors: 8 cases in 15 files
  // (ct-no-config has no config.json), 5 decoded models in 10; issue #28's GPTQ: 9 more cases in 18 files
  // (gptq, gptq-no-config and gptq-quantize-config decoded now, their files the same count) and
  // the decoded-only gptq-g-idx-range (2); AWQ: 11 more cases in 21 files (awq-no-config has no
  // config.json; awq-quant-config decoded now, its files the same count); bitsandbytes: 10
  // malformed cases in 20 files, 4 decoded models in 7 (bnb-fp4-no-config has no config.json);
  // compressed-tensors' weight_shape disagreeing: 2 models in 4 (ct-weight-shape-*); weight_g_idx
  // all -1, past the groups, a group overfull: 3 models in 6 (ct-g-idx-*; ct-g-idx decodes now);
  // naive- / int- / float-quantized: 5 decoded models in 10 (ct-int8-*, ct-fp8-*), 3 cases in 6;
  // session 11's other helpers: ModelOpt FP8 (4 decoded, 4 malformed), AWQ GEMV's 2 neighbours,
  // GPTQ 3-bit's 2 neighbours and dynamic's 3 (32 files); compressed-tensors nvfp4 / mxfp4: 3
  // decoded and 5 malformed cases in 15 files (ct-nvfp4-no-config has no config.json); the module
  // lists' 8 cases in 17 files (modelopt-fp8-exclude-wildcard with its hf_quant_config.json).
  EXPECT_EQ(committed.size(), 283u);
}

// Every Ollama blob is named by its SHA-256, as `ollama pull` stores it, so the loader's default
// verification passes the fixtures and only the rule a malformed case breaks is wrong with it.
TEST(FixtureFiles, OllamaBlobsAreNamedByTheirDigest) {
  int blobs = 0;
  for (const auto& e : fs::recursive_directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.rfind("sha256-", 0) != 0) continue;
    const std::vector<uint8_t> bytes = read_bytes(e.path().string());
    uint8_t digest[ws::kSha256Bytes];
    char hex[ws::kSha256HexChars + 1];
    ws::sha256(bytes.data(), bytes.size(), digest);
    ws::sha256_to_hex(digest, hex);
    EXPECT_EQ(name, std::string("sha256-") + hex) << e.path();
    ++blobs;
  }
  EXPECT_EQ(blobs, 6);
}

// An MLX directory: model.safetensors + config.json, every split of both.
void check_mlx_dir(const std::string& dir, uint32_t want_weights, uint32_t want_quantized,
                   std::map<std::string, ws::QuantParams> want_params) {
  const std::vector<uint8_t> file = read_bytes(kDir + "/" + dir + "/model.safetensors");
  const std::string config = read_text(kDir + "/" + dir + "/config.json");
  ASSERT_FALSE(file.empty());
  // Unpadded header: the JSON's closing brace is the last header byte (MLX does not pad).
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(file[i]) << (8 * i);
  EXPECT_EQ(file[8 + n - 1], '}');
  for (Split split : convtest::kSplits) {
    ws::MlxQuantConfig cfg(g_arena, sizeof g_arena);
    ASSERT_EQ(convtest::feed_all(cfg, config, split), Status::Ok);
    Parsed p;
    parse(file, split, &p);
    ASSERT_EQ(p.status, Status::Ok);
    // Data order differs from key order: the header lists keys sorted, the data does not follow.
    std::vector<std::string> by_offset;
    for (uint32_t i = 0; i < p.reader->tensor_count(); ++i) by_offset.push_back(name_of(p.reader->tensors().get(i).name));
    EXPECT_FALSE(std::is_sorted(by_offset.begin(), by_offset.end()));
    ws::LogicalWeight storage[32];
    ws::LogicalModel m(storage, 32);
    m.add_table(&p.reader->tensors(), p.reader->data_start());
    ASSERT_EQ(m.build_mlx(&cfg), Status::Ok) << ws::status_name(m.error().code) << " " << name_of(m.error());
    EXPECT_EQ(m.weight_count(), want_weights);
    for (const auto& kv : want_params) {
      const uint32_t i = m.find(kv.first.data(), kv.first.size());
      ASSERT_NE(i, ws::kNoTensor) << kv.first;
      EXPECT_EQ(m.weight(i).params.mode, kv.second.mode) << kv.first;
      EXPECT_EQ(m.weight(i).params.bits, kv.second.bits) << kv.first;
      EXPECT_EQ(m.weight(i).params.group, kv.second.group) << kv.first;
    }
    Bytes b{p.bytes};
    uint32_t quantized = 0;
    check_values(m, b, &quantized);
    EXPECT_EQ(quantized, want_quantized);
  }
}

TEST(FixtureFiles, MlxDequantizesEverySplit) {
  const std::string L = "model.layers.0.";
  check_mlx_dir("mlx", 6, 4,
                {{L + "mlp.down_proj.weight", {ws::QuantMode::Affine, 4, 32}},
                 {L + "self_attn.q_proj.weight", {ws::QuantMode::Affine, 3, 32}},
                 {L + "mlp.up_proj.weight", {ws::QuantMode::Mxfp4, 4, 32}},
                 {L + "mlp.experts.gate_proj.weight", {ws::QuantMode::Affine, 4, 32}},
                 {L + "self_attn.q_proj.bias", {ws::QuantMode::None, 0, 0}}});
}

TEST(FixtureFiles, MlxBitsDequantizesEverySplit) {
  const std::string L = "model.layers.1.";
  check_mlx_dir("mlx-bits", 6, 5,
                {{L + "mlp.gate_proj.weight", {ws::QuantMode::Affine, 4, 64}},
                 {L + "mlp.down_proj.weight", {ws::QuantMode::Affine, 3, 32}},
                 {L + "self_attn.k_proj.weight", {ws::QuantMode::Affine, 5, 32}},
                 {L + "self_attn.v_proj.weight", {ws::QuantMode::Affine, 6, 64}},
                 {L + "self_attn.o_proj.weight", {ws::QuantMode::Affine, 2, 128}},
                 {"lm_head.weight", {ws::QuantMode::None, 0, 0}}});
}

TEST(FixtureFiles, MlxBitsCompanionsComeFirstSoSequentialNeedsOnlyCompanions) {
  const std::vector<uint8_t> file = read_bytes(kDir + "/mlx-bits/model.safetensors");
  ws::MlxQuantConfig cfg(g_arena, sizeof g_arena);
  ASSERT_EQ(convtest::feed_all(cfg, read_text(kDir + "/mlx-bits/config.json"), Split::Whole), Status::Ok);
  Parsed p;
  parse(file, Split::Whole, &p);
  ws::LogicalWeight storage[32];
  ws::LogicalModel m(storage, 32);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  ASSERT_EQ(m.build_mlx(&cfg), Status::Ok);
  uint64_t largest_companions = 0;
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    ws::LoadPlan lp = ws::plan_weight(m, i, 16);
    if (lp.piece_count == 1) continue;
    EXPECT_FALSE(lp.packed_before_companion);
    EXPECT_EQ(lp.sequential_scratch, lp.companion_bytes);
    if (lp.companion_bytes > largest_companions) largest_companions = lp.companion_bytes;
  }
  // down_proj: 9 F32 scales + 9 F32 biases, the largest companion set.
  EXPECT_EQ(largest_companions, 72u);
  EXPECT_EQ(ws::plan_model(m, 16).sequential_peak, 72u);
  EXPECT_FALSE(m.single_pieces());
}

// The same file read as plain tensors (no config): every weight one tensor, said without a sweep.
TEST(FixtureFiles, PlainModelIsSinglePiecesAndHoldsNothing) {
  const std::vector<uint8_t> file = read_bytes(kDir + "/mlx-bits/model.safetensors");
  Parsed p;
  parse(file, Split::Whole, &p);
  ws::LogicalWeight storage[32];
  ws::LogicalModel m(storage, 32);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  ASSERT_EQ(m.build_plain(), Status::Ok);
  EXPECT_TRUE(m.single_pieces());
  ASSERT_EQ(m.weight_count(), p.reader->tensors().count());
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::TensorInfo t = p.reader->tensors().get(i);
    EXPECT_TRUE(m.weight(i).name.equals(t.name.data, t.name.size));
    EXPECT_EQ(m.weight(i).elements, t.element_count());
    EXPECT_EQ(ws::plan_weight(m, i, 16).piece_count, 1u);
    EXPECT_EQ(m.find(t.name.data, t.name.size), i);
  }
  const ws::ModelPlan plan = ws::plan_model(m, 16);
  EXPECT_EQ(plan.sequential_peak, 0u);
  EXPECT_EQ(plan.seekable_peak, 0u);
}

// Ollama: the manifest names both blobs; each blob is one table of one model.
TEST(FixtureFiles, OllamaBlobsThroughTheManifestEverySplit) {
  const std::string manifest = read_text(kDir + "/ollama/manifest.json");
  for (Split split : convtest::kSplits) {
    ws::OllamaManifest man(g_arena, sizeof g_arena);
    ASSERT_EQ(convtest::feed_all(man, manifest, split), Status::Ok);
    ASSERT_EQ(man.layer_count(), 2u);
    const char* expert = "model.layers.0.mlp.experts.up_proj.weight";
    EXPECT_EQ(man.find_layer_for_tensor(expert, strlen(expert)), 1u);
    Parsed p[2];
    ws::LogicalWeight storage[32];
    ws::LogicalModel m(storage, 32);
    Bytes b;
    for (uint32_t l = 0; l < 2; ++l) {
      const ws::ManifestLayer layer = man.layer(l);
      const std::vector<uint8_t> blob = read_bytes(kDir + "/ollama/blobs/" + name_of(layer.blob_file));
      EXPECT_EQ(blob.size(), layer.size);
      parse(blob, split, &p[l]);
      ASSERT_EQ(p[l].status, Status::Ok);
      m.add_table(&p[l].reader->tensors(), p[l].reader->data_start());
      b.push_back(p[l].bytes);
    }
    ASSERT_EQ(m.build_ollama(), Status::Ok) << ws::status_name(m.error().code) << " " << name_of(m.error());
    EXPECT_EQ(m.weight_count(), 7u);  // a, b, c, lin.bias, norm.weight + 2 experts
    const std::map<std::string, ws::QuantParams> want = {
        {"a.weight", {ws::QuantMode::Affine, 4, 32}},
        {"b.weight", {ws::QuantMode::Mxfp8, 8, 32}},
        {"c.weight", {ws::QuantMode::Nvfp4, 4, 16}},
        {"model.layers.0.mlp.experts.down_proj.weight", {ws::QuantMode::Affine, 8, 64}},
        {expert, {ws::QuantMode::Mxfp4, 4, 32}},
        {"lin.bias", {ws::QuantMode::None, 0, 0}}};
    for (const auto& kv : want) {
      const ws::LogicalWeight& w = m.weight(m.find(kv.first.data(), kv.first.size()));
      EXPECT_EQ(w.params.mode, kv.second.mode) << kv.first;
      EXPECT_EQ(w.params.bits, kv.second.bits) << kv.first;
      EXPECT_EQ(w.params.group, kv.second.group) << kv.first;
    }
    const ws::LogicalWeight& e = m.weight(m.find(expert, strlen(expert)));
    EXPECT_EQ(e.rank, 3u);
    EXPECT_EQ(e.shape[0], 2u);
    EXPECT_EQ(e.shape[2], 64u);
    uint32_t quantized = 0;
    check_values(m, b, &quantized);
    EXPECT_EQ(quantized, 5u);
  }
}

// --- Malformed variants of the committed files: exact code, offset and weight name. ---

// Replaces the first `from` in the header (same length, so every offset stays valid).
std::vector<uint8_t> patched(std::vector<uint8_t> file, const std::string& from, const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  std::string s(file.begin(), file.end());
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  memcpy(file.data() + at, to.data(), to.size());
  return file;
}
uint64_t entry_of(const std::vector<uint8_t>& file, const std::string& name) {
  return std::string(file.begin(), file.end()).find("\"" + name + "\"");
}

struct Verdict {
  Status code = Status::Ok;
  uint64_t offset = 0;
  std::string name;
};
Verdict mlx_verdict(const std::vector<uint8_t>& file, const std::string& config) {
  ws::MlxQuantConfig cfg(g_arena, sizeof g_arena);
  Verdict v;
  // lookup() is only valid after finish() returned Ok.
  v.code = convtest::feed_all(cfg, config, Split::Whole);
  EXPECT_EQ(v.code, Status::Ok);
  if (v.code != Status::Ok) return v;
  Parsed p;
  parse(file, Split::Whole, &p);
  EXPECT_EQ(p.status, Status::Ok);
  ws::LogicalWeight storage[32];
  ws::LogicalModel m(storage, 32);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  v.code = m.build_mlx(&cfg);
  v.offset = m.error().offset;
  v.name = name_of(m.error());
  return v;
}

TEST(FixtureFiles, MlxBitsMalformedVariants) {
  const std::vector<uint8_t> file = read_bytes(kDir + "/mlx-bits/model.safetensors");
  const std::string config = read_text(kDir + "/mlx-bits/config.json");
  const std::string L = "model.layers.1.";
  // 6-bit v_proj declared 7 bits: MLX has no 7-bit mode.
  std::string c = config;
  c.replace(c.find("\"bits\": 6"), 9, "\"bits\": 7");
  Verdict v = mlx_verdict(file, c);
  EXPECT_EQ(v.code, Status::ConventionBitsNotAllowed);
  EXPECT_EQ(v.name, L + "self_attn.v_proj.weight");
  EXPECT_EQ(v.offset, entry_of(file, L + "self_attn.v_proj.weight"));
  // 3-bit down_proj (K = 96) with group 64: 64 does not divide the row.
  c = config;
  const std::string g32 = "{\"group_size\": 32, \"bits\": 3}";
  c.replace(c.find(g32), g32.size(), "{\"group_size\": 64, \"bits\": 3}");
  v = mlx_verdict(file, c);
  EXPECT_EQ(v.code, Status::ConventionGroupNotDividing);
  EXPECT_EQ(v.name, L + "mlp.down_proj.weight");
  EXPECT_EQ(v.offset, entry_of(file, L + "mlp.down_proj.weight"));
  // Biases of another dtype than the scales.
  std::vector<uint8_t> f = patched(file, "\"" + L + "mlp.down_proj.biases\":{\"dtype\":\"F32\"",
                                   "\"" + L + "mlp.down_proj.biases\":{\"dtype\":\"I32\"");
  v = mlx_verdict(f, config);
  EXPECT_EQ(v.code, Status::ConventionCompanionShape);
  EXPECT_EQ(v.name, L + "mlp.down_proj.weight");
  EXPECT_EQ(v.offset, entry_of(f, L + "mlp.down_proj.biases"));
  // Biases renamed away (same length): affine without biases.
  f = patched(file, "\"" + L + "self_attn.k_proj.biases\"", "\"" + L + "self_attn.k_proj.biasez\"");
  v = mlx_verdict(f, config);
  EXPECT_EQ(v.code, Status::ConventionMissingCompanion);
  EXPECT_EQ(v.name, L + "self_attn.k_proj.weight");
  // Scales renamed away: the biases have no scales.
  f = patched(file, "\"" + L + "self_attn.o_proj.scales\"", "\"" + L + "self_attn.o_proj.scalez\"");
  v = mlx_verdict(f, config);
  EXPECT_EQ(v.code, Status::ConventionOrphanCompanion);
  EXPECT_EQ(v.name, L + "self_attn.o_proj.biases");
  EXPECT_EQ(v.offset, entry_of(f, L + "self_attn.o_proj.biases"));
}

TEST(FixtureFiles, OllamaMalformedVariants) {
  const std::vector<uint8_t> blob =
      read_bytes(kDir + "/ollama/blobs/sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7");
  ws::QuantParams params;  // of down_proj, when the blob builds
  uint32_t plain = 0;      // weights with mode None, when the blob builds
  auto verdict = [&](const std::vector<uint8_t>& file) {
    Parsed p;
    parse(file, Split::Whole, &p);
    EXPECT_EQ(p.status, Status::Ok);
    ws::LogicalWeight storage[32];
    ws::LogicalModel m(storage, 32);
    m.add_table(&p.reader->tensors(), p.reader->data_start());
    Verdict v;
    v.code = m.build_ollama();
    v.offset = m.error().offset;
    v.name = name_of(m.error());
    const std::string down = "model.layers.0.mlp.experts.down_proj.weight";
    const uint32_t d = m.find(down.data(), down.size());
    params = d == ws::kNoTensor ? ws::QuantParams() : m.weight(d).params;
    plain = 0;
    for (uint32_t i = 0; v.code == Status::Ok && i < m.weight_count(); ++i) plain += m.weight(i).params.mode == ws::QuantMode::None;
    return v;
  };
  const std::string P = "model.layers.0.mlp.experts.";
  // An unknown quant_type (same length as "mxfp4").
  std::vector<uint8_t> f = patched(blob, "\"mxfp4\"", "\"mxfp5\"");
  Verdict v = verdict(f);
  EXPECT_EQ(v.code, Status::ConventionUnknownQuantType);
  EXPECT_EQ(v.name, P + "up_proj.weight");
  EXPECT_EQ(v.offset, entry_of(f, P + "up_proj.weight"));
  // No quant_type for down_proj (its key renamed) and none for the blob: Ollama infers the type
  // from the shapes (x/mlxrunner/model root.go inferQuantTypeFromShapes): 16 words per row and one
  // scale give int8 g64 (g8 = 16 * 4 / 1 = 64). Until issue #14 this was ConventionUnknownParams.
  f = patched(blob, "down_proj.weight.quant_type", "down_proj.weight.quant_typo");
  v = verdict(f);
  EXPECT_EQ(v.code, Status::Ok) << ws::status_name(v.code);
  EXPECT_EQ(params.mode, ws::QuantMode::Affine);
  EXPECT_EQ(params.bits, 8u);
  EXPECT_EQ(params.group, 64u);
  // A scale whose weight is gone: a tensor ending in ".scale" without a quantized base is an
  // ordinary tensor in Ollama (it only looks for "<main>.scale"; Gemma-4 MoE blobs hold
  // model.layers.N.router.scale). Until issue #14 this was ConventionOrphanCompanion. The packed
  // U32 weight (renamed) is then plain too: no "<its name>.scale" exists.
  f = patched(blob, "\"" + P + "up_proj.weight\"", "\"" + P + "up_proj.weighT\"");
  v = verdict(f);
  EXPECT_EQ(v.code, Status::Ok) << ws::status_name(v.code);
  EXPECT_EQ(plain, 2u);
  // int8 with group 32 declared but one scale per 64 values stored.
  v = verdict(patched(blob, P + "down_proj.weight.group_size\":\"64\"", P + "down_proj.weight.group_size\":\"32\""));
  EXPECT_EQ(v.code, Status::ConventionCompanionShape);
  EXPECT_EQ(v.name, P + "down_proj.weight");
}

// --- The 3-shard model: index -> shards -> one logical model. ---

struct Sharded {
  std::vector<uint8_t> index_arena = std::vector<uint8_t>(1 << 14);
  std::unique_ptr<ws::ShardIndex> index;
  Parsed shards[3];
  Bytes bytes;
};

// Reads the index, then each shard (`replaced` gives other bytes for a shard file name), checking
// each against the index; returns the first failing status.
Status load_sharded(Split split, Sharded* s, const std::map<std::string, std::vector<uint8_t>>& replaced = {}) {
  s->index.reset(new ws::ShardIndex(s->index_arena.data(), s->index_arena.size()));
  Status st = convtest::feed_all(*s->index, read_text(kDir + "/sharded-mlx/model.safetensors.index.json"), split);
  if (st != Status::Ok) return st;
  for (uint32_t i = 0; i < s->index->shard_count(); ++i) {
    const std::string name = name_of(s->index->shard_name(i));
    const auto r = replaced.find(name);
    const std::vector<uint8_t> file = r != replaced.end() ? r->second : read_bytes(kDir + "/sharded-mlx/" + name);
    parse(file, split, &s->shards[i]);
    if (s->shards[i].status != Status::Ok) return s->shards[i].status;
    st = s->index->check_shard(name.data(), name.size(), s->shards[i].reader->tensors());
    if (st != Status::Ok) return st;
    s->bytes.push_back(s->shards[i].bytes);
  }
  return s->index->finish_checks();
}

TEST(FixtureFiles, ShardedModelIsOneLogicalModelEverySplit) {
  for (Split split : convtest::kSplits) {
    Sharded s;
    ASSERT_EQ(load_sharded(split, &s), Status::Ok);
    ASSERT_EQ(s.index->shard_count(), 3u);
    EXPECT_EQ(s.index->tensor_count(), 9u);
    ws::MlxQuantConfig cfg(g_arena, sizeof g_arena);
    ASSERT_EQ(convtest::feed_all(cfg, read_text(kDir + "/sharded-mlx/config.json"), split), Status::Ok);
    ws::LogicalWeight storage[32];
    ws::LogicalModel m(storage, 32);
    for (uint32_t i = 0; i < 3; ++i) m.add_table(&s.shards[i].reader->tensors(), s.shards[i].reader->data_start());
    ASSERT_EQ(m.build_mlx(&cfg), Status::Ok) << ws::status_name(m.error().code);
    EXPECT_EQ(m.weight_count(), 5u);  // embed, q_proj, up_proj, norm, lm_head
    // Names resolve through the index to the shard holding them; q_proj spans shards 1 and 2.
    const std::string q = "model.layers.0.self_attn.q_proj.weight";
    const ws::LogicalWeight& w = m.weight(m.find(q.data(), q.size()));
    EXPECT_EQ(w.params.bits, 4u);
    // Tables are in the index's shard order (first mention: lm_head's shard 3 comes first).
    auto shard_no = [&](const char* file) { return s.index->find_shard(file, strlen(file)); };
    EXPECT_EQ(shard_no("model-00003-of-00003.safetensors"), 0u);
    EXPECT_EQ(w.ref(PieceRole::Packed).table, shard_no("model-00001-of-00003.safetensors"));
    EXPECT_EQ(w.ref(PieceRole::Scales).table, shard_no("model-00002-of-00003.safetensors"));
    EXPECT_EQ(w.ref(PieceRole::Biases).table, shard_no("model-00002-of-00003.safetensors"));
    for (PieceRole r : {PieceRole::Packed, PieceRole::Scales, PieceRole::Biases}) {
      const std::string piece_name = name_of(m.tensor(w.ref(r)).name);
      const uint32_t entry = s.index->find_tensor(piece_name.data(), piece_name.size());
      ASSERT_NE(entry, ws::kNoTensor);
      EXPECT_EQ(s.index->tensor_shard(entry), w.ref(r).table) << piece_name;
    }
    EXPECT_EQ(w.shape[0], 4u);
    EXPECT_EQ(w.shape[1], 32u);
    // Streaming the shards in order, the packed weight (64 B) waits for its companions (8 + 8 B).
    const uint32_t qi = m.find(q.data(), q.size());
    ws::LoadPlan lp = ws::plan_weight(m, qi, 16);
    EXPECT_TRUE(lp.packed_before_companion);
    EXPECT_EQ(lp.sequential_scratch, 64u + 16u);
    EXPECT_EQ(lp.seekable_scratch, 16u + 16u);
    uint32_t quantized = 0;
    check_values(m, s.bytes, &quantized);
    EXPECT_EQ(quantized, 2u);
  }
}

TEST(FixtureFiles, ShardedModelMissingShardOrTensorInTheWrongShard) {
  {  // Shard 2 missing: the index lists tensors no shard held (the first is q_proj's biases).
    Sharded s;
    s.index.reset(new ws::ShardIndex(s.index_arena.data(), s.index_arena.size()));
    ASSERT_EQ(convtest::feed_all(*s.index, read_text(kDir + "/sharded-mlx/model.safetensors.index.json"), Split::Whole),
              Status::Ok);
    for (uint32_t i = 0; i < 3; ++i) {
      const std::string name = name_of(s.index->shard_name(i));
      if (name == "model-00002-of-00003.safetensors") continue;
      parse(read_bytes(kDir + "/sharded-mlx/" + name), Split::Whole, &s.shards[i]);
      ASSERT_EQ(s.index->check_shard(name.data(), name.size(), s.shards[i].reader->tensors()), Status::Ok);
    }
    EXPECT_EQ(s.index->finish_checks(), Status::ShardTensorMissing);
    EXPECT_EQ(name_of(s.index->error()), "model.layers.0.mlp.up_proj.biases");  // first in index order
  }
  {  // norm.weight moved from shard 3 into shard 2 (both rewritten by the generator's writer).
    samplegen::ShardedFixture f = samplegen::sharded_fixture();
    f.shards[1].tensors.push_back(f.shards[2].tensors[1]);  // sorted: lm_head, model.norm.weight
    ASSERT_EQ(f.shards[1].tensors.back().name, "model.norm.weight");
    f.shards[1].data_order.push_back(f.shards[1].tensors.size() - 1);
    f.shards[2].tensors.pop_back();
    f.shards[2].data_order = {0};
    std::vector<uint8_t> shard2 = samplegen::serialize_raw(f.shards[1].tensors, f.shards[1].data_order,
                                                           {{"format", "mlx"}}, false);
    std::vector<uint8_t> shard3 = samplegen::serialize_raw(f.shards[2].tensors, f.shards[2].data_order,
                                                           {{"format", "mlx"}}, false);
    Sharded s;
    EXPECT_EQ(load_sharded(Split::Whole, &s,
                           {{"model-00002-of-00003.safetensors", shard2}, {"model-00003-of-00003.safetensors", shard3}}),
              Status::ShardTensorWrongShard);
    EXPECT_EQ(name_of(s.index->error()), "model.norm.weight");
    EXPECT_EQ(s.index->error().offset, entry_of(shard2, "model.norm.weight"));
  }
}

}  // namespace
