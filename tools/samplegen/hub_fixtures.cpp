// ws-make-samples — quantized checkpoints of the Hub (see hub_fixtures.h).
#include "hub_fixtures.h"

#include <string.h>

#include <math.h>

#include <algorithm>
#include <map>

#include "convention_fixtures.h"
#include "half_float.h"
#include "prng.h"

namespace samplegen {

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// The position of a dtype in the reference crate's Dtype enum (huggingface/safetensors
// safetensors/src/tensor.rs), the writer's sort key.
int dtype_rank(const std::string& d) {
  static const char* const kOrder[] = {"BOOL", "F4",  "F6_E2M3", "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3",
                                       "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16",
                                       "I32", "U32", "F32", "C64", "F64", "I64", "U64"};
  for (size_t i = 0; i < sizeof kOrder / sizeof kOrder[0]; ++i)
    if (d == kOrder[i]) return int(i);
  return -1;
}

// The reference writer's file: tensors sorted by dtype descending then name, header in that
// order, data back to back, header padded with spaces.
std::vector<uint8_t> reference_file(std::vector<RawTensor> t) {
  std::stable_sort(t.begin(), t.end(), [](const RawTensor& a, const RawTensor& b) {
    const int ra = dtype_rank(a.dtype), rb = dtype_rank(b.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  std::vector<size_t> order;
  for (size_t i = 0; i < t.size(); ++i) order.push_back(i);
  return serialize_raw(t, order, {}, true);
}

uint64_t entry_offset(const std::vector<uint8_t>& file, const std::string& name) {
  const std::string s(file.begin(), file.end());
  return s.find("\"" + name + "\"");
}

void put_u32(std::vector<uint8_t>* d, uint32_t v) {
  for (int k = 0; k < 4; ++k) d->push_back(uint8_t(v >> (8 * k)));
}
void put_f32(std::vector<uint8_t>* d, float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  put_u32(d, b);
}
void put_u16(std::vector<uint8_t>* d, uint16_t v) {
  d->push_back(uint8_t(v));
  d->push_back(uint8_t(v >> 8));
}

// F8_E4M3 bytes of finite values (0x7F / 0xFF are E4M3FN's NaNs): the first 1.0 (0x38).
RawTensor fp8_weight(const std::string& name, uint64_t rows, uint64_t cols, uint32_t seed) {
  RawTensor t{name, "F8_E4M3", {rows, cols}, xorshift32_bytes(rows * cols, seed, 7)};
  for (uint8_t& b : t.data)
    if ((b & 0x7F) == 0x7F) b = 0x40;
  t.data[0] = 0x38;
  return t;
}

RawTensor f32_tensor(const std::string& name, std::vector<uint64_t> shape, const std::vector<float>& v) {
  RawTensor t{name, "F32", shape, {}};
  for (uint64_t i = 0; i < element_count(shape); ++i) put_f32(&t.data, v[i % v.size()]);
  return t;
}

RawTensor f16_tensor(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape) {
  RawTensor t{name, dtype, shape, {}};
  for (uint64_t i = 0; i < element_count(shape); ++i) {
    const float v = float(int(i % 7) - 3) / 8.0f;
    put_u16(&t.data, dtype == "BF16" ? float_to_bf16(v) : float_to_f16(v));
  }
  return t;
}

RawTensor i32_tensor(const std::string& name, std::vector<uint64_t> shape, uint32_t seed) {
  return RawTensor{name, "I32", shape, xorshift32_bytes(element_count(shape) * 4, seed, 7)};
}

const std::string L = "model.layers.0.";

// DeepSeek-V3's layout (inference/fp8_cast_bf16.py reads it back): F8_E4M3 `<m>.weight` [out, in]
// and F32 `<m>.weight_scale_inv` [ceil(out/bm), ceil(in/bn)], scaled down from 128x128 blocks to
// 4x4 with a ragged edge like kv_a_proj_with_mqa's 576 rows (6 rows: a grid of 2); the norm and
// embeddings unquantized (no scale). The first weight's first value is 1.0 and its block's scale
// 5.0: 5.0 is what DeepSeek's weight_dequant returns there.
std::vector<RawTensor> fp8_block_tensors() {
  return {fp8_weight(L + "self_attn.kv_a_proj_with_mqa.weight", 6, 8, 11),
          f32_tensor(L + "self_attn.kv_a_proj_with_mqa.weight_scale_inv", {2, 2}, {5.0f, 0.5f, 2.0f, 0.25f}),
          fp8_weight(L + "mlp.down_proj.weight", 8, 8, 12),
          f32_tensor(L + "mlp.down_proj.weight_scale_inv", {2, 2}, {0.125f, 3.0f, 1.5f, 4.0f}),
          f16_tensor(L + "input_layernorm.weight", "BF16", {8}),
          f16_tensor("model.embed_tokens.weight", "BF16", {4, 8})};
}

// DeepSeek-V3's config.json quantization_config, block size scaled down (sorted keys).
const char kFp8Config[] =
    "{\n  \"architectures\": [\n    \"DeepseekV3ForCausalLM\"\n  ],\n  \"hidden_size\": 8,\n"
    "  \"model_type\": \"deepseek_v3\",\n  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n"
    "    \"activation_scheme\": \"dynamic\",\n    \"fmt\": \"e4m3\",\n    \"quant_method\": \"fp8\",\n"
    "    \"weight_block_size\": [\n      4,\n      4\n    ]\n  },\n  \"torch_dtype\": \"bfloat16\"\n}\n";

// GPTQ 4-bit (AutoGPTQ nn_modules/qlinear/qlinear_cuda_old.py pack): in 16, out 8: `qweight` I32
// [16*4/32, 8], `qzeros` I32 [1, 8*4/32], `scales` F16 [1, 8], `g_idx` I32 [16] (zeros).
std::vector<RawTensor> gptq_tensors() {
  std::vector<RawTensor> t = {i32_tensor(L + "mlp.down_proj.qweight", {2, 8}, 21),
                              i32_tensor(L + "mlp.down_proj.qzeros", {1, 1}, 22),
                              f16_tensor(L + "mlp.down_proj.scales", "F16", {1, 8}),
                              RawTensor{L + "mlp.down_proj.g_idx", "I32", {16}, std::vector<uint8_t>(64, 0)},
                              f16_tensor(L + "post_attention_layernorm.weight", "F16", {8})};
  return t;
}

// GPTQModel's quantization_config (sorted keys; group_size -1: one group, which MLX's reader would
// refuse as a group size).
const char kGptqConfig[] =
    "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n"
    "    \"bits\": 4,\n    \"checkpoint_format\": \"gptq\",\n    \"desc_act\": false,\n"
    "    \"group_size\": -1,\n    \"lm_head\": false,\n    \"quant_method\": \"gptq\",\n"
    "    \"static_groups\": false,\n    \"sym\": true,\n    \"true_sequential\": true\n  }\n}\n";

// FP8 scales of other dtypes (transformers FP8Linear: F32; DeepSeek-V3.1-style ue8m0: powers of
// two, as F8_E8M0 or U8 exponents; BF16/F16 as other writers cast them).
RawTensor scale_tensor(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape,
                       const std::vector<float>& v) {
  RawTensor t{name, dtype, shape, {}};
  for (uint64_t i = 0; i < element_count(shape); ++i) {
    const float x = v[i % v.size()];
    if (dtype == "BF16") put_u16(&t.data, float_to_bf16(x));
    else if (dtype == "F16") put_u16(&t.data, float_to_f16(x));
    else if (dtype == "F32") put_f32(&t.data, x);
    else {  // F8_E8M0 / U8: the biased exponent of a power of two
      int e = 0;
      frexpf(x, &e);
      t.data.push_back(uint8_t(e - 1 + 127));
    }
  }
  return t;
}

std::string fp8_config(const std::string& extra) {
  return "{\n  \"architectures\": [\n    \"Qwen3ForCausalLM\"\n  ],\n  \"model_type\": \"qwen3\",\n"
         "  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n    \"activation_scheme\": \"dynamic\",\n" +
         extra + "    \"quant_method\": \"fp8\"\n  }\n}\n";
}
std::string block_config(const std::string& rows, const std::string& cols, const std::string& more = "") {
  return fp8_config(more + "    \"weight_block_size\": [\n      " + rows + ",\n      " + cols + "\n    ],\n");
}

HubCase make_case(const std::string& dir, const std::vector<RawTensor>& tensors, const char* config,
                  const std::string& tensor, const std::string& detail, const std::string& description,
                  const std::string& status = "QuantizationUnsupported") {
  HubCase c;
  c.dir = dir;
  c.status = status;
  c.tensor = tensor;
  c.detail = detail;
  c.description = description;
  c.has_config = config != nullptr;
  c.files.push_back({"model.safetensors", reference_file(tensors)});
  if (config) c.files.push_back({"config.json", bytes_of(config)});
  c.offset = tensor.empty() ? 0 : entry_offset(c.files[0].bytes, tensor);
  return c;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o + "\"";
}

// FP8 (fp8_convention.cpp): the writers' layouts decoded, and their malformed neighbours.
void add_fp8_cases(std::vector<HubCase>* out) {
  const std::string ok = "Ok";
  out->push_back(make_case("fp8-block", fp8_block_tensors(), kFp8Config, "", "",
                           "DeepSeek-V3 layout: F8_E4M3 weights with F32 weight_scale_inv over 4x4 blocks (6 rows: "
                           "a ragged grid of 2), quant_method fp8; its first value is 5.0, as weight_dequant gives "
                           "(read as plain tensors it was 1.0)",
                           ok));
  {
    static const char kWhat[] = "weight_block_size: no config.json states it, and the scale grid does not fit 128 x 128";
    out->push_back(make_case("fp8-block-no-config", fp8_block_tensors(), nullptr, L + "mlp.down_proj.weight", kWhat,
                             "fp8-block without config.json: the names say fp8, but a 2x2 grid over 8 columns fits "
                             "no one block size (4 to 7 all do): refused, not guessed",
                             "ConventionUnknownParams"));
  }
  // No config.json, transformers' default 128 x 128 block: 130 rows are a ragged grid of 2.
  out->push_back(make_case("fp8-block-default", {fp8_weight(L + "mlp.up_proj.weight", 130, 8, 13),
                                                 f32_tensor(L + "mlp.up_proj.weight_scale_inv", {2, 1}, {5.0f, 0.75f}),
                                                 f16_tensor(L + "post_attention_layernorm.weight", "BF16", {8})},
                           nullptr, "", "",
                           "no config.json: the weight_scale_inv names say fp8 and the [2, 1] grid fits "
                           "transformers' default 128 x 128 block over [130, 8]",
                           ok));
  const std::string cfg_3x5 = block_config("3", "5");
  out->push_back(make_case("fp8-block-bf16", {fp8_weight(L + "self_attn.q_proj.weight", 7, 12, 14),
                                              scale_tensor(L + "self_attn.q_proj.weight_scale_inv", "BF16", {3, 3},
                                                           {0.5f, 3.0f, -1.25f, 0.0078125f, 96.0f, 1.5f, 2.0f, 0.1f, 7.0f}),
                                              f16_tensor("lm_head.weight", "BF16", {4, 12})},
                           cfg_3x5.c_str(), "", "",
                           "weight_block_size [3, 5] over [7, 12]: ragged in both dimensions (a 3 x 3 grid), BF16 "
                           "scales; lm_head left in BF16 (no scale)",
                           ok));
  const std::string cfg_e8m0 = block_config("4", "4", "    \"scale_fmt\": \"ue8m0\",\n");
  out->push_back(make_case("fp8-block-e8m0", {fp8_weight(L + "mlp.gate_proj.weight", 6, 8, 15),
                                              scale_tensor(L + "mlp.gate_proj.weight_scale_inv", "F8_E8M0", {2, 2},
                                                           {0.25f, 8.0f, 1.0f, 0.0009765625f}),
                                              fp8_weight(L + "mlp.up_proj.weight", 4, 8, 16),
                                              scale_tensor(L + "mlp.up_proj.weight_scale_inv", "U8", {1, 2}, {2.0f, 0.5f})},
                           cfg_e8m0.c_str(), "", "",
                           "scale_fmt ue8m0: F8_E8M0 scales, and U8 scales holding the same UE8M0 exponents",
                           ok));
  const std::string cfg_static = "{\n  \"model_type\": \"llama\",\n  \"quantization_config\": {\n"
                                 "    \"activation_scheme\": \"static\",\n    \"ignored_layers\": [\n"
                                 "      \"lm_head\"\n    ],\n    \"quant_method\": \"fp8\"\n  }\n}\n";
  out->push_back(make_case("fp8-tensor-channel", {fp8_weight(L + "self_attn.o_proj.weight", 4, 8, 17),
                                                  f32_tensor(L + "self_attn.o_proj.weight_scale", {}, {0.375f}),
                                                  f32_tensor(L + "self_attn.o_proj.input_scale", {}, {0.0625f}),
                                                  fp8_weight(L + "mlp.down_proj.weight", 4, 8, 18),
                                                  f32_tensor(L + "mlp.down_proj.weight_scale", {4, 1},
                                                             {1.5f, -2.0f, 0.001f, 40.0f}),
                                                  f16_tensor("lm_head.weight", "BF16", {4, 8})},
                           cfg_static.c_str(), "", "",
                           "vLLM's fp8 without weight_block_size: a per-tensor scalar weight_scale, a per-channel "
                           "[4, 1] one, a static input_scale handed on as a plain tensor, lm_head in ignored_layers "
                           "left in BF16",
                           ok));
  // Malformed neighbours.
  const std::string cfg_4x4 = block_config("4", "4");
  out->push_back(make_case("fp8-grid-shape", {fp8_weight(L + "mlp.down_proj.weight", 6, 8, 19),
                                              f32_tensor(L + "mlp.down_proj.weight_scale_inv", {1, 2}, {1.0f})},
                           cfg_4x4.c_str(), L + "mlp.down_proj.weight_scale_inv", "",
                           "a [1, 2] scale grid where [6, 8] in 4 x 4 blocks needs ceil grids [2, 2]",
                           "ConventionCompanionShape"));
  out->push_back(make_case("fp8-scale-missing", {fp8_weight(L + "mlp.down_proj.weight", 4, 8, 20),
                                                 f32_tensor(L + "mlp.down_proj.weight_scale_inv", {1, 2}, {1.0f}),
                                                 fp8_weight(L + "mlp.up_proj.weight", 4, 8, 21)},
                           cfg_4x4.c_str(), L + "mlp.up_proj.weight", "",
                           "an F8_E4M3 weight without its weight_scale_inv: an error, never raw FP8",
                           "ConventionMissingCompanion"));
  out->push_back(make_case("fp8-scale-dtype", {fp8_weight(L + "mlp.down_proj.weight", 4, 8, 22),
                                               scale_tensor(L + "mlp.down_proj.weight_scale_inv", "U8", {1, 2}, {1.0f})},
                           cfg_4x4.c_str(), L + "mlp.down_proj.weight_scale_inv", "",
                           "U8 scales without scale_fmt ue8m0: not a scale dtype of fp8",
                           "ConventionCompanionShape"));
  {
    static const char kWhat[] = "weight_block_size (config.json): not two positive integers";
    const std::string cfg_zero = block_config("0", "4"), cfg_frac = block_config("4.5", "4");
    const std::vector<RawTensor> t = {fp8_weight(L + "mlp.down_proj.weight", 4, 8, 23),
                                      f32_tensor(L + "mlp.down_proj.weight_scale_inv", {1, 2}, {1.0f})};
    out->push_back(make_case("fp8-block-size-zero", t, cfg_zero.c_str(), L + "mlp.down_proj.weight", kWhat,
                             "weight_block_size [0, 4]", "ConfigInvalidQuantization"));
    out->push_back(make_case("fp8-block-size-fraction", t, cfg_frac.c_str(), L + "mlp.down_proj.weight", kWhat,
                             "weight_block_size [4.5, 4]", "ConfigInvalidQuantization"));
  }
  {
    static const char kWhat[] = "fp8 (config.json quant_method): no tensor is an FP8 weight with a scale";
    const std::string cfg = fp8_config("");
    out->push_back(make_case("fp8-no-tensors", {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 8}),
                                                f16_tensor(L + "input_layernorm.weight", "BF16", {8})},
                             cfg.c_str(), L + "input_layernorm.weight", kWhat,
                             "config.json names fp8 over BF16 tensors (a dequantized copy): its tensors are absent",
                             "QuantizationTensorsAbsent"));
  }
}

}  // namespace

std::vector<HubCase> hub_cases() {
  std::vector<HubCase> out;
  // The tensor named when config.json names the method: the first (in header order) of a scheme
  // the names show. Header order: dtype descending, then name (F32 scales before F8 weights).
  add_fp8_cases(&out);
  out.push_back(make_case("gptq", gptq_tensors(), kGptqConfig, L + "mlp.down_proj.qweight",
                          "gptq (config.json quant_method)",
                          "GPTQ 4-bit (qweight, qzeros, scales, g_idx; group_size -1): was taken for MLX and "
                          "blamed as ConventionOrphanCompanion"));
  out.push_back(make_case("gptq-no-config", gptq_tensors(), nullptr, L + "mlp.down_proj.qweight",
                          "gptq or awq, by their companion names (.qweight + .qzeros)",
                          "gptq without config.json: qweight + qzeros name the scheme"));
  {
    // A quant_method transformers does not know, over plain tensors: refused all the same; the
    // tensor named is the first in the header.
    std::vector<RawTensor> t = {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 8}),
                                f16_tensor(L + "input_layernorm.weight", "BF16", {8})};
    const char* cfg = "{\n  \"model_type\": \"llama\",\n  \"quantization_config\": {\n"
                      "    \"bits\": 3,\n    \"quant_method\": \"mystery-quant\"\n  }\n}\n";
    out.push_back(make_case("unknown-method", t, cfg, L + "input_layernorm.weight",
                            "mystery-quant (config.json quant_method, a method transformers does not know)",
                            "a quant_method no reader knows, over BF16 tensors: refused by name, never read as "
                            "plain tensors"));
  }
  return out;
}

std::vector<SampleFile> build_hub_fixtures() {
  std::vector<SampleFile> out;
  std::string json = "{\"cases\":[\n";
  const std::vector<HubCase> cases = hub_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const HubCase& c = cases[i];
    for (const SampleFile& f : c.files) out.push_back({"hub/" + c.dir + "/" + f.path, f.bytes});
    json += " {\"dir\": " + json_string(c.dir) + ", \"open\": \"model.safetensors\", \"status\": " +
            json_string(c.status) + ", \"file\": \"model.safetensors\", \"offset\": " + std::to_string(c.offset) +
            ", \"tensor\": " + json_string(c.tensor) + ", \"detail\": " + json_string(c.detail) +
            ", \"config\": " + (c.has_config ? "true" : "false") + ", \"description\": " +
            json_string(c.description) + "}" + (i + 1 < cases.size() ? ",\n" : "\n");
  }
  json += "]}\n";
  out.push_back({"hub/expected.json", bytes_of(json)});
  return out;
}

}  // namespace samplegen
