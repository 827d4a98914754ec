// The table of conventions (lib/src/conventions/convention_table.cpp): ids and names as the
// WebAssembly ABI and the hosts know them, the resolution order, what each descriptor adds to a
// weight's DequantSpec, and the generic quantization parameters each presents.
#include <gtest/gtest.h>
#include <string.h>

#include <string>
#include <vector>

#include "../../lib/src/conventions/convention_descriptor.h"
#include "conv_test_util.h"
#include "convention_fixtures.h"
#include "weightstream/conventions.h"
#include "weightstream/model_loader.h"
#include "weightstream/reader.h"

namespace {

using convtest::Parsed;
using convtest::Split;
using ws::Status;

alignas(8) uint8_t g_cfg_arena[8192];

// "key=value" per parameter, in the order presented.
std::string params_of(const ws::LogicalWeight& w) {
  ws::QuantParameter p[ws::kMaxQuantParameters];
  const uint32_t n = ws::quant_parameters(w, p, ws::kMaxQuantParameters);
  EXPECT_LE(n, ws::kMaxQuantParameters);
  std::string out;
  for (uint32_t i = 0; i < n; ++i) {
    if (!out.empty()) out += " ";
    out += std::string(p[i].key) + "=" + (p[i].text ? std::string(p[i].text) : std::to_string(p[i].number));
  }
  return out;
}

TEST(ConventionTable, IdsNamesAndPlainness) {
  ASSERT_EQ(ws::convention_count(), 11u);
  // issue #27: 4..7; #28: 8 gptq, 9 awq, 10 bitsandbytes
  const char* names[] = {"plain", "mlx", "ollama", "uqff", "fp8", "mxfp4", "modelopt", "compressed-tensors", "gptq",
                         "awq", "bitsandbytes"};
  for (uint8_t id = 0; id < 11; ++id) {
    const ws::ConventionInfo i = ws::convention_info(ws::Convention{id});
    EXPECT_STREQ(i.name, names[id]);
    EXPECT_STREQ(ws::convention_name(ws::Convention{id}), names[id]);
    EXPECT_EQ(i.plain, id == 0) << names[id];
    EXPECT_EQ(ws::convention_descriptor(ws::Convention{id}).id, ws::Convention{id});
  }
  EXPECT_STREQ(ws::convention_name(ws::Convention{11}), "?");
  EXPECT_FALSE(ws::convention_info(ws::Convention{200}).plain);
}

// The entry first (UQFF files, an Ollama manifest), then the metadata (Ollama before MLX), then a
// config.json quantization section (MLX), else plain.
TEST(ConventionTable, ResolutionOrder) {
  const uint32_t mlx = 1u << 1, ollama = 1u << 2;
  auto resolve = [](ws::ModelEntry e, uint32_t bits, bool cfg) {
    return std::string(ws::resolve_convention(uint8_t(e), bits, cfg).name);
  };
  EXPECT_EQ(resolve(ws::ModelEntry::File, 0, false), "plain");
  EXPECT_EQ(resolve(ws::ModelEntry::ShardIndex, 0, true), "mlx");
  EXPECT_EQ(resolve(ws::ModelEntry::File, mlx, false), "mlx");
  EXPECT_EQ(resolve(ws::ModelEntry::File, mlx | ollama, true), "ollama");
  EXPECT_EQ(resolve(ws::ModelEntry::OllamaManifest, mlx, true), "ollama");
  EXPECT_EQ(resolve(ws::ModelEntry::UqffFiles, mlx | ollama, true), "uqff");
  // config.json is read where the convention so far reads it (plain may become MLX; MLX's params).
  EXPECT_EQ(ws::resolve_convention(uint8_t(ws::ModelEntry::File), 0, false).config, ws::ConfigRole::MaySignalOther);
  EXPECT_EQ(ws::resolve_convention(uint8_t(ws::ModelEntry::File), mlx, false).config, ws::ConfigRole::ParamSource);
  EXPECT_EQ(ws::resolve_convention(uint8_t(ws::ModelEntry::File), ollama, false).config, ws::ConfigRole::Ignored);
  EXPECT_EQ(ws::resolve_convention(uint8_t(ws::ModelEntry::UqffFiles), 0, false).config, ws::ConfigRole::Ignored);
  // A data phase: UQFF's (its scalars), compressed-tensors' (weight_shape, checked only) and
  // bitsandbytes' (the quant_state JSON), every hook set.
  uint32_t rows = 0;
  const ws::ConventionDescriptor* const* all = ws::convention_rows(&rows);
  std::string with_data;
  for (uint32_t i = 0; i < rows; ++i)
    if (const ws::ConventionDataPhase* d = all[i]->data_phase) {
      with_data += all[i]->name;
      EXPECT_TRUE(d->wants && d->feed && d->resolve) << all[i]->name;
    }
  EXPECT_EQ(with_data, "uqffcompressed-tensorsbitsandbytes");
  // FP8 (issue #27): `.weight_scale_inv` names signal it after MLX; an MLX section still wins, and
  // config.json is its parameter source. quant_method "fp8" names its row (any other: none).
  const uint32_t fp8 = 1u << 4;
  EXPECT_EQ(resolve(ws::ModelEntry::File, fp8, false), "fp8");
  EXPECT_EQ(resolve(ws::ModelEntry::File, fp8, true), "mlx");
  EXPECT_EQ(resolve(ws::ModelEntry::File, fp8 | mlx, false), "mlx");
  EXPECT_EQ(ws::resolve_convention(uint8_t(ws::ModelEntry::File), fp8, false).config, ws::ConfigRole::ParamSource);
}

// choose_convention(): the method the config names first (whatever the files signal), then the
// resolution, then (a plain model whose config names no method) the tensor names.
std::string choose(const char* config_json, ws::ModelEntry entry, uint32_t bits, bool* claimed) {
  static uint8_t arena[1 << 14];
  ws::MlxQuantConfig cfg(arena, sizeof arena);
  const bool have = config_json != nullptr;
  if (have) {
    EXPECT_EQ(convtest::feed_all(cfg, config_json, Split::Whole), Status::Ok);
  }
  ws::LogicalWeight storage[1];
  ws::LogicalModel m(storage, 1);
  const bool quantized = have && cfg.has_quantization();
  return ws::choose_convention(uint8_t(entry), bits, quantized, m, have ? &cfg : nullptr, claimed).name;
}

TEST(ConventionTable, ChooseTakesTheConfigsMethodFirst) {
  const uint32_t mlx = 1u << 1, fp8 = 1u << 4;
  bool claimed = false;
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"fp8"}})", ws::ModelEntry::File, 0, &claimed), "fp8");
  EXPECT_TRUE(claimed);
  // The config's method over the files' metadata (and over the entry).
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"fp8"}})", ws::ModelEntry::File, mlx, &claimed), "fp8");
  EXPECT_TRUE(claimed);
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"mxfp4"}})", ws::ModelEntry::File, mlx, &claimed),
            "mxfp4");
  EXPECT_TRUE(claimed);
  // AWQ (issue #28) claims its method, over the entry too.
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"awq"}})", ws::ModelEntry::File, mlx, &claimed), "awq");
  EXPECT_TRUE(claimed);
  // A method no row decodes: resolution decides, unclaimed (the loader then refuses the method).
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"hqq"}})", ws::ModelEntry::File, 0, &claimed), "plain");
  EXPECT_FALSE(claimed);
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"fp8x"}})", ws::ModelEntry::File, fp8, &claimed), "fp8");
  EXPECT_FALSE(claimed);
  EXPECT_EQ(choose(R"({"quantization_config":{"quant_method":"hqq"}})", ws::ModelEntry::OllamaManifest, 0, &claimed),
            "ollama");
  EXPECT_FALSE(claimed);
  // No method: the entry and the signals; an MLX section; a plain model with no scheme's names.
  EXPECT_EQ(choose(nullptr, ws::ModelEntry::File, fp8, &claimed), "fp8");
  EXPECT_FALSE(claimed);
  EXPECT_EQ(choose(R"({"quantization":{"group_size":64,"bits":4}})", ws::ModelEntry::File, 0, &claimed), "mlx");
  EXPECT_FALSE(claimed);
  EXPECT_EQ(choose(nullptr, ws::ModelEntry::File, 0, &claimed), "plain");
  EXPECT_FALSE(claimed);
}

