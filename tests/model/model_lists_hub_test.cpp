// The quantization config's lists of modules left unquantized (modules_to_not_convert,
// ignored_layers, exclude_modules, ignore) and compressed-tensors' targets (issue #27;
// lib/src/conventions/module_lists.h): matched as transformers, vLLM, ModelOpt's vLLM reader and
// compressed-tensors match them; a module they leave unquantized is read as stored, one stored
// quantized is ConventionExcludedQuantized naming the list and the entry.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <map>
#include <string>
#include <vector>

#include "../../lib/src/conventions/module_lists.h"
#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/mlx_config.h"

namespace {

using hubtest::load;
using hubtest::load_memory;
using hubtest::output_of;
using hubtest::read_file;
using hubtest::stored;
using modeltest::Bytes;
using Feed = modeltest::HostOptions::Feed;
using modeltest::HostOptions;
using modeltest::LoadResult;
using List = ws::MlxQuantConfig::ModuleList;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

// float8_e4m3fn: bias 7, no infinities (the fixtures hold no NaN).
float e4m3(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  const float v = e == 0 ? ldexpf(float(m) / 8.0f, -6) : ldexpf(1.0f + float(m) / 8.0f, e - 7);
  return (b & 0x80) ? -v : v;
}

float bf16(const Bytes& b, size_t i) {
  const uint32_t u = uint32_t(b[2 * i] | (b[2 * i + 1] << 8)) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float f32(const Bytes& b, size_t i) {
  float f;
  memcpy(&f, b.data() + 4 * i, 4);
  return f;
}

// Every output type, chunking and access gives the expected bytes of every weight named.
void check_everywhere(const std::string& dir, const std::string& conv, const std::map<std::string, std::vector<float>>& expect,
                      size_t weights) {
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
        const std::string what = dir + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                 std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(std::string(ws::convention_name(r.convention)), conv) << what;
        EXPECT_EQ(r.weight_names.size(), weights) << what;
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
        }
      }
}

// fp8 (transformers' modules_to_not_convert, should_convert_module's endswith): the MoE router
// mlp.gate left F8_E4M3 without a scale is the stored values, not ConventionMissingCompanion;
// down_proj is its 4 x 4 blocks times their scales.
TEST(ModuleLists, Fp8ModuleLeftUnquantizedIsReadAsStored) {
  const Bytes file = read_file(kHub + "/fp8-modules-to-not-convert/model.safetensors");
  const Bytes gate = stored(file, L + "mlp.gate.weight").bytes;
  const Bytes down = stored(file, L + "mlp.down_proj.weight").bytes;
  const Bytes inv = stored(file, L + "mlp.down_proj.weight_scale_inv").bytes;
  std::map<std::string, std::vector<float>> expect;
  for (uint8_t b : gate) expect[L + "mlp.gate.weight"].push_back(e4m3(b));
  for (size_t i = 0; i < down.size(); ++i)
    expect[L + "mlp.down_proj.weight"].push_back(e4m3(down[i]) * f32(inv, (i / 8) / 4 * 2 + (i % 8) / 4));
  EXPECT_EQ(expect[L + "mlp.gate.weight"][0], 1.0f);  // the generator's first byte, 0x38
  check_everywhere("fp8-modules-to-not-convert", "fp8", expect, 3);
  // Without the list the same router is an F8 weight without its scale: refused, never raw.
  Bytes cfg = read_file(kHub + "/fp8-modules-to-not-convert/config.json");
  std::string text(cfg.begin(), cfg.end());
  text.replace(text.find("\"mlp.gate\""), 10, "\"mlp.gat\"");
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  const LoadResult r = load_memory({{"model.safetensors", file}, {"config.json", Bytes(text.begin(), text.end())}}, o);
  EXPECT_EQ(r.code, ws::Status::ConventionMissingCompanion) << r.verdict();
  EXPECT_EQ(r.tensor, L + "mlp.gate.weight");
}

