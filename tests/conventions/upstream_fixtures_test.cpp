// The fixtures of conventions as the upstream tools write them (issue #14; tests/data/conventions:
// mlx-overrides/, ollama-inferred/, uqff-f8q8/, written by ws-make-samples): their logical weights
// and params, every weight dequantized in whole / 1-byte / random pieces of both the files and the
// packed bytes, equal to values computed here from the packed integers and scales; UQFF's version
// found whichever order the files come in; and malformed/ — every case of its expected.json (the
// issue #16 regression among them) gives exactly that code, file, offset, tensor and values.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "conv_test_util_oracle.h"
#include "conv_test_util_uqff.h"
#include "convention_fixtures.h"
#include "malformed_fixtures.h"
#include "quant_oracle.h"
#include "uqff_fixtures.h"
#include "weightstream/conventions.h"
#include "weightstream/mlx_config.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/reader.h"

namespace {

using convtest::Bytes;
using convtest::Parsed;
using convtest::Split;
using uqfftest::FileStream;
using ws::PieceRole;
using ws::QuantMode;
using ws::Status;

const std::string kDir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions";
const std::string L = "model.layers.0.";

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
std::string read_text(const std::string& path) {
  const std::vector<uint8_t> b = read_bytes(path);
  return std::string(b.begin(), b.end());
}
std::string name_of(const ws::Error& e) { return e.tensor_name ? std::string(e.tensor_name, e.tensor_name_size) : ""; }
std::string name_of(const ws::StrView& v) { return std::string(v.data, v.size); }

alignas(8) uint8_t g_arena[16384];

// F8Q8 as mistral.rs decodes it (f8q8/mod.rs dequantize): q * (e4m3fn(d) / 448), every block, then
// the values past the logical count dropped.
std::vector<float> f8q8_values(const std::vector<uint8_t>& packed, uint64_t elements) {
  std::vector<float> y;
  for (size_t o = 0; o + 33 <= packed.size(); o += 33) {
    volatile float d = wsoracle::e4m3(packed[o]) / 448.0f;  // no 0x7F/0xFF scales in the fixtures
    for (int j = 0; j < 32; ++j) y.push_back(float(int8_t(packed[o + 1 + j])) * d);
  }
  EXPECT_GE(y.size(), elements);
  EXPECT_LT(y.size() - elements, 32u) << "more than the last block padded";
  y.resize(elements);
  return y;
}

// The oracle's values of `w` (quant_oracle.h formulas; F8Q8 above).
std::vector<float> want_values(const ws::LogicalModel& m, const ws::LogicalWeight& w, const Bytes& b) {
  if (w.format == ws::QuantFormat::F8Q8) return f8q8_values(convtest::piece(b, w, PieceRole::Packed), w.elements);
  return convtest::oracle_values(w, b, m.tensor(w.ref(PieceRole::Packed)).dtype());
}

// lib's values: the packed bytes given to one Dequantizer in pieces per `split`, into an output
// buffer of one block's room (the smallest the decoder takes).
std::vector<float> decoded(const ws::LogicalWeight& w, const Bytes& b, Split split) {
  ws::DequantSpec s = w.spec();
  if (w.ref(PieceRole::Scales).present()) s.scales = convtest::piece(b, w, PieceRole::Scales).data();
  if (w.ref(PieceRole::Biases).present()) s.biases = convtest::piece(b, w, PieceRole::Biases).data();
  if (w.ref(PieceRole::GlobalScale).present()) {
    s.has_global_scale = true;
    s.global_scale = wsoracle::f32(convtest::piece(b, w, PieceRole::GlobalScale).data());
  }
  const std::vector<uint8_t>& in = convtest::piece(b, w, PieceRole::Packed);
  ws::Dequantizer d;
  EXPECT_EQ(d.init(s), Status::Ok) << name_of(w.name);
  std::vector<uint8_t> out, buf(d.block_output_bytes());
  size_t at = 0;
  for (size_t n : convtest::pieces(in.size(), split, 9)) {
    size_t used = 0;
    while (used < n) {
      size_t in_used = 0, out_bytes = 0;
      EXPECT_EQ(d.decode(in.data() + at + used, n - used, &in_used, buf.data(), buf.size(), &out_bytes), Status::Ok);
      out.insert(out.end(), buf.begin(), buf.begin() + out_bytes);
      if (in_used == 0 && out_bytes == 0) break;
      used += in_used;
    }
    at += n;
  }
  EXPECT_TRUE(d.done()) << name_of(w.name);
  std::vector<float> v(out.size() / 4);
  memcpy(v.data(), out.data(), v.size() * 4);
  return v;
}

// Every weight of `m`: lib's values in every split equal the oracle's, bit for bit. Returns how
// many were quantized.
uint32_t check_values(const ws::LogicalModel& m, const Bytes& b) {
  uint32_t quantized = 0;
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LogicalWeight& w = m.weight(i);
    EXPECT_TRUE(w.decodable) << name_of(w.name);
    if (!w.decodable) continue;
    const std::vector<float> want = want_values(m, w, b);
    EXPECT_EQ(want.size(), w.elements) << name_of(w.name);
    for (Split split : convtest::kSplits) {
      const std::vector<float> got = decoded(w, b, split);
      EXPECT_EQ(got.size(), want.size()) << name_of(w.name);
      for (size_t k = 0; k < got.size() && k < want.size(); ++k)
        if (memcmp(&got[k], &want[k], 4) != 0) {
          ADD_FAILURE() << name_of(w.name) << " [" << k << "]: " << got[k] << " vs " << want[k];
          break;
        }
    }
    quantized += w.params.mode != QuantMode::None || w.format == ws::QuantFormat::F8Q8;
  }
  return quantized;
}

