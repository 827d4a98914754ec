// inspect --canonical and the model facts block: GGUF metadata, a config.json beside a
// safetensors file (valid and malformed), and files without facts keeping their exact keys.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mini_json.h"
#include "process.h"

namespace {

using clitest::cli;
using clitest::Json;
using clitest::parse_json;
using clitest::RunResult;

const std::string kGgufDir = std::string(WS_SHARED_DIR) + "/testdata/real/gguf";
const std::string kNamingData = std::string(WS_TESTS_DIR) + "/naming/data";

// A safetensors file of one-element F32 tensors with these names (data = 4 zero bytes each).
std::string safetensors_with(const std::vector<std::string>& names) {
  std::string h = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) h += ",";
    h += "\"" + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
         std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  h += "}";
  return clitest::u64le(h.size()) + h + std::string(4 * names.size(), '\0');
}

TEST(CliNaming, GgufFactsText) {
  RunResult r = cli({"inspect", kGgufDir + "/ggml-vocab-llama-spm.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model facts  from the GGUF metadata\n"
                       "  architecture       llama\n"
                       "  layers             32\n"
                       "  heads              32\n"
                       "  kv_heads           32\n"
                       "  hidden_size        4096\n"
                       "  intermediate_size  11008\n"
                       "  vocab_size         32000\n"
                       "  norm_eps           1e-05\n"
                       "  context_length     4096\n"),
            std::string::npos)
      << r.out;
}

TEST(CliNaming, GgufFactsJson) {
  RunResult r = cli({"inspect", "--json", kGgufDir + "/ggml-vocab-gpt-2.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = parse_json(r.out);
  const Json& f = j["model_facts"];
  EXPECT_EQ(f["source"].str(), "gguf");
  EXPECT_EQ(f["architecture"].str(), "gpt2");
  EXPECT_EQ(f["layers"].u64(), 12u);
  EXPECT_EQ(f["heads"].u64(), 12u);
  EXPECT_EQ(f["kv_heads"].u64(), 12u);
  EXPECT_EQ(f["hidden_size"].u64(), 768u);
  EXPECT_EQ(f["vocab_size"].u64(), 50257u);
  EXPECT_EQ(f["norm_eps"].text, "1e-05");
  EXPECT_TRUE(f["rope_theta"].is_null());
  ASSERT_EQ(f["derived"].items.size(), 2u);
  EXPECT_EQ(f["derived"][0].str(), "kv_heads");
  EXPECT_EQ(f["derived"][1].str(), "vocab_size");
  // After "metadata", before "gguf".
  EXPECT_EQ(j.members[j.members.size() - 3].first, "model_facts");
  EXPECT_EQ(j.members[j.members.size() - 2].first, "gguf");
}

TEST(CliNaming, NoArchitectureNoFactsKey) {
  RunResult r = cli({"inspect", "--json", kGgufDir + "/hyllama-dummy.gguf"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(parse_json(r.out).has("model_facts"));
}

TEST(CliNaming, SafetensorsWithConfigAndCanonical) {
  clitest::TempDir dir;
  const std::string model = dir.file("model.safetensors");
  clitest::write_file(model, safetensors_with({"model.embed_tokens.weight",
                                               "model.layers.0.self_attn.q_proj.weight",
                                               "model.layers.0.post_attention_layernorm.weight",
                                               "lm_head.weight", "something.else"}));
  // Without config.json: no facts, the documented keys only.
  RunResult r = cli({"inspect", "--json", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(parse_json(r.out).has("model_facts"));
  EXPECT_FALSE(parse_json(r.out)["tensors"][0].has("canonical"));

  clitest::write_file(dir.file("config.json"), clitest::read_file(kNamingData + "/gemma2.config.json"));
  r = cli({"inspect", "--json", "--canonical", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_EQ(j["model_facts"]["source"].str(), dir.file("config.json"));
  EXPECT_EQ(j["model_facts"]["architecture"].str(), "gemma2");
  EXPECT_EQ(j["model_facts"]["layers"].u64(), 26u);
  EXPECT_EQ(j["model_facts"]["kv_heads"].u64(), 4u);
  EXPECT_EQ(j["model_facts"]["rope_theta"].text, "10000");
  EXPECT_EQ(j["model_facts"]["norm_eps"].text, "1e-06");
  EXPECT_EQ(j["model_facts"]["derived"].items.size(), 0u);
  // Tensors are listed in data order; the canonical names follow the architecture (Gemma's
  // post_attention_layernorm is the attention output norm).
  const Json& t = j["tensors"];
  ASSERT_EQ(t.items.size(), 5u);
  EXPECT_EQ(t[0]["canonical"].str(), "embedding.weight");
  EXPECT_EQ(t[1]["canonical"].str(), "layers.0.attention.q.weight");
  EXPECT_EQ(t[2]["canonical"].str(), "layers.0.attention.post_norm.weight");
  EXPECT_EQ(t[3]["canonical"].str(), "output.weight");
  EXPECT_EQ(t[4]["canonical"].str(), "something.else");

  r = cli({"inspect", "--canonical", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model.layers.0.self_attn.q_proj.weight          layers.0.attention.q.weight\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("model facts  from " + dir.file("config.json") + "\n  architecture       gemma2\n"),
            std::string::npos)
      << r.out;
}

TEST(CliNaming, MalformedConfigIsReportedButTheModelStaysValid) {
  clitest::TempDir dir;
  const std::string model = dir.file("model.safetensors");
  clitest::write_file(model, safetensors_with({"lm_head.weight"}));
  clitest::write_file(dir.file("config.json"), "{\"num_hidden_layers\": \"32\"}");
  RunResult r = cli({"inspect", "--json", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = parse_json(r.out);
  EXPECT_TRUE(j["valid"].boolean);
  EXPECT_EQ(j["model_facts"]["error"]["code"].str(), "ModelConfigInvalidFact");
  EXPECT_EQ(j["model_facts"]["error"]["offset"].u64(), 22u);
  r = cli({"inspect", model});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("ModelConfigInvalidFact"), std::string::npos) << r.out;
}

}  // namespace