TEST(ConventionTable, MlxParametersAndSpec) {
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  std::vector<uint8_t> file = samplegen::serialize_raw(f.tensors, f.data_order, {{"format", "mlx"}}, false);
  ws::MlxQuantConfig cfg(g_cfg_arena, sizeof g_cfg_arena);
  ASSERT_EQ(convtest::feed_all(cfg, f.config_json, Split::Whole), Status::Ok);
  Parsed p;
  convtest::parse(file, Split::Whole, 7, false, &p);
  ASSERT_EQ(p.status, Status::Ok);
  EXPECT_EQ(ws::convention_signal(p.reader->tensors()), ws::Convention::Mlx);
  EXPECT_EQ(ws::convention_signal_bits(p.reader->tensors()), 1u << 1);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  ASSERT_EQ(ws::kMlxConvention.build(m, &cfg), Status::Ok);
  const char* q = "model.layers.0.self_attn.q_proj.weight";
  const ws::LogicalWeight& wq = m.weight(m.find(q, strlen(q)));
  EXPECT_EQ(wq.convention, ws::Convention::Mlx);
  EXPECT_EQ(params_of(wq), "mode=affine bits=3 group=32 scale_dtype=F16");
  EXPECT_FALSE(wq.spec().global_scale_is_ollama);
  const char* u = "model.layers.0.mlp.up_proj.weight";
  EXPECT_EQ(params_of(m.weight(m.find(u, strlen(u)))), "mode=mxfp4 bits=4 group=32 scale_dtype=U8");
  const char* b = "model.layers.0.self_attn.q_proj.bias";
  EXPECT_EQ(params_of(m.weight(m.find(b, strlen(b)))), "");  // a plain weight presents nothing
  // A short buffer: the count is still the whole list; only `cap` are written.
  ws::QuantParameter two[2];
  EXPECT_EQ(ws::quant_parameters(wq, two, 2), 4u);
  EXPECT_STREQ(two[1].key, "bits");
  EXPECT_EQ(two[1].number, 3u);
  // The companions' names lead to their weight (owner(), from the descriptors' companion names).
  for (uint32_t i = 0; i < p.reader->tensor_count(); ++i) {
    const std::string name(p.reader->tensor(i).name.data, p.reader->tensor(i).name.size);
    ws::PieceRole role;
    const uint32_t w = m.owner(ws::TensorRef{0, i}, &role);
    ASSERT_NE(w, ws::kNoTensor) << name;
    if (name == "model.layers.0.self_attn.q_proj.scales") {
      EXPECT_EQ(w, m.find(q, strlen(q)));
      EXPECT_EQ(role, ws::PieceRole::Scales);
    }
  }
}