struct Want {
  QuantMode mode;
  uint32_t bits, group;
  std::vector<uint64_t> shape;
};
void check_params(const ws::LogicalModel& m, const std::map<std::string, Want>& want) {
  EXPECT_EQ(m.weight_count(), want.size());
  for (const auto& kv : want) {
    const uint32_t i = m.find(kv.first.data(), kv.first.size());
    ASSERT_NE(i, ws::kNoTensor) << kv.first;
    const ws::LogicalWeight& w = m.weight(i);
    EXPECT_EQ(w.params.mode, kv.second.mode) << kv.first;
    EXPECT_EQ(w.params.bits, kv.second.bits) << kv.first;
    EXPECT_EQ(w.params.group, kv.second.group) << kv.first;
    EXPECT_EQ(std::vector<uint64_t>(w.shape, w.shape + w.rank), kv.second.shape) << kv.first;
  }
}

// --- mlx-overrides/: a top-level mxfp4 section and overrides that stand alone. ---

TEST(UpstreamFixtures, MlxOverridesStandAloneEverySplit) {
  const std::vector<uint8_t> file = read_bytes(kDir + "/mlx-overrides/model.safetensors");
  const std::string config = read_text(kDir + "/mlx-overrides/config.json");
  const std::map<std::string, Want> want = {
      {L + "mlp.experts.gate_proj.weight", {QuantMode::Mxfp4, 4, 32, {2, 4, 64}}},  // the top level
      {L + "mlp.gate.weight", {QuantMode::Affine, 8, 64, {4, 64}}},  // {"group_size":64,"bits":8}: affine
      {L + "mlp.shared_expert_gate.weight", {QuantMode::Affine, 8, 64, {1, 64}}},  // {"bits": 8}: g64
      {L + "self_attn.k_proj.weight", {QuantMode::Affine, 4, 128, {2, 128}}},      // {"group_size": 128}
      {L + "self_attn.q_proj.weight", {QuantMode::Nvfp4, 4, 16, {2, 64}}},         // {"mode": "nvfp4"}
      {L + "self_attn.v_proj.weight", {QuantMode::Mxfp4, 4, 32, {2, 64}}},         // true
      {L + "self_attn.o_proj.weight", {QuantMode::Mxfp8, 8, 32, {2, 64}}},         // {"mode": "mxfp8"}
      {L + "mlp.down_proj.weight", {QuantMode::None, 0, 0, {4, 8}}},               // {}
      {"lm_head.weight", {QuantMode::None, 0, 0, {4, 8}}},                         // false
      {"model.norm.weight", {QuantMode::None, 0, 0, {8}}},
  };
  for (Split split : convtest::kSplits) {
    ws::MlxQuantConfig cfg(g_arena, sizeof g_arena);
    ASSERT_EQ(convtest::feed_all(cfg, config, split), Status::Ok);
    Parsed p;
    convtest::parse(file, split, 5, true, &p);
    ASSERT_EQ(p.status, Status::Ok);
    ws::LogicalWeight storage[32];
    ws::LogicalModel m(storage, 32);
    m.add_table(&p.reader->tensors(), p.reader->data_start());
    ASSERT_EQ(m.build_mlx(&cfg), Status::Ok) << ws::status_name(m.error().code) << " " << name_of(m.error());
    check_params(m, want);
    // The router gate is affine: it has its .biases (the mxfp4 top level has none).
    const std::string gate = L + "mlp.gate.weight";
    EXPECT_TRUE(m.weight(m.find(gate.data(), gate.size())).ref(PieceRole::Biases).present());
    EXPECT_EQ(check_values(m, Bytes{p.bytes}), 7u);
  }
}

