// MLX config.json quantization and Ollama manifests: values, overrides, errors with offsets,
// identical under every split of the input.
#include <gtest/gtest.h>
#include <string.h>

#include <string>

#include "conv_test_util.h"
#include "weightstream/mlx_config.h"
#include "weightstream/ollama_manifest.h"

namespace {

using convtest::feed_all;
using convtest::kSplits;
using convtest::Split;
using ws::QuantMode;
using ws::Status;

alignas(8) uint8_t g_arena[16384];

const std::string kConfig =
    "{\"model_type\": \"llama\", \"layers\": [[1, {\"a\": \"x\"}]], \"quantization\": "
    "{\"group_size\": 64, \"bits\": 4, \"model.layers.3.mlp.down_proj\": {\"group_size\": 32, "
    "\"bits\": 6}, \"lm_head\": false, \"quant_method\": \"mlx\", \"model.embed_tokens\": "
    "{\"bits\": 8, \"mode\": \"affine\"}}, \"quantization_config\": {\"group_size\": 128, "
    "\"bits\": 2}, \"vocab_size\": 32000}";

TEST(MlxQuantConfig, DefaultsAndOverridesEverySplit) {
  for (Split split : kSplits) {
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    ASSERT_EQ(feed_all(c, kConfig, split), Status::Ok) << ws::status_name(c.error().code);
    ASSERT_TRUE(c.has_quantization());
    EXPECT_EQ(c.defaults().mode, QuantMode::Affine);
    EXPECT_EQ(c.defaults().bits, 4u);  // the first section wins; quantization_config is a copy
    EXPECT_EQ(c.defaults().group, 64u);
    ASSERT_EQ(c.override_count(), 3u);
    EXPECT_TRUE(c.override_path(0).equals("model.layers.3.mlp.down_proj"));
    EXPECT_TRUE(c.override_path(1).equals("lm_head"));
    EXPECT_TRUE(c.override_path(2).equals("model.embed_tokens"));
    ws::QuantParams p;
    ASSERT_TRUE(c.lookup("model.layers.3.mlp.down_proj", 28, &p));
    EXPECT_EQ(p.mode, QuantMode::Affine);
    EXPECT_EQ(p.bits, 6u);
    EXPECT_EQ(p.group, 32u);
    ASSERT_TRUE(c.lookup("lm_head", 7, &p));
    EXPECT_EQ(p.mode, QuantMode::None);
    ASSERT_TRUE(c.lookup("model.embed_tokens", 18, &p));
    EXPECT_EQ(p.bits, 8u);
    EXPECT_EQ(p.group, 64u);  // not stated in the override: affine's default (not the top level's)
    ASSERT_TRUE(c.lookup("model.layers.0.self_attn.q_proj", 31, &p));
    EXPECT_EQ(p.bits, 4u);
    EXPECT_EQ(p.group, 64u);
  }
}

TEST(MlxQuantConfig, ModeAndNoSection) {
  ws::MlxQuantConfig c(g_arena, sizeof g_arena);
  ASSERT_EQ(feed_all(c, "{\"quantization_config\":{\"mode\":\"mxfp4\",\"group_size\":32,\"bits\":4}}",
                     Split::OneByte),
            Status::Ok);
  EXPECT_EQ(c.defaults().mode, QuantMode::Mxfp4);
  ws::MlxQuantConfig d(g_arena, sizeof g_arena);
  ASSERT_EQ(feed_all(d, "{\"hidden_size\": 64}", Split::Whole), Status::Ok);
  EXPECT_FALSE(d.has_quantization());
  ws::QuantParams p;
  EXPECT_FALSE(d.lookup("x", 1, &p));
}

struct BadCase {
  const char* json;
  Status code;
  uint64_t offset;
};

TEST(MlxQuantConfig, ErrorsWithOffsets) {
  const BadCase cases[] = {
      {"[1]", Status::ConfigNotObject, 0},
      {"{\"quantization\": 4}", Status::ConfigInvalidQuantization, 17},
      {"{\"quantization\": {\"bits\": 0}}", Status::ConfigInvalidQuantization, 26},
      {"{\"quantization\": {\"bits\": \"4\"}}", Status::ConfigInvalidQuantization, 26},
      {"{\"quantization\": {\"group_size\": -64}}", Status::ConfigInvalidQuantization, 32},
      {"{\"quantization\": {\"mode\": \"mxfp6\"}}", Status::ConfigUnknownMode, 26},
      {"{\"quantization\": {\"a.b\": {\"mode\": 3}}}", Status::ConfigUnknownMode, 34},
      {"{\"quantization\": {\"group_size\": 64, \"bits\": 4}", Status::JsonUnexpectedEnd, 46},
      // mlx-lm's load_model reads quantization["group_size"] and ["bits"]: without either the
      // model does not load, whatever the overrides say. At the section's closing brace.
      {"{\"quantization\": {\"bits\": 4}}", Status::ConfigQuantizationIncomplete, 27},
      {"{\"quantization\": {}}", Status::ConfigQuantizationIncomplete, 18},
      {"{\"quantization\": {\"group_size\": 32, \"mode\": \"mxfp4\", \"m.gate\": {\"bits\": 8, \"group_size\": 64}}, "
       "\"x\": 1}",
       Status::ConfigQuantizationIncomplete, 92},
      {"{\"quantization_config\": {\"mode\": \"nvfp4\"}}", Status::ConfigQuantizationIncomplete, 40},
  };
  for (const BadCase& bc : cases) {
    for (Split split : kSplits) {
      ws::MlxQuantConfig c(g_arena, sizeof g_arena);
      EXPECT_EQ(feed_all(c, bc.json, split), bc.code) << bc.json;
      EXPECT_EQ(c.error().offset, bc.offset) << bc.json;
    }
  }
}

// Overrides stand alone (mlx nn/layers/quantized.py `_maybe_quantize`: `to_quantized(**override)`,
// Linear.to_quantized's mode="affine", `_defaults_for_mode`): what an object does not state is its
// own mode's default, never the top level's; `true` is the top level; `false` and {} (falsy in
// Python) are not quantized. The top level here is mxfp4, as `mlx_lm.convert --q-mode mxfp4`
// writes it with an 8-bit g64 router gate beside it (Qwen3-MoE, gpt-oss).
TEST(MlxQuantConfig, OverridesStandAloneEverySplit) {
  const std::string json =
      "{\"quantization\": {\"group_size\": 32, \"bits\": 4, \"mode\": \"mxfp4\",\n"
      " \"l.mlp.gate\": {\"group_size\": 64, \"bits\": 8},\n"
      " \"l.a\": {\"bits\": 8}, \"l.b\": {\"group_size\": 128}, \"l.c\": {\"mode\": \"nvfp4\"},\n"
      " \"l.d\": {\"mode\": \"mxfp8\"}, \"l.e\": {\"mode\": \"affine\", \"bits\": 3, \"group_size\": 32},\n"
      " \"l.f\": true, \"l.g\": false, \"l.h\": {}, \"l.i\": {\"quantize_input\": false}}}";
  struct Want {
    const char* path;
    QuantMode mode;
    uint32_t bits, group;
  };
  const Want want[] = {
      {"l.mlp.gate", QuantMode::Affine, 8, 64}, {"l.a", QuantMode::Affine, 8, 64},
      {"l.b", QuantMode::Affine, 4, 128},       {"l.c", QuantMode::Nvfp4, 4, 16},
      {"l.d", QuantMode::Mxfp8, 8, 32},         {"l.e", QuantMode::Affine, 3, 32},
      {"l.f", QuantMode::Mxfp4, 4, 32},         {"l.g", QuantMode::None, 0, 0},
      {"l.h", QuantMode::None, 0, 0},           {"l.i", QuantMode::Affine, 4, 64},
      {"l.other", QuantMode::Mxfp4, 4, 32},  // no override: the top level
  };
  for (Split split : kSplits) {
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    ASSERT_EQ(feed_all(c, json, split), Status::Ok) << ws::status_name(c.error().code) << " at " << c.error().offset;
    EXPECT_EQ(c.override_count(), 10u);
    for (const Want& w : want) {
      ws::QuantParams p;
      ASSERT_TRUE(c.lookup(w.path, strlen(w.path), &p)) << w.path;
      EXPECT_EQ(p.mode, w.mode) << w.path;
      EXPECT_EQ(p.bits, w.bits) << w.path;
      EXPECT_EQ(p.group, w.group) << w.path;
    }
  }
}

TEST(QuantParams, ModeDefaultsAreMlxs) {
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Affine).group, 64u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Affine).bits, 4u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Mxfp4).group, 32u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Mxfp4).bits, 4u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Nvfp4).group, 16u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Nvfp4).bits, 4u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Mxfp8).group, 32u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::Mxfp8).bits, 8u);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::None).mode, QuantMode::None);
  EXPECT_EQ(ws::quant_mode_defaults(QuantMode::None).bits, 0u);
}