TEST(ConventionTable, OllamaParametersAndSpec) {
  samplegen::OllamaFixture f = samplegen::ollama_fixture();
  std::vector<size_t> order;
  for (size_t i = 0; i < f.tensors.size(); ++i) order.push_back(i);
  std::vector<uint8_t> file = samplegen::serialize_raw(f.tensors, order, f.metadata, true);
  Parsed p;
  convtest::parse(file, Split::Whole, 7, false, &p);
  ASSERT_EQ(p.status, Status::Ok);
  EXPECT_EQ(ws::convention_signal(p.reader->tensors()), ws::Convention::Ollama);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  ASSERT_EQ(ws::kOllamaConvention.build(m, nullptr), Status::Ok);
  const ws::LogicalWeight& c = m.weight(m.find("c.weight", 8));
  EXPECT_EQ(c.convention, ws::Convention::Ollama);
  EXPECT_EQ(params_of(c), "mode=nvfp4 bits=4 group=16 scale_dtype=U8");
  EXPECT_TRUE(c.spec().global_scale_is_ollama);  // Ollama's own global-scale rule
  const ws::LogicalWeight& bias = m.weight(m.find("lin.bias", 8));
  EXPECT_EQ(bias.convention, ws::Convention::Plain);
  EXPECT_FALSE(bias.spec().global_scale_is_ollama);
  EXPECT_EQ(params_of(m.weight(m.find("a.weight", 8))), "mode=affine bits=4 group=32 scale_dtype=BF16");
}

}  // namespace