// --- ollama-inferred/: a blob without quant_type, and type names as other writers spell them. ---

TEST(UpstreamFixtures, OllamaInferredThroughTheManifestEverySplit) {
  const std::string manifest = read_text(kDir + "/ollama-inferred/manifest.json");
  const std::string E = L + "mlp.experts.";
  const std::map<std::string, Want> want = {
      {L + "self_attn.q_proj.weight", {QuantMode::Affine, 4, 32, {4, 64}}},   // 8 words / 2 scales: int4 g32
      {L + "self_attn.k_proj.weight", {QuantMode::Affine, 8, 64, {2, 64}}},   // 16 / 1: int8 g64
      {L + "mlp.up_proj.weight", {QuantMode::Affine, 8, 128, {2, 128}}},      // 32 / 1: int8 g128
      {L + "router.scale", {QuantMode::None, 0, 0, {8}}},                      // no base: plain
      {"model.norm.weight", {QuantMode::None, 0, 0, {8}}},
      {E + "gate_proj.weight", {QuantMode::Affine, 8, 32, {2, 2, 64}}},       // blob "INT8", shapes: g32
      {E + "down_proj.weight", {QuantMode::Nvfp4, 4, 16, {2, 2, 64}}},        // " Nvfp4 "
      {E + "up_proj.weight", {QuantMode::Affine, 4, 32, {2, 2, 64}}},         // "q4", shapes: g32
  };
  for (Split split : convtest::kSplits) {
    ws::OllamaManifest man(g_arena, sizeof g_arena);
    ASSERT_EQ(convtest::feed_all(man, manifest, split), Status::Ok);
    ASSERT_EQ(man.layer_count(), 2u);
    Parsed p[2];
    ws::LogicalWeight storage[32];
    ws::LogicalModel m(storage, 32);
    Bytes b;
    for (uint32_t l = 0; l < 2; ++l) {
      const std::vector<uint8_t> blob = read_bytes(kDir + "/ollama-inferred/blobs/" + name_of(man.layer(l).blob_file));
      EXPECT_EQ(blob.size(), man.layer(l).size);
      convtest::parse(blob, split, 7 + l, true, &p[l]);
      ASSERT_EQ(p[l].status, Status::Ok);
      m.add_table(&p[l].reader->tensors(), p[l].reader->data_start());
      b.push_back(p[l].bytes);
    }
    // The first blob states no type at all: the manifest, not its metadata, makes it Ollama's.
    EXPECT_EQ(ws::convention_signal(p[0].reader->tensors()), ws::Convention::Plain);
    ASSERT_EQ(m.build_ollama(), Status::Ok) << ws::status_name(m.error().code) << " " << name_of(m.error());
    check_params(m, want);
    const std::string down = E + "down_proj.weight";
    EXPECT_TRUE(m.weight(m.find(down.data(), down.size())).ref(PieceRole::GlobalScale).present());
    EXPECT_EQ(check_values(m, b), 6u);
  }
}

// --- uqff-f8q8/: padded F8Q8 layers, the version in both shards, any file order. ---

std::vector<FileStream> uqff_streams(const std::string& dir, const std::vector<std::string>& names) {
  std::vector<FileStream> fs(names.size());
  for (size_t i = 0; i < names.size(); ++i) fs[i].bytes = read_bytes(kDir + "/" + dir + "/" + names[i]);
  return fs;
}

Bytes bytes_of(const std::vector<FileStream>& fs) {
  Bytes b;
  for (const FileStream& f : fs) b.push_back(f.tensor_bytes);
  return b;
}