const std::string kHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string manifest() {
  return "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
         "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":"
         "\"sha256:" + kHex + "\",\"size\":485},\"layers\":[{\"mediaType\":"
         "\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + kHex +
         "\",\"size\":1234,\"name\":\"model.embed_tokens.weight\"},{\"mediaType\":"
         "\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + std::string(64, 'f') +
         "\",\"size\":99,\"name\":\"model.layers.0.mlp.experts\",\"extra\":[1,2]},{\"mediaType\":"
         "\"application/vnd.ollama.image.template\",\"digest\":\"sha256:" + std::string(64, '0') +
         "\",\"size\":7}]}";
}

// A config whose parse failed after some overrides: lookups say "no quantization" instead of
// reading an override table that was never built (found by the CLI's fixture tests: a segfault).
TEST(MlxQuantConfig, LookupAfterAFailedParseHasNoQuantization) {
  const std::string broken =
      "{\"quantization\": {\"group_size\": 64, \"bits\": 4,\n"
      "  \"model.layers.1.mlp.down_proj\": {\"group_size\": 32, \"bits\": 3}\n"
      "  \"model.layers.1.self_attn.k_proj\": {\"bits\": 5}}}";
  ws::MlxQuantConfig c(g_arena, sizeof g_arena);
  EXPECT_NE(feed_all(c, broken, Split::Whole), Status::Ok);  // a missing comma
  ws::QuantParams p;
  const char* path = "model.layers.1.mlp.down_proj";
  EXPECT_FALSE(c.lookup(path, strlen(path), &p));
  EXPECT_EQ(c.override_path(0).size, 0u);
  EXPECT_EQ(c.override_params(0).mode, QuantMode::None);
}

