// Quantized checkpoints of the Hub that this reader does not decode (issue #27, part 1): a model
// whose config.json quantization_config names a quant_method, or whose tensor names are a known
// scheme's, is refused with QuantizationUnsupported naming the method and a tensor — in every load
// mode, every chunking, seekable and sequential — never handed on as plain tensors. The committed
// fixtures (tests/data/conventions/hub/, ws-make-samples) carry their verdicts in expected.json;
// the name-only schemes and the config reader's rules are checked here on models built in memory.
#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "mini_json.h"
#include "model_host.h"
#include "weightstream/mlx_config.h"

using clitest::Json;
using clitest::parse_json;
using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

const std::string kHub = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/hub";

std::string read_text(const std::string& path) {
  Bytes b;
  EXPECT_TRUE(modeltest::disk_files("")(path, &b)) << path;
  return std::string(b.begin(), b.end());
}

LoadResult load_dir(const std::string& dir, const HostOptions& o) {
  return modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::Auto, "model.safetensors", o);
}

TEST(QuantizedHub, ExpectedJsonVerdictsInEveryModeChunkingAndAccess) {
  const Json cases = parse_json(read_text(kHub + "/expected.json"))["cases"];
  ASSERT_EQ(cases.items.size(), 14u);
  for (const Json& c : cases.items) {
    const std::string dir = kHub + "/" + c["dir"].str();
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Headers, ws::ModelLoadMode::Validate, ws::ModelLoadMode::Decode})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
        for (bool seekable : {true, false}) {
          HostOptions o;
          o.mode = mode;
          o.feed = feed;
          o.seekable = seekable;
          o.seed = 7;
          const LoadResult r = load_dir(dir, o);
          const std::string what = c["dir"].str() + " mode " + std::to_string(int(mode)) + " feed " +
                                   std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
          EXPECT_EQ(ws::status_name(r.code), c["status"].str()) << what;
          EXPECT_EQ(r.offset, c["offset"].u64()) << what;
          EXPECT_EQ(r.tensor, c["tensor"].str()) << what;
          EXPECT_EQ(r.file, c["file"].str()) << what;
          EXPECT_EQ(r.detail, c["detail"].str()) << what;
          EXPECT_TRUE(r.convention_error) << what;
          EXPECT_FALSE(r.ready) << what;
          EXPECT_TRUE(r.weights.empty()) << what;
        }
  }
}

// as_stored is the one way to the bytes of a model refused: every tensor as stored, no convention.
TEST(QuantizedHub, AsStoredStillHandsOnTheStoredBytes) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Raw;
  o.as_stored = true;
  const LoadResult r = load_dir(kHub + "/fp8-block", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_EQ(r.weight_names.size(), 6u);
  const std::string w = "model.layers.0.self_attn.kv_a_proj_with_mqa.weight";
  ASSERT_EQ(r.weights.count(w), 1u);
  EXPECT_EQ(r.weights.at(w).bytes.size(), 48u);
  EXPECT_EQ(r.weights.at(w).bytes[0], 0x38);  // E4M3 1.0, as stored (its block scale is 5.0)
}

// --- models built in memory ---------------------------------------------------------------------

struct T {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  size_t bytes;
};

// A safetensors file of zero-filled tensors, in the order given.
Bytes safetensors(const std::vector<T>& ts) {
  std::string h = "{";
  size_t at = 0;
  for (const T& t : ts) {
    if (h.size() > 1) h += ",";
    h += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) h += (i ? "," : "") + std::to_string(t.shape[i]);
    h += "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + t.bytes) + "]}";
    at += t.bytes;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  std::string file;
  for (int k = 0; k < 8; ++k) file += char(uint8_t(uint64_t(h.size()) >> (8 * k)));
  file += h + std::string(at, '\0');
  return Bytes(file.begin(), file.end());
}

LoadResult load_memory(const Bytes& model, const std::string* config, ws::ModelLoadMode mode = ws::ModelLoadMode::Validate) {
  std::map<std::string, Bytes> files = {{"model.safetensors", model}};
  if (config) files["config.json"] = Bytes(config->begin(), config->end());
  HostOptions o;
  o.mode = mode;
  return modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::Auto, "model.safetensors", o);
}