TEST(UpstreamFixtures, UqffPaddedF8Q8InEveryFileOrderAndSplit) {
  const std::map<std::string, Want> want = {
      {L + "self_attn.q_proj.weight", {QuantMode::None, 0, 0, {3, 20}}},         // 60 values, 2 blocks
      {L + "self_attn.k_proj.weight", {QuantMode::None, 0, 0, {1, 32}}},         // 32 values, 1 block
      {L + "mlp.experts.down_proj.weight", {QuantMode::None, 0, 0, {2, 3, 7}}},  // 42 values, 2 blocks
      {L + "mlp.gate_proj.weight", {QuantMode::None, 0, 0, {5, 5}}},             // 25 values, 1 block
      {"model.norm.weight", {QuantMode::None, 0, 0, {4}}},
  };
  const std::vector<std::vector<std::string>> orders = {
      {"model-0.uqff", "model-1.uqff", "residual.safetensors"},
      {"residual.safetensors", "model-1.uqff", "model-0.uqff"},
      {"model-1.uqff", "residual.safetensors", "model-0.uqff"},
  };
  for (const auto& order : orders) {
    for (Split split : convtest::kSplits) {
      std::vector<FileStream> fs = uqff_streams("uqff-f8q8", order);
      std::vector<ws::LogicalWeight> storage(16);
      ws::LogicalModel m(storage.data(), 16);
      uqfftest::Outcome o = uqfftest::read_uqff(&fs, split, &m);
      ASSERT_EQ(o.status, Status::Ok) << order[0] << ": " << ws::status_name(o.status) << " " << o.name;
      EXPECT_EQ(m.uqff_version(0), 1u);
      EXPECT_EQ(m.uqff_version(1), 2u);
      EXPECT_EQ(m.uqff_version(2), 0u);
      // The first copy in the order given is the version's reference.
      const size_t first_shard = std::find_if(order.begin(), order.end(), [](const std::string& n) {
                                    return n != "residual.safetensors";
                                  }) - order.begin();
      EXPECT_EQ(m.uqff_version_ref(1).table, first_shard);
      check_params(m, want);
      for (uint32_t i = 0; i + 1 < m.weight_count(); ++i)
        if (m.weight(i).convention == ws::Convention::Uqff) {
          EXPECT_EQ(m.weight(i).format, ws::QuantFormat::F8Q8);
        }
      EXPECT_EQ(check_values(m, bytes_of(fs)), 4u);
    }
  }
}

// The first UQFF fixture keeps its version in model-0.uqff only: found there in any file order
// (until issue #14 only table 0 was looked at: UqffMissingVersion when residual came first).
TEST(UpstreamFixtures, UqffVersionInOneFileFoundInAnyOrder) {
  for (const auto& order : std::vector<std::vector<std::string>>{{"residual.safetensors", "model-1.uqff", "model-0.uqff"},
                                                                  {"model-1.uqff", "model-0.uqff", "residual.safetensors"}}) {
    std::vector<FileStream> fs = uqff_streams("uqff", order);
    std::vector<ws::LogicalWeight> storage(32);
    ws::LogicalModel m(storage.data(), 32);
    uqfftest::Outcome o = uqfftest::read_uqff(&fs, Split::Random, &m);
    ASSERT_EQ(o.status, Status::Ok) << ws::status_name(o.status) << " " << o.name;
    EXPECT_EQ(m.uqff_version(1), 2u);
    EXPECT_EQ(m.uqff_version_ref(0).table, uint32_t(std::find(order.begin(), order.end(), "model-0.uqff") - order.begin()));
    EXPECT_EQ(m.weight_count(), 12u);
  }
}

