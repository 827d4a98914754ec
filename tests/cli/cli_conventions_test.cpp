// tests/cli — logical weights in the CLI, over the committed convention fixtures
// (tests/data/conventions): `inspect` lists them with the load plan's scratch (text and --json),
// `dequant --tensor <logical weight>` writes values equal to ones computed here from the unpacked
// integers and scales (MLX, Ollama, a 3-shard model through its index), whatever --chunk-size;
// errors name the problem, the offset, the weight (and shard) and the fix.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mini_json.h"
#include "process.h"
#include "quant_oracle.h"

namespace {

namespace fs = std::filesystem;
using clitest::cli;
using clitest::Json;
using clitest::parse_json;
using clitest::read_file;
using clitest::RunResult;
using clitest::TempDir;
using clitest::write_file;
using wsoracle::e4m3;
using wsoracle::fp4;
using wsoracle::unpack;

const std::string kDir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions";
const std::string kMlx = kDir + "/mlx/model.safetensors";
const std::string kMlxBits = kDir + "/mlx-bits/model.safetensors";
const std::string kBlobA = kDir + "/ollama/blobs/sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42";
const std::string kBlobB = kDir + "/ollama/blobs/sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7";
const std::string kIndex = kDir + "/sharded-mlx/model.safetensors.index.json";
const std::string kManifest = kDir + "/ollama/manifest.json";
const std::string kBlobFileA = "sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42";
const std::string kBlobFileB = "sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7";

// The fixtures' Ollama blobs are named by their SHA-256, so the CLI's default (every blob checked
// against its name) passes them.
RunResult cli_fixture(std::vector<std::string> args) { return cli(args); }

// --- The oracle: a safetensors header read with the tests' own JSON reader, and FORMATS.md §2/§3
// written out element by element. ---
struct Stored {
  std::string dtype;
  std::string bytes;
};
std::map<std::string, Stored> read_tensors(const std::string& path) {
  const std::string f = read_file(path);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(f[i])) << (8 * i);
  const Json h = parse_json(f.substr(8, n));
  std::map<std::string, Stored> out;
  for (const auto& m : h.members) {
    if (m.first == "__metadata__") continue;
    const uint64_t b = m.second["data_offsets"][0].u64(), e = m.second["data_offsets"][1].u64();
    out[m.first] = Stored{m.second["dtype"].str(), f.substr(8 + n + b, e - b)};
  }
  return out;
}
float float_at(const Stored& s, uint64_t i) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.bytes.data());
  if (s.dtype == "F32") return wsoracle::f32(p + 4 * i);
  if (s.dtype == "BF16") return wsoracle::bf16(p + 2 * i);
  return wsoracle::f16(p + 2 * i);
}

struct Quant {
  std::string mode;  // "affine", "mxfp4", "mxfp8", "nvfp4"
  uint32_t bits, group;
  std::string scale_suffix, bias_suffix, global_suffix;  // ".scales"/".biases" (MLX) or ".scale"/".bias"
};

// f32 values of a quantized weight, from the tensors of `files` (merged: shards).
std::string expected_f32(const std::map<std::string, Stored>& t, const std::string& weight, const Quant& q) {
  // MLX: <p>.scales beside <p>.weight; Ollama and UQFF: <weight>.scale(s) after the full name.
  const std::string base =
      q.scale_suffix == ".scales" && !t.count(weight + ".scales") ? weight.substr(0, weight.size() - 7) : weight;
  const Stored& pk = t.at(weight);
  const Stored& sc = t.at(base + q.scale_suffix);
  const uint64_t total = pk.bytes.size() * 8 / q.bits;  // elements
  const uint64_t groups = sc.dtype == "U8" ? sc.bytes.size() : sc.bytes.size() / (sc.dtype == "F32" ? 4 : 2);
  const uint64_t k_per_group = total / groups;
  EXPECT_EQ(k_per_group, q.group);
  std::string out;
  // Rows are whole groups and whole words, so the stream is continuous across rows.
  const uint8_t* p = reinterpret_cast<const uint8_t*>(pk.bytes.data());
  for (uint64_t i = 0; i < total; ++i) {
    const uint64_t g = i / q.group;
    const uint32_t v = unpack(p, i, q.bits);
    float x = 0;
    if (q.mode == "affine") {
      x = float_at(sc, g) * float(v) + float_at(t.at(base + q.bias_suffix), g);
    } else {
      const uint8_t s = uint8_t(sc.bytes[g]);
      if (q.mode == "mxfp4") x = fp4(v) * ldexpf(1.0f, int(s) - 127);
      if (q.mode == "mxfp8") x = e4m3(uint8_t(v)) * ldexpf(1.0f, int(s) - 127);
      if (q.mode == "nvfp4") {
        x = fp4(v) * e4m3(s);
        if (!q.global_suffix.empty()) x *= float_at(t.at(base + q.global_suffix), 0);
      }
    }
    out.append(reinterpret_cast<const char*>(&x), 4);
  }
  return out;
}

::testing::AssertionResult same_bytes(const std::string& want, const std::string& got) {
  if (want.size() != got.size()) return ::testing::AssertionFailure() << "sizes " << want.size() << " and " << got.size();
  for (size_t i = 0; i < want.size(); i += 4)
    if (memcmp(want.data() + i, got.data() + i, 4) != 0) {
      float a, b;
      memcpy(&a, want.data() + i, 4);
      memcpy(&b, got.data() + i, 4);
      return ::testing::AssertionFailure() << "value " << i / 4 << ": expected " << a << ", got " << b;
    }
  return ::testing::AssertionSuccess();
}

const Quant kAffineMlx{"affine", 4, 32, ".scales", ".biases", ""};

