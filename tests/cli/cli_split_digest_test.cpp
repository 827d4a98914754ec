// The CLI on split GGUF models and digests (issue #17), end to end: validate, inspect (text and
// JSON) and dequant of a model named by any of its splits — one model, its rows naming their
// splits, the same values as the unsplit file; every malformed split case's JSON error (status,
// offset, split file); --sha256 FILE=HEX (right, wrong, a name no model has, a path); Ollama blobs
// verified by default (--no-verify-blobs to read them as named).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mini_json.h"
#include "process.h"
#include "sha256.h"

namespace fs = std::filesystem;
using clitest::Json;
using clitest::parse_json;
using namespace clitest;

namespace {

const std::string kSplit = std::string(WS_SOURCE_DIR) + "/tests/data/split-gguf";

std::string sha_of(const std::string& path) {
  const std::string b = read_file(path);
  return wstest::sha256_hex(b.data(), b.size());
}

const Json& expected() {
  static const Json j = parse_json(read_file(kSplit + "/expected.json"));
  return j;
}

TEST(CliSplit, ValidateNamesOneModelFromAnySplit) {
  for (const char* entry : {"tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf"}) {
    const RunResult r = cli({"validate", kSplit + "/" + entry});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, kSplit + "/" + entry + ": valid (gguf, 3 splits, 6 tensors)\n");
  }
  const RunResult r = cli({"validate", "--json", kSplit + "/meta-first-00004-of-00004.gguf"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(parse_json(r.out)["tensors"].u64(), 6u);
  // One split of one: a whole model.
  EXPECT_EQ(cli({"validate", kSplit + "/whole-00001-of-00001.gguf"}).out, kSplit + "/whole-00001-of-00001.gguf: valid (gguf, 6 tensors)\n");
}

TEST(CliSplit, InspectJsonListsTheSplitsAndEachTensorsSplit) {
  const RunResult r = cli({"inspect", "--json", kSplit + "/tiny-00002-of-00003.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = parse_json(r.out);
  ASSERT_EQ(j["splits"].items.size(), 3u);
  EXPECT_EQ(j["splits"][0]["file"].str(), "tiny-00001-of-00003.gguf");
  EXPECT_EQ(j["splits"][2]["size"].u64(), fs::file_size(kSplit + "/tiny-00003-of-00003.gguf"));
  ASSERT_EQ(j["tensors"].items.size(), 6u);
  const std::vector<uint64_t> splits = {0, 0, 1, 1, 2, 2};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(j["tensors"][i]["split"].u64(), splits[i]) << i;
  // The model's key-values are the first split's (general.architecture is only there).
  EXPECT_EQ(j["gguf"]["architecture"].str(), "llama");
  EXPECT_EQ(j["model_facts"]["architecture"].str(), "llama");
  // A single file keeps its documented keys: no "splits", no "split".
  const Json one = parse_json(cli({"inspect", "--json", kSplit + "/tiny.gguf"}).out);
  EXPECT_FALSE(one.has("splits"));
  EXPECT_FALSE(one["tensors"][0].has("split"));
  // The same tensors as the unsplit model, in the same order.
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(j["tensors"][i]["name"].str(), one["tensors"][i]["name"].str());
    EXPECT_EQ(j["tensors"][i]["dtype"].str(), one["tensors"][i]["dtype"].str());
    EXPECT_EQ(j["tensors"][i]["bytes"].u64(), one["tensors"][i]["bytes"].u64());
  }
}

TEST(CliSplit, InspectTextShowsTheSplitsAndTheirExtraKeyValues) {
  const RunResult r = cli({"inspect", kSplit + "/malformed/foreign-kv/model-00001-of-00003.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("splits       3, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 (not read: only the first split's are the model's)  model-00002-of-00003.gguf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict      valid"), std::string::npos);
}

TEST(CliSplit, DequantOfASplitModelIsTheUnsplitModel) {
  TempDir a, b;
  RunResult r = cli({"dequant", kSplit + "/tiny-00003-of-00003.gguf", "--all", "-o", a.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = cli({"dequant", kSplit + "/tiny.gguf", "--all", "-o", b.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(b.path())) {
    EXPECT_EQ(read_file(a.file(e.path().filename())), read_file(e.path())) << e.path();
    ++n;
  }
  EXPECT_EQ(n, 6u);
  // --json names each tensor's split.
  r = cli({"dequant", kSplit + "/tiny-00001-of-00003.gguf", "--all", "--json"});
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["tensors"][5]["split"].str(), "tiny-00003-of-00003.gguf");
  EXPECT_EQ(j["tensors"][5]["name"].str(), "output_norm.weight");
}

// Each malformed case: validate --json says the status at its offset in its split.
TEST(CliSplit, EveryMalformedCaseNamesItsSplit) {
  size_t n = 0;
  for (const Json& c : expected()["cases"].items) {
    if (c["valid"].boolean) continue;
    const std::string entry = kSplit + "/" + c["dir"].str() + "/" + c["entry"].str();
    const RunResult r = cli({"validate", "--json", entry});
    EXPECT_EQ(r.exit_code, 1) << c["case"].str() << r.err;
    const Json e = parse_json(r.out)["error"];
    EXPECT_EQ(e["code"].str(), c["code"].str()) << c["case"].str();
    EXPECT_EQ(e["offset"].u64(), c["offset"].u64()) << c["case"].str();
    // The split is named when it is not the file on the command line.
    if (c["file"].str() != c["entry"].str()) {
      EXPECT_EQ(e["shard"].str(), c["file"].str()) << c["case"].str();
    }
    ++n;
  }
  EXPECT_GE(n, 14u);
}

TEST(CliSplit, Sha256VerifiesTheFilesNamed) {
  const std::string s3 = kSplit + "/tiny-00003-of-00003.gguf";
  RunResult r = cli({"validate", kSplit + "/tiny-00001-of-00003.gguf", "--sha256", "tiny-00003-of-00003.gguf=" + sha_of(s3),
                     "--sha256", kSplit + "/tiny-00001-of-00003.gguf=" + sha_of(kSplit + "/tiny-00001-of-00003.gguf")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string wrong(64, 'e');
  r = cli({"validate", "--json", kSplit + "/tiny-00001-of-00003.gguf", "--sha256=tiny-00003-of-00003.gguf=" + wrong});
  EXPECT_EQ(r.exit_code, 1);
  const Json e = parse_json(r.out)["error"];
  EXPECT_EQ(e["code"].str(), "DigestMismatch");
  EXPECT_EQ(e["shard"].str(), "tiny-00003-of-00003.gguf");
  EXPECT_EQ(e["offset"].u64(), fs::file_size(s3));
  EXPECT_NE(e["message"].str().find("its SHA-256 is " + sha_of(s3) + ", expected " + wrong), std::string::npos) << e["message"].str();
  // A name no file of the model has verified nothing: exit 2, said.
  r = cli({"validate", kSplit + "/tiny-00001-of-00003.gguf", "--sha256", "tiny-00004-of-00003.gguf=" + wrong});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sha256 tiny-00004-of-00003.gguf: no file of the model is named so"), std::string::npos) << r.err;
  // Not a digest.
  r = cli({"validate", s3, "--sha256", "tiny-00003-of-00003.gguf=abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sha256 wants FILE=HEX"), std::string::npos);
  // dequant --tensor reads a verified model to its end, and keeps nothing when it fails.
  TempDir d;
  r = cli({"dequant", s3, "--tensor", "blk.0.attn_q.weight", "-o", d.file("q.bin"), "--sha256", "tiny-00003-of-00003.gguf=" + wrong});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(d.file("q.bin")));
  r = cli({"dequant", s3, "--tensor", "blk.0.attn_q.weight", "-o", d.file("q.bin"), "--sha256", "tiny-00003-of-00003.gguf=" + sha_of(s3)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(d.file("q.bin")));
}

// An Ollama model whose blobs are named by their true digests: verified by default.
TEST(CliSplit, OllamaBlobsAreVerifiedByDefault) {
  TempDir dir;
  fs::create_directories(dir.file("m/manifests/registry.ollama.ai/library/t"));
  fs::create_directories(dir.file("m/blobs"));
  // One blob: a safetensors file of one F32 tensor "w" [2].
  const std::string header = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  std::string blob = u64le(header.size()) + header + std::string("\0\0\x80?\0\0\0@", 8);
  const std::string hex = wstest::sha256_hex(blob.data(), blob.size());
  std::ofstream(dir.file("m/blobs/sha256-" + hex), std::ios::binary) << blob;
  const std::string manifest = dir.file("m/manifests/registry.ollama.ai/library/t/latest");
  std::ofstream(manifest) << "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                             "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:"
                          << std::string(64, '0') << "\",\"size\":2},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor\","
                             "\"digest\":\"sha256:" << hex << "\",\"size\":" << blob.size() << ",\"name\":\"w\"}]}";
  RunResult r = cli({"validate", manifest});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The same name over other bytes: the blob is not what its name says.
  blob[blob.size() - 1] = 'A';
  std::ofstream(dir.file("m/blobs/sha256-" + hex), std::ios::binary) << blob;
  r = cli({"validate", "--json", manifest});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(parse_json(r.out)["error"]["code"].str(), "DigestMismatch");
  EXPECT_EQ(parse_json(r.out)["error"]["shard"].str(), "sha256-" + hex);
  // A blob named on its own is read as a file (its name promises nothing by itself): --sha256
  // verifies it.
  r = cli({"validate", "--json", dir.file("m/blobs/sha256-" + hex)});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = cli({"validate", "--json", dir.file("m/blobs/sha256-" + hex), "--sha256", dir.file("m/blobs/sha256-" + hex) + "=" + hex});
  EXPECT_EQ(parse_json(r.out)["error"]["code"].str(), "DigestMismatch");
  // --no-verify-blobs reads them as the manifest names them.
  EXPECT_EQ(cli({"validate", "--no-verify-blobs", manifest}).exit_code, 0);
  // The convention fixtures' blobs are named by their SHA-256: verified by default, and valid.
  r = cli({"validate", "--json", std::string(WS_SOURCE_DIR) + "/tests/data/conventions/ollama/manifest.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(parse_json(r.out)["valid"].boolean);
}

}  // namespace