// A key other than the version in two files is still an error; so is a version nowhere.
TEST(UpstreamFixtures, UqffOtherDuplicatesAndNoVersion) {
  std::vector<FileStream> fs = uqff_streams("uqff-f8q8", {"model-0.uqff", "model-1.uqff", "residual.safetensors"});
  fs.push_back(FileStream());
  fs.back().bytes = read_bytes(kDir + "/uqff-f8q8/residual.safetensors");
  std::vector<ws::LogicalWeight> storage(16);
  ws::LogicalModel m(storage.data(), 16);
  uqfftest::Outcome o = uqfftest::read_uqff(&fs, Split::Whole, &m);
  EXPECT_EQ(o.status, Status::UqffDuplicateKey);
  EXPECT_EQ(o.name, "model.norm.weight");
  EXPECT_EQ(m.error_table(), 3u);
  std::vector<FileStream> res = uqff_streams("uqff-f8q8", {"residual.safetensors"});
  ws::LogicalModel m2(storage.data(), 16);
  o = uqfftest::read_uqff(&res, Split::Whole, &m2);
  EXPECT_EQ(o.status, Status::UqffMissingVersion);
  EXPECT_EQ(o.error.offset, 0u);
  EXPECT_EQ(m2.error_table(), ws::kNoTensor);
}

// A version-named tensor that is no U32 scalar has no slot (the slots hold 4 bytes): feeding its
// bytes, even without build_uqff(), writes nothing (ASan would see an overrun).
TEST(UpstreamFixtures, UqffVersionSlotsOnlyForScalars) {
  std::vector<samplegen::RawTensor> t = {{"uqff.version.major", "U32", {64}, std::vector<uint8_t>(256, 0xAB)}};
  const std::vector<uint8_t> file = samplegen::serialize_raw(t, {0}, {}, true);
  Parsed p;
  convtest::parse(file, Split::Whole, 1, true, &p);
  ASSERT_EQ(p.status, Status::Ok);
  std::vector<ws::LogicalWeight> storage(4);
  ws::LogicalModel m(storage.data(), 4);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  EXPECT_FALSE(m.uqff_wants(0, 0));
  EXPECT_EQ(m.feed_uqff(0, 0, m.piece_begin(ws::TensorRef{0, 0}), p.bytes[0].data(), p.bytes[0].size()), Status::Ok);
  EXPECT_EQ(m.build_uqff(), Status::UqffVersionNotScalar);
}

// The in-memory variants of uqff-f8q8 (the committed malformed/ dirs are three of them; the
// version copy that is not a U32 scalar is checked here only).
TEST(UpstreamFixtures, UqffF8Q8VariantsEverySplit) {
  for (const samplegen::UqffVariant& v : samplegen::uqff_f8q8_variants()) {
    Status code;
    ASSERT_TRUE(ws::status_from_name(v.status.c_str(), &code));
    const samplegen::UqffFile& file = v.fixture.files[v.file];
    const std::string at = v.at.empty() ? v.tensor : v.at;
    const uint64_t offset = v.data_offset ? samplegen::uqff_data_offset(file, at) : samplegen::uqff_entry_offset(file, at);
    for (Split split : convtest::kSplits) {
      std::vector<FileStream> fs(v.fixture.files.size());
      for (size_t i = 0; i < fs.size(); ++i) fs[i].bytes = samplegen::uqff_file_bytes(v.fixture.files[i]);
      std::vector<ws::LogicalWeight> storage(16);
      ws::LogicalModel m(storage.data(), 16);
      uqfftest::Outcome o = uqfftest::read_uqff(&fs, split, &m);
      EXPECT_EQ(o.status, code) << v.name << ": " << ws::status_name(o.status);
      EXPECT_EQ(o.name, v.tensor) << v.name;
      EXPECT_EQ(o.error.offset, offset) << v.name;
      EXPECT_EQ(m.error_table(), v.file) << v.name;
      if (v.found >= 0) {
        EXPECT_EQ(o.error.found, uint64_t(v.found)) << v.name;
      }
      if (v.expected >= 0) {
        EXPECT_EQ(o.error.expected, uint64_t(v.expected)) << v.name;
      }
    }
  }
}

// --- malformed/: each case of expected.json, from the committed files. ---

struct Verdict {
  Status code = Status::Ok;
  ws::Error error;
  std::string name;  // the tensor it names, copied
  std::string file;  // the file error.offset is in
};

Verdict mlx_verdict(const std::string& dir, Split split) {
  Verdict v;
  const std::string config = read_text(dir + "/config.json");
  ws::MlxQuantConfig cfg(g_arena, sizeof g_arena);
  v.code = convtest::feed_all(cfg, config, split);
  if (v.code != Status::Ok) {
    v.error = cfg.error();
    v.file = "config.json";
    return v;
  }
  Parsed p;
  convtest::parse(read_bytes(dir + "/model.safetensors"), split, 3, true, &p);
  EXPECT_EQ(p.status, Status::Ok);
  ws::LogicalWeight storage[32];
  ws::LogicalModel m(storage, 32);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  v.code = m.build_mlx(&cfg);
  v.error = m.error();
  v.name = name_of(m.error());
  v.file = "model.safetensors";
  return v;
}