// ModelOpt FP8 whose config.json has no quantization_config: hf_quant_config.json is asked for and
// names the method; its exclude_modules wildcard "*self_attn*" (vLLM modelopt.py: fnmatch) leaves
// q_proj in BF16.
TEST(ModuleLists, ModelOptWildcardAndHfQuantConfigBesidePlainConfigJson) {
  const Bytes file = read_file(kHub + "/modelopt-fp8-exclude-wildcard/model.safetensors");
  const Bytes q = stored(file, L + "self_attn.q_proj.weight").bytes;
  const Bytes down = stored(file, L + "mlp.down_proj.weight").bytes;
  std::map<std::string, std::vector<float>> expect;
  for (size_t i = 0; i < q.size() / 2; ++i) expect[L + "self_attn.q_proj.weight"].push_back(bf16(q, i));
  for (uint8_t b : down) expect[L + "mlp.down_proj.weight"].push_back(e4m3(b) * 2.5f);
  // 6 tensors: down_proj's weight_scale joins its weight.
  check_everywhere("modelopt-fp8-exclude-wildcard", "modelopt", expect, 5);

  std::vector<std::string> names;
  const modeltest::Files inner = modeltest::disk_files(kHub + "/modelopt-fp8-exclude-wildcard");
  const modeltest::Files asked([&](const std::string& n, Bytes* out) {
    names.push_back(n);
    return inner(n, out);
  });
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  const LoadResult r = modeltest::load_model(asked, ws::ModelEntry::Auto, "model.safetensors", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_GE(std::count(names.begin(), names.end(), "config.json"), 1);
  EXPECT_GE(std::count(names.begin(), names.end(), "hf_quant_config.json"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "quantize_config.json"), 0);
}

// A fixture's config.json with `from` replaced by `to`, loaded with its model (headers).
LoadResult with_config(const std::string& dir, const std::string& from, const std::string& to,
                       const std::string& config = "config.json") {
  const Bytes cfg = read_file(kHub + "/" + dir + "/" + config);
  std::string text(cfg.begin(), cfg.end());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << dir << ": " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  HostOptions o;
  o.mode = ws::ModelLoadMode::Validate;
  return load_memory({{"model.safetensors", read_file(kHub + "/" + dir + "/model.safetensors")},
                      {config, Bytes(text.begin(), text.end())}},
                     o);
}

// The other methods' lists over their decoded fixtures, edited to leave a stored-quantized module
// unquantized: refused at the module's first quantized tensor, the list and entry named.
TEST(ModuleLists, EveryMethodsListContradictedByTheFilesIsRefused) {
  struct Case {
    std::string dir, from, to, config, tensor, detail;
  };
  const std::vector<Case> cases = {
      // gpt-oss (transformers Mxfp4Config, should_convert_module over the experts module).
      {"mxfp4-gpt-oss", "\"lm_head\"", "\"lm_head\", \"model.layers.*.mlp.experts\"", "config.json",
       L + "mlp.experts.down_proj_blocks",
       "stored quantized, yet modules_to_not_convert \"model.layers.*.mlp.experts\" leaves it unquantized (config.json)"},
      // AWQ (vLLM awq.py: an entry that is a substring of the module's name).
      {"awq", "\"lm_head\"", "\"lm_head\", \"down_proj\"", "config.json", L + "mlp.down_proj.qweight",
       "stored quantized, yet modules_to_not_convert \"down_proj\" leaves it unquantized (config.json)"},
      // ModelOpt NVFP4, config.json's exclude_modules and hf_quant_config.json's.
      {"modelopt-nvfp4", "\"lm_head\"", "\"lm_head\", \"" + L + "mlp.down_proj\"", "config.json", L + "mlp.down_proj.weight",
       "stored quantized, yet exclude_modules \"" + L + "mlp.down_proj\" leaves it unquantized (config.json)"},
      {"modelopt-nvfp4-hf-quant-config", "\"lm_head\"", "\"lm_head\", \"*q_proj\"", "hf_quant_config.json",
       L + "self_attn.q_proj.weight", "stored quantized, yet exclude_modules \"*q_proj\" leaves it unquantized (hf_quant_config.json)"},
      // fp8: transformers reads modules_to_not_convert's entries as regexes (re.match).
      {"fp8-block", "\"quant_method\": \"fp8\"", "\"modules_to_not_convert\": [\"model\\\\.layers\\\\.\\\\d+\\\\.mlp\"], \"quant_method\": \"fp8\"",
       "config.json", L + "mlp.down_proj.weight",
       "stored quantized, yet modules_to_not_convert \"model\\.layers\\.\\d+\\.mlp\" leaves it unquantized (config.json)"},
      // compressed-tensors int-quantized: an `ignore` regex over a stored I8 weight with its scale.
      {"ct-int8-channel", "\"lm_head\"\n", "\"lm_head\",\n      \"re:.*q_proj\"\n", "config.json", L + "self_attn.q_proj.weight",
       "stored quantized, yet ignore \"re:.*q_proj\" leaves it unquantized (config.json)"},
  };
  for (const Case& c : cases) {
    const LoadResult r = with_config(c.dir, c.from, c.to, c.config);
    EXPECT_EQ(r.code, ws::Status::ConventionExcludedQuantized) << c.dir << ": " << r.verdict();
    EXPECT_EQ(r.tensor, c.tensor) << c.dir;
    EXPECT_EQ(r.detail, c.detail) << c.dir;
    EXPECT_EQ(r.offset, hubtest::entry_offset(read_file(kHub + "/" + c.dir + "/model.safetensors"), c.tensor)) << c.dir;
  }
  // An entry whose regex is outside module_regex.h's subset: refused by name, not guessed.
  const LoadResult r = with_config("fp8-block", "\"quant_method\": \"fp8\"",
                                   "\"modules_to_not_convert\": [\"model.layers.{0,3}.mlp\"], \"quant_method\": \"fp8\"");
  EXPECT_EQ(r.code, ws::Status::QuantizationUnsupported) << r.verdict();
  EXPECT_EQ(r.detail, "module list entry not read ({m,n} repetition): model.layers.{0,3}.mlp");
  // int-quantized: an I8 weight of a targeted module without its scale is never passed on raw.
  const Bytes ct = read_file(kHub + "/ct-int8-channel/model.safetensors");
  std::string h(ct.begin(), ct.end());
  const std::string scale = L + "self_attn.q_proj.weight_scale";
  h.replace(h.find(scale), scale.size(), L + "self_attn.q_proj.weight_scalX");  // now an unknown tensor
  HostOptions o;
  const LoadResult m = load_memory({{"model.safetensors", Bytes(h.begin(), h.end())},
                                    {"config.json", read_file(kHub + "/ct-int8-channel/config.json")}},
                                   o);
  EXPECT_EQ(m.code, ws::Status::ConventionMissingCompanion) << m.verdict();
  EXPECT_EQ(m.tensor, L + "self_attn.q_proj.weight");
  EXPECT_EQ(m.detail, "config_groups target \"Linear\" quantizes it, yet no weight_scale is stored");
}

// Python's fnmatch.fnmatchcase, as vLLM's ModelOpt reader calls it.
TEST(ModuleLists, GlobMatchesAsFnmatch) {
  using ws::conv_detail::glob_match;
  struct Case {
    const char *pattern, *name;
    bool match;
  };
  for (const Case& c : std::vector<Case>{{"*self_attn*", "model.layers.0.self_attn.q_proj", true},
                                         {"model.layers.*.mlp*", "model.layers.12.mlp.down_proj", true},
                                         {"model.layers.1.*", "model.layers.10.mlp", false},
                                         {"model.layers.1*", "model.layers.10.mlp", true},
                                         {"lm_head", "lm_head", true},
                                         {"lm_head", "model.lm_head", false},
                                         {"*.q_proj", "a.q_proj", true},
                                         {"?.q_proj", "ab.q_proj", false},
                                         {"layers.[0-3].mlp", "layers.2.mlp", true},
                                         {"layers.[!0-3].mlp", "layers.2.mlp", false},
                                         {"layers.[!0-3].mlp", "layers.7.mlp", true},
                                         {"a[]b", "a]b", false},
                                         {"a[]]b", "a]b", true},
                                         {"a[b", "a[b", true},
                                         {"**x*", "yyxyy", true},
                                         {"*a*b*c", "aXbYc", true},
                                         {"*a*b*c", "aXbYcZ", false}}) {
    EXPECT_EQ(glob_match(c.pattern, strlen(c.pattern), c.name, strlen(c.name)), c.match) << c.pattern << " ~ " << c.name;
  }
}

// A config's lists, fed whole and a byte at a time, read into the arena in document order.
ws::MlxQuantConfig* parse(const std::string& text, uint8_t* arena, size_t size, size_t piece, uint8_t* mem) {
  ws::MlxQuantConfig* c = new (mem) ws::MlxQuantConfig(arena, size);
  for (size_t at = 0; at < text.size(); at += piece)
    EXPECT_EQ(c->feed(text.data() + at, std::min(piece, text.size() - at)), ws::Status::Ok);
  EXPECT_EQ(c->finish(), ws::Status::Ok);
  return c;
}

TEST(ModuleLists, ConfigReaderKeepsEveryListAndGroup) {
  alignas(8) static uint8_t arena[8192];
  alignas(8) static uint8_t mem[sizeof(ws::MlxQuantConfig)];
  const std::string text =
      "{\"quantization_config\": {\"config_groups\": {"
      "\"group_0\": {\"targets\": [\"re:.*mlp.*\", \"Linear\"], \"format\": \"pack-quantized\", "
      "\"weights\": {\"num_bits\": 4, \"strategy\": \"group\", \"group_size\": 16, \"symmetric\": false}}, "
      "\"group_1\": {\"weights\": {\"num_bits\": 8, \"strategy\": \"channel\"}, \"targets\": [\"lm_head\", 7, [\"x\"]]}}, "
      "\"ignore\": [\"re:.*gate$\", null], \"modules_to_not_convert\": null, \"ignored_layers\": [\"a.b\"], "
      "\"exclude_modules\": [\"*vision*\"], \"quant_method\": \"compressed-tensors\"}}";
  for (size_t piece : {text.size(), size_t(1), size_t(5)}) {
    ws::MlxQuantConfig& c = *parse(text, arena, sizeof arena, piece, mem);
    ASSERT_EQ(c.module_list_count(), 6u) << piece;
    const std::vector<std::pair<List, std::string>> want = {{List::CtTargets, "re:.*mlp.*"}, {List::CtTargets, "Linear"},
                                                            {List::CtTargets, "lm_head"},    {List::Ignore, "re:.*gate$"},
                                                            {List::IgnoredLayers, "a.b"},    {List::ExcludeModules, "*vision*"}};
    for (uint32_t i = 0; i < 6; ++i) {
      EXPECT_EQ(c.module_list(i), want[i].first) << i;
      const ws::StrView e = c.module_list_entry(i);
      EXPECT_EQ(std::string(e.data, e.size), want[i].second) << i;
    }
    EXPECT_EQ(c.module_list_group(0), 0u);
    EXPECT_EQ(c.module_list_group(2), 1u);
    ws::MlxQuantConfig::CtWeights w;
    ws::StrView f;
    ASSERT_TRUE(c.ct_group(0, &w, &f));
    EXPECT_EQ(w.num_bits, 4u);
    EXPECT_EQ(w.group_size, 16u);
    EXPECT_FALSE(w.symmetric);
    EXPECT_EQ(std::string(f.data, f.size), "pack-quantized");
    ASSERT_TRUE(c.ct_group(1, &w, &f));
    EXPECT_EQ(w.num_bits, 8u);
    EXPECT_EQ(w.strategy, ws::MlxQuantConfig::CtStrategy::Channel);
    EXPECT_TRUE(w.symmetric);
    EXPECT_EQ(f.size, 0u);
    EXPECT_FALSE(c.ct_group(2, &w, &f));
    // compressed-tensors' scheme of a module: an equal name before a regex before a class name.
    using ws::conv_detail::ct_module_scheme;
    auto scheme = [&](const char* m) { return ct_module_scheme(c, m, strlen(m)); };
    EXPECT_TRUE(scheme("model.layers.0.mlp.gate").ignored);
    EXPECT_EQ(scheme("lm_head").group, 1u);
    EXPECT_TRUE(scheme("lm_head").matched);
    EXPECT_EQ(scheme("model.layers.0.mlp.up_proj").group, 0u);
    EXPECT_TRUE(scheme("model.layers.0.mlp.up_proj").matched);
    EXPECT_TRUE(scheme("model.layers.0.self_attn.q_proj").by_class);
    EXPECT_FALSE(scheme("model.layers.0.self_attn.q_proj").matched);
  }
  // An MLX override of a module named like a list (an object, not an array) stays an override.
  const std::string mlx = "{\"quantization\": {\"group_size\": 64, \"bits\": 4, \"ignore\": {\"bits\": 8}}}";
  ws::MlxQuantConfig& m = *parse(mlx, arena, sizeof arena, 1, mem);
  EXPECT_EQ(m.module_list_count(), 0u);
  ASSERT_EQ(m.override_count(), 1u);
  EXPECT_EQ(std::string(m.override_path(0).data, m.override_path(0).size), "ignore");
  EXPECT_EQ(m.override_params(0).bits, 8u);
}

// Whose rule decides, per method (module_lists.h): transformers' regex-or-endswith, vLLM fp8's
// exact ignored_layers, ModelOpt's substring-or-wildcard, AWQ's substring.
TEST(ModuleLists, EachMethodMatchesAsItsReaders) {
  alignas(8) static uint8_t arena[4096];
  alignas(8) static uint8_t mem[sizeof(ws::MlxQuantConfig)];
  struct Case {
    std::string method, list, entry, module;
    bool excluded;
  };
  for (const Case& k : std::vector<Case>{
           {"fp8", "modules_to_not_convert", "lm_head", "lm_head", true},
           {"fp8", "modules_to_not_convert", "mlp.gate", "model.layers.3.mlp.gate", true},        // endswith
           {"fp8", "modules_to_not_convert", "model.layers.1", "model.layers.12.mlp.up", true},  // re.match: a prefix
           {"fp8", "modules_to_not_convert", "mlp", "model.layers.0.mlp.up", false},
           {"fp8", "ignored_layers", "model.layers.0.mlp", "model.layers.0.mlp.up", false},       // exact only
           {"fp8", "ignored_layers", "model.layers.0.mlp.up", "model.layers.0.mlp.up", true},
           {"fp8", "exclude_modules", "lm_head", "lm_head", false},                              // not fp8's list
           {"modelopt", "exclude_modules", "self_attn", "model.layers.0.self_attn.q_proj", true},  // substring
           {"modelopt", "ignore", "model.layers.*.mlp", "model.layers.5.mlp", true},               // fnmatch
           {"modelopt", "modules_to_not_convert", "lm_head", "lm_head", false},
           {"awq", "modules_to_not_convert", "visual", "model.visual.blocks.0.attn.qkv", true},
           {"mxfp4", "modules_to_not_convert", "model.layers.*.self_attn", "model.layers.0.self_attn", true},
           {"mxfp4", "modules_to_not_convert", "model.layers.*.self_attn", "model.layers.0.mlp.experts", false},
       }) {
    const std::string text = "{\"quantization_config\": {\"" + k.list + "\": [\"" + k.entry + "\"], \"quant_method\": \"" +
                             k.method + "\"}}";
    ws::MlxQuantConfig& c = *parse(text, arena, sizeof arena, text.size(), mem);
    const ws::conv_detail::ModuleExclusion x = ws::conv_detail::module_excluded(&c, k.module.data(), k.module.size());
    EXPECT_EQ(x.excluded, k.excluded) << k.method << " " << k.list << " " << k.entry << " ~ " << k.module;
  }
}

}  // namespace