// Without config.json the companion names alone say the scheme (huggingface.js
// parse-safetensors-metadata.ts lists the same suffixes); the tensor named is the scheme's first.
TEST(QuantizedHub, CompanionNamesAloneNameTheScheme) {
  struct Case {
    std::vector<T> tensors;
    std::string tensor, detail;
  };
  const std::vector<Case> cases = {
      {{{"m.weight_packed", "I32", {4, 1}, 16}, {"m.weight_scale", "BF16", {4, 1}, 8}, {"m.weight_shape", "I64", {2}, 16}},
       "m.weight_packed", "compressed-tensors, by its companion names (.weight_packed + .weight_shape)"},
      {{{"m.weight", "U8", {8, 1}, 8},
        {"m.weight.absmax", "F32", {1}, 4},
        {"m.weight.quant_map", "F32", {16}, 64},
        {"m.weight.quant_state.bitsandbytes__nf4", "U8", {4}, 4}},
       "m.weight.absmax", "bitsandbytes, by its companion names (.absmax + .quant_state.bitsandbytes__*)"},
      {{{"m.weight", "F8_E4M3", {2, 2}, 4}, {"m.weight_scale", "F32", {}, 4}},
       "m.weight_scale", "fp8, compressed-tensors or modelopt, by its companion name (.weight_scale)"},
  };
  for (const Case& c : cases) {
    const LoadResult r = load_memory(safetensors(c.tensors), nullptr);
    EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << c.tensor << ": " << r.verdict();
    EXPECT_EQ(r.tensor, c.tensor);
    EXPECT_EQ(r.detail, c.detail);
  }
  // gpt-oss's `_blocks` + `_scales` and ModelOpt's `.weight_scale_2` name schemes this reader
  // decodes (model_fp4_hub_test.cpp): recognised, not refused.
  {
    const LoadResult g = load_memory(safetensors({{"model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", {2, 4, 1, 16}, 128},
                                                  {"model.layers.0.mlp.experts.gate_up_proj_scales", "U8", {2, 4, 1}, 8}}),
                                     nullptr);
    EXPECT_EQ(g.code, ws::Status::Ok) << g.verdict();
    EXPECT_EQ(std::string(ws::convention_name(g.convention)), "mxfp4");
  }
  // A half of a pair alone is no scheme: `qzeros` without `qweight`, `_blocks` without `_scales`.
  const LoadResult r = load_memory(safetensors({{"a.qzeros", "I32", {1}, 4}, {"b_blocks", "U8", {1}, 1}}), nullptr);
  EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
}

// MLX is unchanged: a quantization section without a quant_method is MLX's (mlx-lm writes none),
// and MLX's own files (`"format": "mlx"`) are never scanned for other schemes' names.
TEST(QuantizedHub, MlxSectionsAreStillMlx) {
  const std::string cfg = "{\"quantization_config\": {\"group_size\": 32, \"bits\": 4}}";
  const LoadResult r = load_memory(safetensors({{"a.weight", "U32", {2, 4}, 32},
                                                {"a.scales", "F16", {2, 1}, 4},
                                                {"a.biases", "F16", {2, 1}, 4}}),
                                   &cfg, ws::ModelLoadMode::Headers);
  EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_EQ(std::string(ws::convention_name(r.convention)), "mlx");
  EXPECT_TRUE(r.config_used);
}

// --- the config reader --------------------------------------------------------------------------

alignas(8) uint8_t g_arena[8192];

ws::Status parse_config(const std::string& text, ws::MlxQuantConfig* c) {
  ws::Status s = c->feed(text.data(), text.size());
  return s == ws::Status::Ok ? c->finish() : s;
}

TEST(QuantizedHub, ConfigReaderTakesQuantMethodAndDefersParameterErrors) {
  {  // GPTQ's group_size -1 before its quant_method (transformers sorts the keys): not an error.
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    const std::string text = "{\"quantization_config\": {\"bits\": 4, \"group_size\": -1, \"desc_act\": false, "
                             "\"meta\": {\"x\": [1]}, \"quant_method\": \"gptq\"}}";
    ASSERT_EQ(parse_config(text, &c), ws::Status::Ok);
    EXPECT_TRUE(c.has_method());
    EXPECT_FALSE(c.has_quantization());
    EXPECT_EQ(std::string(c.method().data, c.method().size), "gptq");
    EXPECT_EQ(c.method_offset(), text.find("\"gptq\""));
    ws::QuantParams p;
    EXPECT_FALSE(c.lookup("x", 1, &p));
  }
  {  // Without a quant_method it is MLX's section, and the same value its error, where it stands.
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    const std::string text = "{\"quantization\": {\"bits\": 4, \"group_size\": -1}}";
    EXPECT_EQ(parse_config(text, &c), ws::Status::ConfigInvalidQuantization);
    EXPECT_EQ(c.error().offset, text.find("-1"));
  }
  {  // An override's bad value, deferred the same way, is still MLX's error at its offset.
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    const std::string text = "{\"quantization\": {\"bits\": 4, \"a\": {\"mode\": [1]}, \"group_size\": 32}}";
    EXPECT_EQ(parse_config(text, &c), ws::Status::ConfigUnknownMode);
    EXPECT_EQ(c.error().offset, text.find("[1]"));
  }
  {  // "quant_method": "mlx" (vLLM's name for MLX checkpoints) is MLX's own section.
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    ASSERT_EQ(parse_config("{\"quantization\": {\"quant_method\": \"mlx\", \"bits\": 4, \"group_size\": 32}}", &c),
              ws::Status::Ok);
    EXPECT_FALSE(c.has_method());
    EXPECT_TRUE(c.has_quantization());
    EXPECT_EQ(c.defaults().bits, 4u);
  }
  {  // A quant_method that is not a string is not a quantization section transformers reads.
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    const std::string text = "{\"quantization_config\": {\"quant_method\": 4}}";
    EXPECT_EQ(parse_config(text, &c), ws::Status::ConfigInvalidQuantization);
    EXPECT_EQ(c.error().offset, text.find("4}"));
  }
  {  // Streamed a byte at a time: the same method.
    ws::MlxQuantConfig c(g_arena, sizeof g_arena);
    const std::string text = "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"x\"}}";
    for (char ch : text) ASSERT_EQ(c.feed(&ch, 1), ws::Status::Ok);
    ASSERT_EQ(c.finish(), ws::Status::Ok);
    EXPECT_EQ(std::string(c.method().data, c.method().size), "compressed-tensors");
  }
}

}  // namespace