Verdict ollama_verdict(const std::string& dir, Split split) {
  Verdict v;
  ws::OllamaManifest man(g_arena, sizeof g_arena);
  EXPECT_EQ(convtest::feed_all(man, read_text(dir + "/manifest.json"), split), Status::Ok);
  std::vector<std::unique_ptr<Parsed>> p;
  ws::LogicalWeight storage[32];
  ws::LogicalModel m(storage, 32);
  for (uint32_t l = 0; l < man.layer_count(); ++l) {
    p.emplace_back(new Parsed);
    convtest::parse(read_bytes(dir + "/blobs/" + name_of(man.layer(l).blob_file)), split, 4, true, p.back().get());
    EXPECT_EQ(p.back()->status, Status::Ok);
    m.add_table(&p.back()->reader->tensors(), p.back()->reader->data_start());
  }
  v.code = m.build_ollama();
  v.error = m.error();
  v.name = name_of(m.error());
  if (m.error_table() < man.layer_count()) v.file = name_of(man.layer(m.error_table()).blob_file);
  return v;
}

Verdict uqff_verdict(const std::string& dir, Split split) {
  Verdict v;
  const std::vector<std::string> names = {"model-0.uqff", "model-1.uqff", "residual.safetensors"};
  std::vector<FileStream> fs(names.size());
  for (size_t i = 0; i < names.size(); ++i) fs[i].bytes = read_bytes(dir + "/" + names[i]);
  std::vector<ws::LogicalWeight> storage(16);
  ws::LogicalModel m(storage.data(), 16);
  uqfftest::Outcome o = uqfftest::read_uqff(&fs, split, &m);
  v.code = o.status;
  v.error = o.error;
  v.error.tensor_name = nullptr;  // points into the streams, gone on return
  v.name = o.name;
  if (m.error_table() < names.size()) v.file = names[m.error_table()];
  return v;
}

TEST(UpstreamFixtures, MalformedNeighboursGiveExpectedJsonsVerdictsEverySplit) {
  const std::string expected_json = read_text(kDir + "/malformed/expected.json");
  size_t cases = 0;
  for (const samplegen::MalformedCase& c : samplegen::malformed_cases()) {
    // expected.json (committed, equal to the generator's by CommittedFixturesEqualTheGenerator)
    // lists the case with this verdict.
    EXPECT_NE(expected_json.find("{\"dir\": \"" + c.dir + "\", \"kind\": \"" + c.kind + "\", \"open\": \"" + c.open +
                                 "\", \"status\": \"" + c.status + "\", \"file\": \"" + c.file +
                                 "\", \"offset\": " + std::to_string(c.offset) + ","),
              std::string::npos)
        << c.dir;
    Status code;
    ASSERT_TRUE(ws::status_from_name(c.status.c_str(), &code)) << c.status;
    const std::string dir = kDir + "/malformed/" + c.dir;
    for (Split split : convtest::kSplits) {
      Verdict v = c.kind == "mlx" ? mlx_verdict(dir, split) : c.kind == "ollama" ? ollama_verdict(dir, split) : uqff_verdict(dir, split);
      EXPECT_EQ(v.code, code) << c.dir << ": " << ws::status_name(v.code);
      EXPECT_EQ(v.file, c.file) << c.dir;
      EXPECT_EQ(v.error.offset, c.offset) << c.dir;
      EXPECT_EQ(v.name, c.tensor) << c.dir;
      EXPECT_EQ(v.error.has_found, c.found >= 0) << c.dir;
      EXPECT_EQ(v.error.has_expected, c.expected >= 0) << c.dir;
      if (c.found >= 0) {
        EXPECT_EQ(v.error.found, uint64_t(c.found)) << c.dir;
      }
      if (c.expected >= 0) {
        EXPECT_EQ(v.error.expected, uint64_t(c.expected)) << c.dir;
      }
    }
    ++cases;
  }
  EXPECT_EQ(cases, 8u);
}

}  // namespace