TEST(OllamaManifest, LayersEverySplit) {
  for (Split split : kSplits) {
    ws::OllamaManifest m(g_arena, sizeof g_arena);
    ASSERT_EQ(feed_all(m, manifest(), split), Status::Ok) << ws::status_name(m.error().code);
    ASSERT_EQ(m.layer_count(), 3u);
    ws::ManifestLayer l0 = m.layer(0);
    EXPECT_TRUE(l0.is_tensor);
    EXPECT_TRUE(l0.blob_file.equals(("sha256-" + kHex).c_str()));
    EXPECT_TRUE(l0.name.equals("model.embed_tokens.weight"));
    EXPECT_EQ(l0.size, 1234u);
    ws::ManifestLayer l2 = m.layer(2);
    EXPECT_FALSE(l2.is_tensor);
    EXPECT_EQ(l2.name.size, 0u);
    EXPECT_EQ(l2.size, 7u);
    const char* expert = "model.layers.0.mlp.experts.gate_proj.weight";
    EXPECT_EQ(m.find_layer_for_tensor(expert, strlen(expert)), 1u);
    EXPECT_EQ(m.find_layer_for_tensor("model.embed_tokens.weight", 25), 0u);
    EXPECT_EQ(m.find_layer_for_tensor("model.embed_tokens.weightx", 26), ws::kNoTensor);
  }
}

TEST(OllamaManifest, ErrorsWithOffsets) {
  const std::string good = "\"mediaType\":\"m\",\"size\":1,\"digest\":";
  const BadCase cases[] = {
      {"\"x\"", Status::ManifestNotObject, 0},
      {"{\"config\":{}}", Status::ManifestMissingLayers, 13},
      {"{\"layers\":{}}", Status::ManifestMissingLayers, 10},
      {"{\"layers\":[1]}", Status::ManifestInvalidLayer, 11},
      {"{\"layers\":[{\"mediaType\":\"m\",\"size\":1}]}", Status::ManifestInvalidLayer, 11},
      {"{\"layers\":[{\"mediaType\":\"m\",\"size\":-1}]}", Status::ManifestInvalidLayer, 35},
  };
  for (const BadCase& bc : cases) {
    for (Split split : kSplits) {
      ws::OllamaManifest m(g_arena, sizeof g_arena);
      EXPECT_EQ(feed_all(m, bc.json, split), bc.code) << bc.json;
      EXPECT_EQ(m.error().offset, bc.offset) << bc.json;
    }
  }
  const std::string digests[] = {"sha256:" + kHex.substr(1), "sha256:" + kHex + "0",
                                 "sha512:" + kHex, "sha256:" + std::string(63, 'a') + "A"};
  for (const std::string& d : digests) {
    for (Split split : kSplits) {
      ws::OllamaManifest m(g_arena, sizeof g_arena);
      std::string json = "{\"layers\":[{" + good + "\"" + d + "\"}]}";
      EXPECT_EQ(feed_all(m, json, split), Status::ManifestInvalidDigest) << d;
      EXPECT_EQ(m.error().offset, 11 + 1 + good.size()) << d;
    }
  }
}

TEST(OllamaManifest, ArenaTooSmall) {
  alignas(8) static uint8_t small[64];
  ws::OllamaManifest m(small, sizeof small);
  EXPECT_EQ(feed_all(m, manifest(), Split::Whole), Status::ArenaExhausted);
  EXPECT_GT(m.arena_needed(), sizeof small);
}

}  // namespace