// dequant of `weight` at several chunk sizes: exit 0, the text line, and the oracle's bytes.
void check_dequant(const std::string& file, const std::map<std::string, Stored>& t, const std::string& weight,
                   const Quant& q) {
  const std::string want = expected_f32(t, weight, q);
  ASSERT_FALSE(want.empty());
  for (const char* chunk : {"65536", "1", "7"}) {
    TempDir dir;
    const RunResult r = cli_fixture({"dequant", file, "--tensor", weight, "--chunk-size", chunk, "-o", dir.file("w.bin")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(same_bytes(want, read_file(dir.file("w.bin")))) << weight << " chunk " << chunk;
    EXPECT_NE(r.out.find(weight + ": "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" -> " + std::to_string(want.size() / 4) + " f32 values, "), std::string::npos) << r.out;
  }
}

TEST(CliConventions, MlxDequantEveryQuantizedWeight) {
  const auto t = read_tensors(kMlx);
  const std::string L = "model.layers.0.";
  check_dequant(kMlx, t, L + "mlp.down_proj.weight", kAffineMlx);
  check_dequant(kMlx, t, L + "self_attn.q_proj.weight", {"affine", 3, 32, ".scales", ".biases", ""});
  check_dequant(kMlx, t, L + "mlp.up_proj.weight", {"mxfp4", 4, 32, ".scales", "", ""});
  check_dequant(kMlx, t, L + "mlp.experts.gate_proj.weight", kAffineMlx);
}

TEST(CliConventions, MlxBitsDequantTwoToSixBits) {
  const auto t = read_tensors(kMlxBits);
  const std::string L = "model.layers.1.";
  check_dequant(kMlxBits, t, L + "mlp.gate_proj.weight", {"affine", 4, 64, ".scales", ".biases", ""});
  check_dequant(kMlxBits, t, L + "mlp.down_proj.weight", {"affine", 3, 32, ".scales", ".biases", ""});
  check_dequant(kMlxBits, t, L + "self_attn.k_proj.weight", {"affine", 5, 32, ".scales", ".biases", ""});
  check_dequant(kMlxBits, t, L + "self_attn.v_proj.weight", {"affine", 6, 64, ".scales", ".biases", ""});
  check_dequant(kMlxBits, t, L + "self_attn.o_proj.weight", {"affine", 2, 128, ".scales", ".biases", ""});
}

TEST(CliConventions, OllamaDequantMixedAndExpertBlobs) {
  const auto a = read_tensors(kBlobA), b = read_tensors(kBlobB);
  check_dequant(kBlobA, a, "a.weight", {"affine", 4, 32, ".scale", ".bias", ""});
  check_dequant(kBlobA, a, "b.weight", {"mxfp8", 8, 32, ".scale", "", ""});
  check_dequant(kBlobA, a, "c.weight", {"nvfp4", 4, 16, ".scale", "", ".global_scale"});
  const std::string P = "model.layers.0.mlp.experts.";
  check_dequant(kBlobB, b, P + "down_proj.weight", {"affine", 8, 64, ".scale", ".bias", ""});
  check_dequant(kBlobB, b, P + "up_proj.weight", {"mxfp4", 4, 32, ".scale", "", ""});
}

TEST(CliConventions, ShardedDequantAWeightAcrossShards) {
  std::map<std::string, Stored> t;
  for (int s = 1; s <= 3; ++s) {
    auto part = read_tensors(kDir + "/sharded-mlx/model-0000" + std::to_string(s) + "-of-00003.safetensors");
    t.insert(part.begin(), part.end());
  }
  // q_proj's packed weight is in shard 1, its scales and biases in shard 2.
  check_dequant(kIndex, t, "model.layers.0.self_attn.q_proj.weight", kAffineMlx);
  check_dequant(kIndex, t, "model.layers.0.mlp.up_proj.weight", kAffineMlx);
  // A plain tensor of shard 3, through the index.
  TempDir dir;
  const RunResult r = cli_fixture({"dequant", kIndex, "--tensor", "model.norm.weight", "-o", dir.file("n.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string want;
  for (uint64_t i = 0; i < 8; ++i) {
    const float v = float_at(t.at("model.norm.weight"), i);
    want.append(reinterpret_cast<const char*>(&v), 4);
  }
  EXPECT_TRUE(same_bytes(want, read_file(dir.file("n.bin"))));
  EXPECT_EQ(r.out, "model.norm.weight: F32 [8] -> 8 f32 values, 32 bytes in " + dir.file("n.bin") + "\n");
}

// UQFF (the other engineer's lib API, through the same CLI path): a file of the directory names
// the model; a GGUF Q4_0 layer and an Afq (MLX affine) layer against oracles written here.
TEST(CliConventions, UqffDequantThroughAnyFileOfTheDirectory) {
  const std::string u0 = kDir + "/uqff/model-0.uqff", u1 = kDir + "/uqff/model-1.uqff";
  const auto t0 = read_tensors(u0), t1 = read_tensors(u1);
  // Q4_0: 18-byte blocks {f16 d; 16 bytes}, element j = (low nibble - 8) * d, j + 16 the high one.
  const Stored& q = t0.at("model.layers.0.self_attn.q_proj.weight");
  std::string want;
  for (size_t b = 0; b + 18 <= q.bytes.size(); b += 18) {
    const float d = float_at(Stored{"F16", q.bytes.substr(b, 2)}, 0);
    float v[32];
    for (int j = 0; j < 16; ++j) {
      const uint8_t x = uint8_t(q.bytes[b + 2 + j]);
      v[j] = float(int(x & 15) - 8) * d;
      v[j + 16] = float(int(x >> 4) - 8) * d;
    }
    want.append(reinterpret_cast<const char*>(v), sizeof v);
  }
  ASSERT_EQ(want.size(), 256u * 4);
  for (const std::string& file : {u0, u1}) {  // either file names the same model
    TempDir dir;
    const RunResult r = cli_fixture({"dequant", file, "--tensor", "model.layers.0.self_attn.q_proj.weight", "--chunk-size", "5",
                             "-o", dir.file("q.bin")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(same_bytes(want, read_file(dir.file("q.bin"))));
    EXPECT_EQ(r.out, "model.layers.0.self_attn.q_proj.weight: uqff Q4_0 (type=gguf) [4, 64] -> 256 f32 values, 1024 bytes (1.0 kB) in " +
                         dir.file("q.bin") + "\n");
  }
  check_dequant(u0, t1, "model.layers.0.mlp.gate_proj.weight", {"affine", 4, 32, ".scales", ".biases", ""});

  // A layer with a companion its type does not have (".weight.bits" renamed, same length): the
  // error names the tensor, its offset in the shard, the shard and the suffix.
  TempDir dir;
  fs::copy(kDir + "/uqff", dir.file("u"), fs::copy_options::recursive);
  std::string f1 = read_file(dir.file("u/model-1.uqff"));
  const std::string from = "\"model.layers.0.mlp.gate_proj.weight.bits\"";
  const size_t at = f1.find(from);
  f1.replace(at, from.size(), "\"model.layers.0.mlp.gate_proj.weight.bitz\"");
  write_file(dir.file("u/model-1.uqff"), f1);
  const RunResult r = cli_fixture({"dequant", dir.file("u/model-0.uqff"), "--tensor", "model.layers.0.mlp.gate_proj.weight",
                           "--json", "-o", dir.file("g.bin")});
  EXPECT_EQ(r.exit_code, 1);
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["error"]["code"].str(), "UqffUnexpectedCompanion");
  EXPECT_EQ(j["error"]["offset"].u64(), at);
  EXPECT_EQ(j["error"]["tensor"].str(), "model.layers.0.mlp.gate_proj.weight.bitz");
  EXPECT_EQ(j["error"]["shard"].str(), "model-1.uqff");
  EXPECT_NE(j["error"]["message"].str().find("(.weight.bitz)"), std::string::npos) << j["error"]["message"].str();
  EXPECT_FALSE(fs::exists(dir.file("g.bin")));
}

TEST(CliConventions, DequantF16IsTheExactHalfOfEveryValue) {
  // down_proj's values are (k*q - 4*(i%3))/16 with k <= 5, q <= 15: exact in f16.
  const auto t = read_tensors(kMlx);
  const std::string w = "model.layers.0.mlp.down_proj.weight";
  const std::string f32 = expected_f32(t, w, kAffineMlx);
  std::string want;
  for (size_t i = 0; i < f32.size(); i += 4) {
    float v;
    memcpy(&v, f32.data() + i, 4);
    int e = 0;
    const float m = frexpf(fabsf(v), &e);  // v = m * 2^e, m in [0.5, 1)
    uint16_t h = v < 0 ? 0x8000 : 0;
    if (v != 0) {
      ASSERT_GE(e, -13);  // normal halves only in this fixture
      h |= uint16_t((e + 14) << 10) | uint16_t(ldexpf(m, 11) - 1024.0f);
      ASSERT_EQ(ldexpf(m, 11), floorf(ldexpf(m, 11))) << "not exact in f16: " << v;
    }
    want.append(reinterpret_cast<const char*>(&h), 2);
  }
  TempDir dir;
  const RunResult r = cli_fixture({"dequant", kMlx, "--tensor", w, "--to", "f16", "-o", dir.file("h.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.file("h.bin")), want);
}

TEST(CliConventions, DequantJsonDescribesTheWeightAndItsPieces) {
  const RunResult r = cli_fixture({"dequant", kIndex, "--tensor", "model.layers.0.self_attn.q_proj.weight", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["convention"].str(), "mlx");
  const Json& t = j["tensors"][0];
  EXPECT_EQ(t["format"].str(), "MlxAffine");
  EXPECT_EQ(t["mode"].str(), "affine");
  EXPECT_EQ(t["bits"].u64(), 4u);
  EXPECT_EQ(t["group"].u64(), 32u);
  EXPECT_EQ(t["shape"][0].u64(), 4u);
  EXPECT_EQ(t["shape"][1].u64(), 32u);
  EXPECT_EQ(t["elements"].u64(), 128u);
  EXPECT_EQ(t["stored_bytes"].u64(), 80u);
  EXPECT_EQ(t["output_bytes"].u64(), 512u);
  EXPECT_EQ(t["shard"].str(), "model-00001-of-00003.safetensors");
  EXPECT_FALSE(t["written"].boolean);
  // The seekable schedule: companions (shard 2) first, then the packed piece (shard 1).
  ASSERT_EQ(t["pieces"].items.size(), 3u);
  EXPECT_EQ(t["pieces"][0]["shard"].str(), "model-00002-of-00003.safetensors");
  EXPECT_EQ(t["pieces"][2]["role"].str(), "packed");
  EXPECT_EQ(t["pieces"][2]["shard"].str(), "model-00001-of-00003.safetensors");
  EXPECT_EQ(t["pieces"][2]["bytes"].u64(), 64u);
  // The packed piece's offset is absolute in its shard: after the 8-byte prefix and the header.
  const std::string shard1 = read_file(kDir + "/sharded-mlx/model-00001-of-00003.safetensors");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(shard1[i])) << (8 * i);
  const Json h = parse_json(shard1.substr(8, n));
  EXPECT_EQ(t["pieces"][2]["offset"].u64(), 8 + n + h["model.layers.0.self_attn.q_proj.weight"]["data_offsets"][0].u64());
  EXPECT_TRUE(j["error"].is_null());
}

TEST(CliConventions, InspectJsonListsLogicalWeightsAndPlan) {
  const RunResult r = cli_fixture({"inspect", "--json", "--chunk-size", "16", kMlx});  // the plan ignores it
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  const Json& l = j["logical"];
  EXPECT_EQ(l["convention"].str(), "mlx");
  EXPECT_EQ(l["config"].str(), kDir + "/mlx/config.json");
  ASSERT_EQ(l["weights"].items.size(), 6u);
  std::map<std::string, const Json*> by_name;
  for (const Json& w : l["weights"].items) by_name[w["name"].str()] = &w;
  const Json& q = *by_name.at("model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(q["mode"].str(), "affine");
  EXPECT_EQ(q["bits"].u64(), 3u);
  EXPECT_EQ(q["group"].u64(), 32u);
  EXPECT_EQ(q["shape"][1].u64(), 64u);
  EXPECT_EQ(q["bytes"].u64(), 48u + 8u + 8u);  // [2, 6] U32 + 2x2 F16 scales and biases
  EXPECT_EQ(q["sequential_scratch"].u64(), 64u);  // the packed piece waits for its scales
  EXPECT_EQ(q["seekable_scratch"].u64(), 64u);  // companions + one 1 MiB read (the whole 48)
  EXPECT_TRUE(q["packed_before_companion"].boolean);
  const Json& e = *by_name.at("model.layers.0.mlp.experts.gate_proj.weight");
  EXPECT_EQ(e["shape"].items.size(), 3u);
  EXPECT_EQ(e["shape"][2].u64(), 64u);
  const Json& b = *by_name.at("model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(b["mode"].str(), "none");
  EXPECT_TRUE(b["bits"].is_null());
  // The same numbers tests/conventions measures with a real stream (396 bytes sequential).
  EXPECT_EQ(l["plan"]["chunk"].u64(), 1048576u);
  EXPECT_EQ(l["plan"]["sequential_peak"].u64(), 396u);
  EXPECT_EQ(l["plan"]["seekable_peak"].u64(), 160u);  // down_proj: 16 + 16 companions + 128 packed
  EXPECT_TRUE(l["error"].is_null());
}

TEST(CliConventions, InspectTextShowsTheLogicalTable) {
  const RunResult r = cli_fixture({"inspect", kMlxBits});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("logical weights (mlx, quantization from " + kDir + "/mlx-bits/config.json)\n"),
            std::string::npos)
      << r.out;
  // 5-bit k_proj: [2, 10] U32 = 80 bytes + 2x2 BF16 scales and biases; companions come first, so
  // a sequential stream holds only them (16 bytes); seekable with 1 MiB reads holds all 96.
  EXPECT_NE(r.out.find("  2  affine        5     32  [2, 64]           96           16            96  "
                       "model.layers.1.self_attn.k_proj.weight\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  5  plain F16     -      -  [4, 8]            64            -             -  lm_head.weight\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("peak scratch (sequential stream): 72 bytes\n"), std::string::npos) << r.out;
}

TEST(CliConventions, InspectShardedModelAsOneLogicalModel) {
  const RunResult r = cli_fixture({"inspect", "--json", kIndex});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  const Json& l = j["logical"];
  ASSERT_EQ(l["weights"].items.size(), 5u);
  EXPECT_EQ(l["weights"][1]["name"].str(), "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(l["weights"][1]["sequential_scratch"].u64(), 80u);
  // q_proj's 64 packed bytes wait across the shard boundary while up_proj's 32 companion bytes
  // arrive in shard 2.
  EXPECT_EQ(l["plan"]["sequential_peak"].u64(), 96u);
}

TEST(CliConventions, InspectUqffDirectoryThroughOneOfItsFiles) {
  const RunResult r = cli_fixture({"inspect", "--json", kDir + "/uqff/model-1.uqff"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  const Json& l = j["logical"];
  EXPECT_EQ(l["convention"].str(), "uqff");
  ASSERT_EQ(l["weights"].items.size(), 12u);  // 8 layers of both shards + o_proj.bias + 3 residual tensors
  std::map<std::string, const Json*> by_name;
  for (const Json& w : l["weights"].items) by_name[w["name"].str()] = &w;
  const Json& q = *by_name.at("model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(q["format"].str(), "Q4_0");
  EXPECT_EQ(q["shape"][0].u64(), 4u);
  EXPECT_EQ(q["shape"][1].u64(), 64u);
  EXPECT_EQ(q["bytes"].u64(), 144u + 4u + 8u + 1u);  // 8 Q4_0 blocks + dtype, shape, format scalars
  const Json& up = *by_name.at("model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(up["mode"].str(), "affine");
  EXPECT_EQ(up["bits"].u64(), 3u);
  EXPECT_EQ((*by_name.at("lm_head.weight"))["convention"].str(), "plain");
}

// The committed fixtures are what the generator binary writes now (tests/conventions checks the
// generator's library in memory; this runs the program as its README says).
TEST(CliConventions, GeneratorWritesTheCommittedFixtures) {
  TempDir dir;
  const RunResult r = clitest::run({WS_MAKE_SAMPLES, "--conventions", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kDir)) {
    if (!e.is_regular_file() || e.path().extension() == ".md") continue;
    ++files;
    const std::string rel = fs::relative(e.path(), kDir).string();
    EXPECT_TRUE(read_file(e.path().string()) == read_file(dir.file(rel))) << rel;
  }
  size_t generated = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) generated += e.is_regular_file();
  EXPECT_EQ(generated, files);
}

// A model directory stands for its index, its first .uqff (numeric order), or its one model file.
TEST(CliConventions, ModelDirectoriesResolveToTheirModelFile) {
  RunResult r = cli_fixture({"inspect", "--json", kDir + "/sharded-mlx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse_json(r.out)["file"].str(), kDir + "/sharded-mlx/model.safetensors.index.json");
  r = cli_fixture({"validate", kDir + "/uqff/", kDir + "/mlx-bits"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kDir + "/uqff/model-0.uqff: valid (safetensors, 18 tensors)\n" + kDir +
                       "/mlx-bits/model.safetensors: valid (safetensors, 16 tensors)\n");
  TempDir dir;
  fs::create_directory(dir.file("two"));
  fs::copy(kMlx, dir.file("two/a.safetensors"));
  fs::copy(kMlxBits, dir.file("two/b.safetensors"));
  r = cli_fixture({"dequant", dir.file("two"), "--tensor", "x", "-o", dir.file("x.bin")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "weightstream: " + dir.file("two") +
                       ": the directory holds 2 model files and no model.safetensors.index.json: name one of them\n");
}

TEST(CliConventions, PlainFilesHaveNoLogicalSection) {
  const RunResult r = cli_fixture({"inspect", "--json", std::string(WS_SOURCE_DIR) + "/samples/tiny-llama.safetensors"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_FALSE(parse_json(r.out).has("logical"));
}

// --- Errors: code, offset, weight, shard and the fix. ---

void copy_dir(const std::string& from, const std::string& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

TEST(CliConventions, ConventionErrorNamesWeightOffsetAndFix) {
  TempDir dir;
  copy_dir(kDir + "/mlx-bits", dir.file("m"));
  std::string config = read_file(dir.file("m/config.json"));
  config.replace(config.find("\"bits\": 6"), 9, "\"bits\": 7");
  write_file(dir.file("m/config.json"), config);
  const std::string w = "model.layers.1.self_attn.v_proj.weight";
  const std::string file = read_file(kMlxBits);
  const uint64_t entry = file.find("\"" + w + "\"");
  RunResult r = cli_fixture({"dequant", dir.file("m/model.safetensors"), "--tensor", w, "--json", "-o", dir.file("o.bin")});
  EXPECT_EQ(r.exit_code, 1);
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["error"]["code"].str(), "ConventionBitsNotAllowed");
  EXPECT_EQ(j["error"]["offset"].u64(), entry);
  EXPECT_EQ(j["error"]["tensor"].str(), w);
  EXPECT_NE(j["error"]["message"].str().find("check the quantization config"), std::string::npos)
      << j["error"]["message"].str();
  EXPECT_FALSE(fs::exists(dir.file("o.bin")));
  r = cli_fixture({"inspect", dir.file("m/model.safetensors")});
  EXPECT_EQ(r.exit_code, 1);  // the model's verdict (issue #16), though the file is valid safetensors
  EXPECT_NE(r.out.find("ConventionBitsNotAllowed at byte " + std::to_string(entry)), std::string::npos) << r.out;
}

TEST(CliConventions, NotALogicalWeightSuggestsCloseNames) {
  const RunResult r = cli_fixture({"dequant", kMlx, "--tensor", "model.layers.0.mlp.down_proj.weigh", "-o", "/dev/null"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "weightstream: " + kMlx +
                       ": no logical weight named \"model.layers.0.mlp.down_proj.weigh\" among the 6 weights of the "
                       "mlx model; close names: \"model.layers.0.mlp.down_proj.weight\", "
                       "\"model.layers.0.mlp.up_proj.weight\", \"model.layers.0.self_attn.q_proj.weight\"\n");
}

TEST(CliConventions, ShardedMissingShardAndTensorInTheWrongShard) {
  TempDir dir;
  copy_dir(kDir + "/sharded-mlx", dir.file("s"));
  fs::remove(dir.file("s/model-00002-of-00003.safetensors"));
  RunResult r = cli_fixture({"dequant", dir.file("s/model.safetensors.index.json"), "--tensor",
                     "model.layers.0.self_attn.q_proj.weight", "--json", "-o", dir.file("o.bin")});
  EXPECT_EQ(r.exit_code, 2);
  Json j = parse_json(r.out);
  EXPECT_EQ(j["error"]["code"].str(), "IoError");
  EXPECT_EQ(j["error"]["shard"].str(), "model-00002-of-00003.safetensors");

  copy_dir(kDir + "/sharded-mlx", dir.file("w"));
  std::string index = read_file(dir.file("w/model.safetensors.index.json"));
  const std::string from = "\"model.norm.weight\": \"model-00003-of-00003.safetensors\"";
  index.replace(index.find(from), from.size(), "\"model.norm.weight\": \"model-00002-of-00003.safetensors\"");
  write_file(dir.file("w/model.safetensors.index.json"), index);
  r = cli_fixture({"dequant", dir.file("w/model.safetensors.index.json"), "--tensor", "model.norm.weight", "--json", "-o",
           dir.file("o.bin")});
  EXPECT_EQ(r.exit_code, 1);
  j = parse_json(r.out);
  EXPECT_EQ(j["error"]["code"].str(), "ShardTensorWrongShard");
  EXPECT_EQ(j["error"]["tensor"].str(), "model.norm.weight");
  EXPECT_EQ(j["error"]["shard"].str(), "model-00003-of-00003.safetensors");
  const std::string shard3 = read_file(kDir + "/sharded-mlx/model-00003-of-00003.safetensors");
  EXPECT_EQ(j["error"]["offset"].u64(), shard3.find("\"model.norm.weight\""));
  EXPECT_NE(j["error"]["message"].str().find("model-00002-of-00003.safetensors"), std::string::npos)
      << j["error"]["message"].str();
}

// Absolute offset of a tensor's first data byte in a safetensors file, from its header.
uint64_t data_offset_of(const std::string& file, const std::string& tensor) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(file[i])) << (8 * i);
  return 8 + n + parse_json(file.substr(8, n))[tensor]["data_offsets"][0].u64();
}

// An error in a UQFF layer's data (a format tag no reader knows) names the file the byte is in,
// in dequant's and inspect's JSON and in the text line, not only the offset.
TEST(CliConventions, UqffDataErrorNamesItsFile) {
  TempDir dir;
  copy_dir(kDir + "/uqff", dir.file("u"));
  std::string f1 = read_file(dir.file("u/model-1.uqff"));
  const uint64_t at = data_offset_of(f1, "model.layers.0.mlp.gate_proj.weight.format");
  ASSERT_EQ(f1[at], 4);  // Afq
  f1[at] = 9;
  write_file(dir.file("u/model-1.uqff"), f1);
  const std::string w = "model.layers.0.mlp.gate_proj.weight";
  RunResult r = cli_fixture({"dequant", dir.file("u/model-0.uqff"), "--tensor", w, "--json", "-o", dir.file("g.bin")});
  EXPECT_EQ(r.exit_code, 1);
  Json j = parse_json(r.out);
  EXPECT_EQ(j["error"]["code"].str(), "UqffUnknownFormatTag");
  EXPECT_EQ(j["error"]["offset"].u64(), at);
  EXPECT_EQ(j["error"]["tensor"].str(), w);
  EXPECT_EQ(j["error"]["shard"].str(), "model-1.uqff");
  r = cli_fixture({"dequant", dir.file("u/model-1.uqff"), "--tensor", w, "-o", dir.file("g.bin")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("weightstream: " + dir.file("u/model-1.uqff") + ": invalid: UqffUnknownFormatTag at byte " +
                            std::to_string(at) + " of model-1.uqff in tensor \"" + w + "\": ",
                        0),
            0u)
      << r.err;
  r = cli_fixture({"inspect", "--json", dir.file("u/model-0.uqff")});
  EXPECT_EQ(r.exit_code, 1);  // the model's verdict (issue #16), though every file is valid safetensors
  j = parse_json(r.out);
  EXPECT_EQ(j["logical"]["error"]["code"].str(), "UqffUnknownFormatTag");
  EXPECT_EQ(j["logical"]["error"]["offset"].u64(), at);
  EXPECT_EQ(j["logical"]["error"]["shard"].str(), "model-1.uqff");
  EXPECT_FALSE(fs::exists(dir.file("g.bin")));
}

// --- Ollama manifests: the tensor blobs of a manifest as one model. ---

// An Ollama models directory as ollama lays it out: manifests/<registry>/library/<model>/<tag>
// and blobs/ two levels above the model's directory.
std::string ollama_models_dir(const TempDir& dir, const std::string& manifest_text) {
  fs::create_directories(dir.file("models/manifests/registry.ollama.ai/library/tiny"));
  fs::copy(kDir + "/ollama/blobs", dir.file("models/blobs"), fs::copy_options::recursive);
  write_file(dir.file("models/manifests/registry.ollama.ai/library/tiny/latest"), manifest_text);
  return dir.file("models/manifests/registry.ollama.ai/library/tiny/latest");
}

TEST(CliConventions, OllamaManifestDequantsEveryBlobsWeights) {
  const auto a = read_tensors(kBlobA), b = read_tensors(kBlobB);
  check_dequant(kManifest, a, "a.weight", {"affine", 4, 32, ".scale", ".bias", ""});
  check_dequant(kManifest, a, "b.weight", {"mxfp8", 8, 32, ".scale", "", ""});
  check_dequant(kManifest, a, "c.weight", {"nvfp4", 4, 16, ".scale", "", ".global_scale"});
  const std::string P = "model.layers.0.mlp.experts.";
  check_dequant(kManifest, b, P + "down_proj.weight", {"affine", 8, 64, ".scale", ".bias", ""});
  check_dequant(kManifest, b, P + "up_proj.weight", {"mxfp4", 4, 32, ".scale", "", ""});
  // Plain tensors: their stored values, as f32.
  TempDir dir;
  const std::string models = ollama_models_dir(dir, read_file(kManifest));
  RunResult r = cli_fixture({"dequant", models, "--tensor", "lin.bias", "-o", dir.file("l.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.file("l.bin")), a.at("lin.bias").bytes);
  EXPECT_EQ(r.out, "lin.bias: F32 [2] -> 2 f32 values, 8 bytes in " + dir.file("l.bin") + "\n");
  r = cli_fixture({"dequant", models, "--tensor", "norm.weight", "--json", "-o", dir.file("n.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string want;
  for (uint64_t i = 0; i < 4; ++i) {
    const float v = float_at(a.at("norm.weight"), i);
    want.append(reinterpret_cast<const char*>(&v), 4);
  }
  EXPECT_EQ(read_file(dir.file("n.bin")), want);
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["convention"].str(), "ollama");
  EXPECT_EQ(j["tensors"][0]["shard"].str(), kBlobFileA);
  EXPECT_EQ(j["tensors"][0]["data_offset"].u64(), data_offset_of(read_file(kBlobA), "norm.weight"));
}

TEST(CliConventions, OllamaManifestInspectAndValidate) {
  TempDir dir;
  const std::string m = ollama_models_dir(dir, read_file(kManifest));
  RunResult r = cli_fixture({"validate", m, kManifest});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, m + ": valid (safetensors, Ollama manifest, 2 blobs, 15 tensors)\n" + kManifest +
                       ": valid (safetensors, Ollama manifest, 2 blobs, 15 tensors)\n");
  r = cli_fixture({"inspect", "--json", m});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  EXPECT_TRUE(j["manifest"].boolean);
  EXPECT_EQ(j["blobs"].str(), fs::canonical(dir.file("models/blobs")).string() + "/");
  EXPECT_EQ(j["tensors"].u64(), 15u);
  ASSERT_EQ(j["shards"].items.size(), 2u);
  EXPECT_EQ(j["shards"][0]["file"].str(), kBlobFileA);
  EXPECT_EQ(j["shards"][0]["layer"].str(), "a.weight");
  EXPECT_EQ(j["shards"][0]["tensors"].u64(), 10u);
  EXPECT_EQ(j["shards"][1]["layer"].str(), "model.layers.0.mlp.experts");
  EXPECT_EQ(j["shards"][1]["bytes"].u64(), 408u);
  const Json& l = j["logical"];
  EXPECT_EQ(l["convention"].str(), "ollama");
  ASSERT_EQ(l["weights"].items.size(), 7u);  // a, b, c, lin.bias, norm.weight + 2 expert stacks
  EXPECT_EQ(l["weights"][5]["name"].str(), "model.layers.0.mlp.experts.down_proj.weight");
  EXPECT_EQ(l["weights"][5]["bits"].u64(), 8u);
  EXPECT_EQ(l["weights"][5]["shape"][0].u64(), 2u);
  EXPECT_TRUE(l["error"].is_null());
  r = cli_fixture({"inspect", m});
  EXPECT_NE(r.out.find("  1        5    408  " + kBlobFileB + "  model.layers.0.mlp.experts\n"), std::string::npos)
      << r.out;
  // --blobs: a manifest without blobs/ above it.
  write_file(dir.file("lonely"), read_file(kManifest));
  r = cli_fixture({"validate", dir.file("lonely")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(": error: no blobs/ directory beside the manifest or above it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--blobs DIR"), std::string::npos) << r.out;
  for (const std::string& blobs : {dir.file("models"), dir.file("models/blobs")}) {
    r = cli_fixture({"validate", "--blobs", blobs, dir.file("lonely")});
    EXPECT_EQ(r.out, dir.file("lonely") + ": valid (safetensors, Ollama manifest, 2 blobs, 15 tensors)\n") << blobs;
  }
}

TEST(CliConventions, OllamaManifestMissingOrWrongBlobs) {
  const std::string manifest = read_file(kManifest);
  const std::string w = "model.layers.0.mlp.experts.up_proj.weight";
  {  // A blob not pulled: an I/O problem naming the layer and the blob, no output.
    TempDir dir;
    const std::string m = ollama_models_dir(dir, manifest);
    fs::remove(dir.file("models/blobs/" + kBlobFileB));
    const RunResult r = cli_fixture({"dequant", m, "--tensor", "a.weight", "--json", "-o", dir.file("o.bin")});
    EXPECT_EQ(r.exit_code, 2);
    const Json j = parse_json(r.out);
    EXPECT_EQ(j["error"]["code"].str(), "ManifestBlobMissing");
    EXPECT_EQ(j["error"]["offset"].u64(), 0u);
    EXPECT_EQ(j["error"]["tensor"].str(), "model.layers.0.mlp.experts");
    EXPECT_EQ(j["error"]["shard"].str(), kBlobFileB);
    EXPECT_NE(j["error"]["message"].str().find("ollama pull"), std::string::npos) << j["error"]["message"].str();
    EXPECT_FALSE(fs::exists(dir.file("o.bin")));
  }
  {  // A truncated blob: its size is not the manifest's; the offset is where the blob ends.
    TempDir dir;
    const std::string m = ollama_models_dir(dir, manifest);
    fs::resize_file(dir.file("models/blobs/" + kBlobFileA), 1000);
    RunResult r = cli_fixture({"dequant", m, "--tensor", w, "--json", "-o", dir.file("o.bin")});
    EXPECT_EQ(r.exit_code, 1);
    const Json j = parse_json(r.out);
    EXPECT_EQ(j["error"]["code"].str(), "ManifestBlobSize");
    EXPECT_EQ(j["error"]["offset"].u64(), 1000u);
    EXPECT_EQ(j["error"]["tensor"].str(), "a.weight");
    EXPECT_EQ(j["error"]["shard"].str(), kBlobFileA);
    EXPECT_FALSE(fs::exists(dir.file("o.bin")));
    r = cli_fixture({"validate", m});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, m + ": invalid: ManifestBlobSize at byte 1000 of " + kBlobFileA +
                         " in tensor \"a.weight\": the blob of layer \"a.weight\" is 1000 bytes, the manifest says "
                         "1168: the blob is incomplete or belongs to another model; pull the model again.\n");
  }
  {  // A second layer named after a tensor of blob A, pointing at blob A: b.weight is then in the
     // blob of a layer that does not cover it (layer "a.weight", the first in the manifest).
    TempDir dir;
    const std::string layer_a = manifest.substr(manifest.find("{\"mediaType\":\"application/vnd.ollama.image.tensor\""),
                                                manifest.find("},{\"mediaType\":\"application/vnd.ollama.image.tensor\"") + 1 -
                                                    manifest.find("{\"mediaType\":\"application/vnd.ollama.image.tensor\""));
    ASSERT_NE(layer_a.find("\"name\":\"a.weight\""), std::string::npos) << layer_a;
    std::string other = layer_a;
    other.replace(other.find("\"a.weight\""), 10, "\"b.weight\"");
    std::string edited = manifest;
    edited.insert(edited.find(layer_a) + layer_a.size(), "," + other);
    const std::string m = ollama_models_dir(dir, edited);
    const RunResult r = cli_fixture({"inspect", "--json", m});
    EXPECT_EQ(r.exit_code, 1);
    const Json j = parse_json(r.out);
    EXPECT_EQ(j["error"]["code"].str(), "ManifestTensorInOtherLayer");
    EXPECT_EQ(j["error"]["offset"].u64(), read_file(kBlobA).find("\"b.weight\""));
    EXPECT_EQ(j["error"]["tensor"].str(), "b.weight");
    EXPECT_EQ(j["error"]["shard"].str(), kBlobFileA);
    EXPECT_NE(j["error"]["message"].str().find("layer \"b.weight\""), std::string::npos) << j["error"]["message"].str();
  }
  {  // The expert layer renamed to a prefix its blob does not hold: the digest points elsewhere.
    TempDir dir;
    std::string edited = manifest;
    edited.replace(edited.find("model.layers.0.mlp.experts"), 26, "model.layers.1.mlp.experts");
    const std::string m = ollama_models_dir(dir, edited);
    const RunResult r = cli_fixture({"dequant", m, "--tensor", w, "--json", "-o", dir.file("o.bin")});
    EXPECT_EQ(r.exit_code, 1);
    const Json j = parse_json(r.out);
    EXPECT_EQ(j["error"]["code"].str(), "ManifestLayerNotInBlob");
    EXPECT_EQ(j["error"]["tensor"].str(), "model.layers.1.mlp.experts");
    EXPECT_EQ(j["error"]["shard"].str(), kBlobFileB);
  }
  {  // An invalid manifest: the library's status at its offset in the manifest.
    TempDir dir;
    std::string edited = manifest;
    const size_t at = edited.find("sha256:b99a");
    edited[at + 7] = 'G';
    const std::string m = ollama_models_dir(dir, edited);
    const RunResult r = cli_fixture({"validate", "--json", m});
    EXPECT_EQ(r.exit_code, 1);
    const Json j = parse_json(r.out);
    EXPECT_EQ(j["error"]["code"].str(), "ManifestInvalidDigest");
    EXPECT_EQ(j["error"]["offset"].u64(), at - 1);  // the digest string's opening quote
    EXPECT_TRUE(j["error"]["shard"].is_null());
  }
}

// --- dequant --all: every logical weight of a model, decoded to its logical shape. ---

// The files --all wrote, by name.
std::map<std::string, std::string> files_in(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = read_file(e.path().string());
  return out;
}

// --all on `model` writes exactly one file per logical weight (inspect's list; no companion), each
// equal to what --tensor writes for it; the text ends with the total.
std::map<std::string, std::string> check_all(const std::string& model, size_t weights) {
  TempDir dir;
  const RunResult r = cli_fixture({"dequant", model, "--all", "--chunk-size", "7", "-o", dir.file("all")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::map<std::string, std::string> got = files_in(dir.file("all"));
  const Json l = parse_json(cli_fixture({"inspect", "--json", model}).out)["logical"];
  EXPECT_EQ(l["weights"].items.size(), weights) << model;
  EXPECT_EQ(got.size(), weights) << model;
  uint64_t bytes = 0;
  for (const Json& w : l["weights"].items) {
    const std::string name = w["name"].str();
    const RunResult one = cli_fixture({"dequant", model, "--tensor", name, "-o", dir.file("one.bin")});
    EXPECT_EQ(one.exit_code, 0) << one.err;
    EXPECT_NE(r.out.find(one.out.substr(0, one.out.find(" in ")) + " in " + dir.file("all/" + name + ".bin") + "\n"),
              std::string::npos)
        << name << "\n" << r.out;
    EXPECT_TRUE(got.count(name + ".bin")) << name;
    if (got.count(name + ".bin")) {
      EXPECT_TRUE(same_bytes(read_file(dir.file("one.bin")), got.at(name + ".bin"))) << name;
      bytes += got.at(name + ".bin").size();
    }
  }
  EXPECT_NE(r.out.find("\n" + std::to_string(weights) + " tensors, " + std::to_string(bytes) + " bytes"), std::string::npos)
      << r.out;
  return got;
}

TEST(CliConventions, DequantAllWritesEveryLogicalWeight) {
  // MLX: the quantized weights against the oracle; no .scales/.biases file.
  const auto t = read_tensors(kMlx);
  std::map<std::string, std::string> got = check_all(kMlx, 6);
  const std::string L = "model.layers.0.";
  EXPECT_TRUE(same_bytes(expected_f32(t, L + "mlp.down_proj.weight", kAffineMlx), got.at(L + "mlp.down_proj.weight.bin")));
  EXPECT_TRUE(same_bytes(expected_f32(t, L + "mlp.up_proj.weight", {"mxfp4", 4, 32, ".scales", "", ""}),
                         got.at(L + "mlp.up_proj.weight.bin")));
  EXPECT_TRUE(same_bytes(expected_f32(t, L + "mlp.experts.gate_proj.weight", kAffineMlx),
                         got.at(L + "mlp.experts.gate_proj.weight.bin")));
  EXPECT_EQ(got.count(L + "mlp.down_proj.scales.bin"), 0u);
  // An Ollama manifest: both blobs as one model.
  const auto a = read_tensors(kBlobA), b = read_tensors(kBlobB);
  got = check_all(kManifest, 7);
  EXPECT_TRUE(same_bytes(expected_f32(a, "c.weight", {"nvfp4", 4, 16, ".scale", "", ".global_scale"}), got.at("c.weight.bin")));
  const std::string P = "model.layers.0.mlp.experts.";
  EXPECT_TRUE(same_bytes(expected_f32(b, P + "down_proj.weight", {"affine", 8, 64, ".scale", ".bias", ""}),
                         got.at(P + "down_proj.weight.bin")));
  EXPECT_EQ(got.at("lin.bias.bin"), a.at("lin.bias").bytes);
  // A sharded model through its index (one weight across two shards) and a UQFF directory.
  std::map<std::string, Stored> s;
  for (int i = 1; i <= 3; ++i) {
    auto part = read_tensors(kDir + "/sharded-mlx/model-0000" + std::to_string(i) + "-of-00003.safetensors");
    s.insert(part.begin(), part.end());
  }
  got = check_all(kIndex, 5);
  EXPECT_TRUE(same_bytes(expected_f32(s, "model.layers.0.self_attn.q_proj.weight", kAffineMlx),
                         got.at("model.layers.0.self_attn.q_proj.weight.bin")));
  check_all(kDir + "/uqff/model-0.uqff", 12);
}

TEST(CliConventions, DequantAllJsonListsEveryWeight) {
  const RunResult r = cli_fixture({"dequant", kManifest, "--all", "--json"});  // no -o: a description
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["convention"].str(), "ollama");
  ASSERT_EQ(j["tensors"].items.size(), 7u);
  const Json& c = j["tensors"][2];
  EXPECT_EQ(c["name"].str(), "c.weight");
  EXPECT_EQ(c["mode"].str(), "nvfp4");
  EXPECT_EQ(c["shard"].str(), kBlobFileA);
  ASSERT_EQ(c["pieces"].items.size(), 3u);  // global scale, scales, packed
  EXPECT_EQ(c["pieces"][2]["role"].str(), "packed");
  EXPECT_EQ(c["output_bytes"].u64(), 512u);
  EXPECT_TRUE(c["output_file"].is_null());
  EXPECT_FALSE(c["written"].boolean);
  EXPECT_TRUE(c["skipped"].is_null());
  EXPECT_EQ(j["tensors"][6]["shard"].str(), kBlobFileB);
  EXPECT_TRUE(j["error"].is_null());
}

// --- Conventions as the upstream tools write them (issue #14): mlx-overrides/, ollama-inferred/,
// uqff-f8q8/ and malformed/ (tests/data/conventions/README.md). ---

const std::string kMlxOverrides = kDir + "/mlx-overrides/model.safetensors";
const std::string kOllamaInferred = kDir + "/ollama-inferred/manifest.json";
const std::string kUqffF8q8 = kDir + "/uqff-f8q8/model-0.uqff";

// Every blob of a manifest folder, merged.
std::map<std::string, Stored> blob_tensors(const std::string& dir) {
  std::map<std::string, Stored> t;
  for (const auto& e : fs::directory_iterator(dir + "/blobs")) {
    auto part = read_tensors(e.path().string());
    t.insert(part.begin(), part.end());
  }
  return t;
}

TEST(CliConventions, MlxOverridesStandAloneDequantEveryWeight) {
  const auto t = read_tensors(kMlxOverrides);
  const std::string L = "model.layers.0.";
  // The router gate mlx_lm.convert --q-mode mxfp4 writes: {"group_size": 64, "bits": 8} beside a
  // top-level mxfp4 is affine 8-bit g64, with biases.
  check_dequant(kMlxOverrides, t, L + "mlp.gate.weight", {"affine", 8, 64, ".scales", ".biases", ""});
  check_dequant(kMlxOverrides, t, L + "mlp.shared_expert_gate.weight", {"affine", 8, 64, ".scales", ".biases", ""});
  check_dequant(kMlxOverrides, t, L + "self_attn.k_proj.weight", {"affine", 4, 128, ".scales", ".biases", ""});
  check_dequant(kMlxOverrides, t, L + "self_attn.q_proj.weight", {"nvfp4", 4, 16, ".scales", "", ""});
  check_dequant(kMlxOverrides, t, L + "self_attn.o_proj.weight", {"mxfp8", 8, 32, ".scales", "", ""});
  check_dequant(kMlxOverrides, t, L + "self_attn.v_proj.weight", {"mxfp4", 4, 32, ".scales", "", ""});
  check_dequant(kMlxOverrides, t, L + "mlp.experts.gate_proj.weight", {"mxfp4", 4, 32, ".scales", "", ""});
  const Json l = parse_json(cli_fixture({"inspect", "--json", kMlxOverrides}).out)["logical"];
  std::map<std::string, std::string> got;
  for (const Json& w : l["weights"].items)
    got[w["name"].str()] = w["mode"].str() + (w["bits"].is_null() ? "" : " " + std::to_string(w["bits"].u64()) + "/" +
                                                                             std::to_string(w["group"].u64()));
  const std::map<std::string, std::string> want = {
      {L + "mlp.experts.gate_proj.weight", "mxfp4 4/32"}, {L + "mlp.gate.weight", "affine 8/64"},
      {L + "mlp.shared_expert_gate.weight", "affine 8/64"}, {L + "self_attn.k_proj.weight", "affine 4/128"},
      {L + "self_attn.q_proj.weight", "nvfp4 4/16"},      {L + "self_attn.v_proj.weight", "mxfp4 4/32"},
      {L + "self_attn.o_proj.weight", "mxfp8 8/32"},      {L + "mlp.down_proj.weight", "none"},
      {"lm_head.weight", "none"},                          {"model.norm.weight", "none"}};
  EXPECT_EQ(got, want);
}

TEST(CliConventions, OllamaInferredDequantEveryWeight) {
  const auto t = blob_tensors(kDir + "/ollama-inferred");
  const std::string L = "model.layers.0.", E = L + "mlp.experts.";
  // No quant_type: int4 / int8 and the group from the shapes.
  check_dequant(kOllamaInferred, t, L + "self_attn.q_proj.weight", {"affine", 4, 32, ".scale", ".bias", ""});
  check_dequant(kOllamaInferred, t, L + "self_attn.k_proj.weight", {"affine", 8, 64, ".scale", ".bias", ""});
  check_dequant(kOllamaInferred, t, L + "mlp.up_proj.weight", {"affine", 8, 128, ".scale", ".bias", ""});
  // "INT8" (g32 from the shapes with the type's 8), " Nvfp4 ", "q4".
  check_dequant(kOllamaInferred, t, E + "gate_proj.weight", {"affine", 8, 32, ".scale", ".bias", ""});
  check_dequant(kOllamaInferred, t, E + "down_proj.weight", {"nvfp4", 4, 16, ".scale", "", ".global_scale"});
  check_dequant(kOllamaInferred, t, E + "up_proj.weight", {"affine", 4, 32, ".scale", ".bias", ""});
  // A .scale with no base tensor is an ordinary tensor: its stored F32 values.
  TempDir dir;
  const RunResult r = cli_fixture({"dequant", kOllamaInferred, "--tensor", L + "router.scale", "--chunk-size", "1", "-o", dir.file("r.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.file("r.bin")), t.at(L + "router.scale").bytes);
  EXPECT_EQ(r.out, L + "router.scale: F32 [8] -> 8 f32 values, 32 bytes in " + dir.file("r.bin") + "\n");
}

// F8Q8 (mistral.rs f8q8/mod.rs): 33-byte blocks {e4m3fn d; i8 qs[32]}, value = q * (d / 448); the
// flattened weight is padded to whole blocks and the values past the shape's count are dropped.
std::string expected_f8q8(const Stored& packed, uint64_t elements) {
  std::string out;
  for (uint64_t i = 0; i < elements; ++i) {
    const uint8_t* blk = reinterpret_cast<const uint8_t*>(packed.bytes.data()) + i / 32 * 33;
    volatile float d = e4m3(blk[0]) / 448.0f;
    const float v = float(int8_t(blk[1 + i % 32])) * d;
    out.append(reinterpret_cast<const char*>(&v), 4);
  }
  EXPECT_EQ(packed.bytes.size(), (elements + 31) / 32 * 33);
  return out;
}

TEST(CliConventions, UqffPaddedF8Q8DequantEveryLayer) {
  const auto t0 = read_tensors(kDir + "/uqff-f8q8/model-0.uqff"), t1 = read_tensors(kDir + "/uqff-f8q8/model-1.uqff");
  const std::string L = "model.layers.0.";
  struct Layer {
    std::string name;
    const std::map<std::string, Stored>* file;
    uint64_t elements;
    std::string shape;
  };
  const Layer layers[] = {{L + "self_attn.q_proj.weight", &t0, 60, "[3, 20]"},
                          {L + "self_attn.k_proj.weight", &t0, 32, "[1, 32]"},
                          {L + "mlp.experts.down_proj.weight", &t1, 42, "[2, 3, 7]"},
                          {L + "mlp.gate_proj.weight", &t1, 25, "[5, 5]"}};
  for (const Layer& layer : layers) {
    const std::string want = expected_f8q8(layer.file->at(layer.name), layer.elements);
    for (const char* chunk : {"65536", "1", "7"}) {
      TempDir dir;
      const RunResult r = cli_fixture({"dequant", kUqffF8q8, "--tensor", layer.name, "--chunk-size", chunk, "-o", dir.file("w.bin")});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_TRUE(same_bytes(want, read_file(dir.file("w.bin")))) << layer.name << " chunk " << chunk;
      EXPECT_EQ(r.out, layer.name + ": uqff F8Q8 (type=f8q8) " + layer.shape + " -> " + std::to_string(layer.elements) +
                           " f32 values, " + std::to_string(layer.elements * 4) + " bytes in " + dir.file("w.bin") + "\n");
    }
  }
  // The version tensors are in both shards: one model, version 1.2.0, 5 weights.
  const Json j = parse_json(cli_fixture({"inspect", "--json", kDir + "/uqff-f8q8/model-1.uqff"}).out);
  EXPECT_TRUE(j["logical"]["error"].is_null());
  EXPECT_EQ(j["logical"]["weights"].items.size(), 5u);
}

// malformed/expected.json, case by case: dequant --all and inspect --json give its code, offset,
// tensor and file, no output is written, and the message carries the values.
TEST(CliConventions, MalformedNeighboursAsExpectedJsonSays) {
  const Json cases = parse_json(read_file(kDir + "/malformed/expected.json"))["cases"];
  ASSERT_EQ(cases.items.size(), 8u);
  for (const Json& c : cases.items) {
    const std::string dir = kDir + "/malformed/" + c["dir"].str(), what = c["dir"].str();
    const std::string file = c["file"].str();
    TempDir out;
    const RunResult r = cli_fixture({"dequant", dir + "/" + c["open"].str(), "--all", "--json", "-o", out.file("all")});
    EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.out << r.err;
    const Json e = parse_json(r.out)["error"];
    EXPECT_EQ(e["code"].str(), c["status"].str()) << what;
    EXPECT_EQ(e["offset"].u64(), c["offset"].u64()) << what;
    if (c["tensor"].is_null()) {
      EXPECT_TRUE(e["tensor"].is_null()) << what;
    } else {
      EXPECT_EQ(e["tensor"].str(), c["tensor"].str()) << what;
    }
    // The file the offset is in: the shard / blob; for the MLX file named on the command line,
    // none (a config.json error names config.json's path).
    if (c["kind"].str() == "mlx" && file == "model.safetensors") {
      EXPECT_TRUE(e["shard"].is_null()) << what;
    } else if (file == "config.json") {
      EXPECT_EQ(e["shard"].str(), dir + "/config.json") << what;
    } else {
      EXPECT_EQ(e["shard"].str(), file) << what;
    }
    if (!c["found"].is_null() && !c["expected"].is_null()) {
      const std::string f = std::to_string(c["found"].u64()), x = std::to_string(c["expected"].u64());
      EXPECT_NE(e["message"].str().find(f), std::string::npos) << what << ": " << e["message"].str();
      EXPECT_NE(e["message"].str().find(x), std::string::npos) << what << ": " << e["message"].str();
    }
    size_t written = 0;
    if (fs::exists(out.file("all")))
      for (const auto& x : fs::directory_iterator(out.file("all"))) written += x.is_regular_file();
    EXPECT_EQ(written, 0u) << what;
    // inspect reports the same problem in its logical section.
    const Json l = parse_json(cli_fixture({"inspect", "--json", dir + "/" + c["open"].str()}).out)["logical"];
    EXPECT_EQ(l["error"]["code"].str(), c["status"].str()) << what;
    EXPECT_EQ(l["error"]["offset"].u64(), c["offset"].u64()) << what;
  }
}

// A weight without a decoding (integers) is listed with its reason and not written; the others are.
TEST(CliConventions, DequantAllSkipsWeightsWithoutDecoding) {
  std::string header =
      "{\"__metadata__\":{\"format\":\"mlx\"},\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]},"
      "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}";
  while (header.size() % 8) header += ' ';
  const float v[2] = {1.5f, -2.0f};
  const std::string data = std::string(16, '\1') + std::string(reinterpret_cast<const char*>(v), 8);
  TempDir dir;
  write_file(dir.file("m.safetensors"), clitest::u64le(header.size()) + header + data);
  RunResult r = cli_fixture({"dequant", dir.file("m.safetensors"), "--all", "-o", dir.file("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "norm.weight: F32 [2] -> 2 f32 values, 8 bytes in " + dir.file("out/norm.weight.bin") +
                       "\nids: skipped: I64 holds integers, which have no float decoding\n"
                       "1 tensor, 8 bytes, written to " + dir.file("out") + "; 1 skipped\n");
  EXPECT_EQ(read_file(dir.file("out/norm.weight.bin")), std::string(reinterpret_cast<const char*>(v), 8));
  EXPECT_FALSE(fs::exists(dir.file("out/ids.bin")));
  r = cli_fixture({"dequant", dir.file("m.safetensors"), "--all", "--json"});
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["convention"].str(), "mlx");
  ASSERT_EQ(j["tensors"].items.size(), 2u);
  EXPECT_EQ(j["tensors"][0]["name"].str(), "ids");
  EXPECT_TRUE(j["tensors"][0]["format"].is_null());
  EXPECT_EQ(j["tensors"][0]["output_bytes"].u64(), 0u);
  EXPECT_EQ(j["tensors"][0]["skipped"].str(), "I64 holds integers, which have no float decoding");
}

}  // namespace

// hub/expected.json (issue #27): quantized checkpoints of methods not decoded are refused by name
// in every command — dequant writes nothing, validate is not "valid", inspect reports the same
// problem in its logical section — with the status, offset, tensor and the method in the message.
TEST(CliConventions, HubQuantizationRefusedByName) {
  const Json cases = parse_json(read_file(kDir + "/hub/expected.json"))["cases"];
  // 5 refusals; FP8's 10 cases; then gpt-oss / ModelOpt's malformed neighbours (7: their own
  // statuses, a detail only where the method is named) and the refusals named by
  // quantize_config.json / quant_config.json (2), which the CLI reads beside the file;
  // compressed-tensors' malformed neighbours and undecoded variants (8); issue #28:
  // GPTQ's 11 cases (6 decoded, 5 malformed), gptq-quantize-config decoded now; AWQ's 11 (3
  // decoded, 8 refused or malformed), awq-quant-config decoded now; bitsandbytes' 10 malformed
  // neighbours (its decoded fixtures are model_bnb_hub_test's and the goldens'); session 11: AWQ
  // GEMV's 2 neighbours, ModelOpt FP8's 8, compressed-tensors' stored formats' 3, GPTQ 3-bit's 2 and
  // dynamic's 3; the module lists' 8 (issue #27: 3 decoded, 5 refused); compressed-tensors' nvfp4 /
  // mxfp4 8 (3 decoded, 5 refused or malformed).
  ASSERT_EQ(cases.items.size(), 96u);
  for (const Json& c : cases.items) {
    const std::string model = kDir + "/hub/" + c["dir"].str() + "/model.safetensors", what = c["dir"].str();
    const bool named = !c["detail"].str().empty();
    TempDir out;
    if (c["status"].str() == "Ok") {  // decoded, every weight written, the method and parameters named
      // The convention by the fixture's prefix, its formats and the start of its parameters.
      struct Decoded { const char* prefix; const char* conv; const char* format; const char* format2; const char* params; };
      static const Decoded kDecoded[] = {
          {"awq", "awq", "GptqPacked", "", "method=awq bits="},  // AWQ decodes with GPTQ's kernels
          {"gptq", "gptq", "GptqPacked", "", "method=gptq bits="},
          {"modelopt", "modelopt", "Fp8Block", "", "method=modelopt "},
          {"ct-nvfp4", "compressed-tensors", "MlxNvfp4", "", "method=compressed-tensors "},  // FP4: MLX's layouts
          {"ct-mxfp4", "compressed-tensors", "MlxMxfp4", "", "method=compressed-tensors "},
          {"ct-", "compressed-tensors", "CtPacked", "Fp8Block", "method=compressed-tensors "},
          {"", "fp8", "Fp8Block", "", "method=fp8 scaling="},
      };
      const Decoded* d = kDecoded;
      while (what.rfind(d->prefix, 0) != 0) ++d;
      const std::string conv = d->conv;
      RunResult r = cli_fixture({"dequant", model, "--all", "--json", "-o", out.file("all")});
      EXPECT_EQ(r.exit_code, 0) << what << "\n" << r.out << r.err;
      size_t quantized = 0;
      const Json doc = parse_json(r.out);  // kept: the loop walks inside it
      for (const Json& t : doc["tensors"].items) {
        if (t["convention"].str() != conv || t["format"].is_null()) continue;
        ++quantized;
        EXPECT_TRUE(t["format"].str() == d->format || t["format"].str() == d->format2) << what << ": " << t["format"].str();
        EXPECT_EQ(t["parameters"].str().rfind(d->params, 0), 0u) << what << ": " << t["parameters"].str();
        EXPECT_TRUE(t["written"].boolean) << what;
      }
      EXPECT_GT(quantized, 0u) << what;
      const Json l = parse_json(cli_fixture({"inspect", "--json", model}).out)["logical"];
      EXPECT_EQ(l["convention"].str(), conv) << what;
      EXPECT_TRUE(l["error"].is_null()) << what;
      EXPECT_EQ(cli_fixture({"validate", model}).exit_code, 0) << what;
      continue;
    }
    RunResult r = cli_fixture({"dequant", model, "--all", "--json", "-o", out.file("all")});
    EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.out << r.err;
    const Json e = parse_json(r.out)["error"];
    EXPECT_EQ(e["code"].str(), c["status"].str()) << what;
    EXPECT_EQ(e["offset"].u64(), c["offset"].u64()) << what;
    EXPECT_EQ(e["tensor"].str(), c["tensor"].str()) << what;
    EXPECT_TRUE(e["shard"].is_null()) << what;
    if (named) {
      EXPECT_NE(e["message"].str().find("(" + c["detail"].str() + ")"), std::string::npos) << what << ": " << e["message"].str();
    }
    EXPECT_FALSE(fs::exists(out.file("all")) && !fs::is_empty(out.file("all"))) << what;
    const Json l = parse_json(cli_fixture({"inspect", "--json", model}).out)["logical"];
    EXPECT_EQ(l["error"]["code"].str(), c["status"].str()) << what;
    EXPECT_EQ(l["error"]["offset"].u64(), c["offset"].u64()) << what;
    r = cli_fixture({"validate", model});
    EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.out;
    EXPECT_NE(r.out.find(c["status"].str()), std::string::npos) << what << "\n" << r.out;
    if (named) {
      EXPECT_NE(r.out.find(c["detail"].str()), std::string::npos) << what << "\n" << r.out;
    }
  }
}

// bitsandbytes from standard input (a source that cannot seek, issue #28): the packed weight
// passes before its quant_state JSON, which the loader waits for; the bytes are the file's
// decode's, and the line names the JSON's shape and parameters (resolved by the weight's begin).
TEST(CliConventions, BnbDequantFromStandardInputAsFromTheFile) {
  const std::string file = kDir + "/hub/bnb-fp4-no-config/model.safetensors";
  const std::string w = "model.layers.0.mlp.down_proj.weight";
  TempDir dir;
  const RunResult a = cli({"dequant", file, "--tensor", w, "-o", dir.file("file.bin")});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const RunResult b = cli({"dequant", "-", "--tensor", w, "-o", dir.file("stdin.bin")}, file);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(read_file(dir.file("stdin.bin")), read_file(dir.file("file.bin")));
  EXPECT_EQ(read_file(dir.file("stdin.bin")).size(), 64u * 320u * 4u);
  const std::string line = "bitsandbytes Bnb4 (method=bitsandbytes quant_type=fp4 blocksize=128 double_quant=false dtype=BF16) [64, 320]";
  EXPECT_NE(a.out.find(line), std::string::npos) << a.out;
  EXPECT_NE(b.out.find(line), std::string::npos) << b.out;
}
