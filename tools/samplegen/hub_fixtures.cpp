// ws-make-samples — quantized checkpoints of the Hub (see hub_fixtures.h).
#include "hub_fixtures.h"

#include <stdlib.h>
#include <string.h>

#include <math.h>

#include <algorithm>
#include <map>

#include "convention_fixtures.h"
#include "awq_fixtures.h"
#include "bnb_fixtures.h"
#include "gptq_fixtures.h"
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

// A GPTQ model (gptq_fixtures.cpp: AutoGPTQ / GPTQModel `pack`): down_proj [out 32, in 64] and
// q_proj [32, 32] quantized (AutoGPTQ's buffers are in // 32 * bits and out // 32 * bits words: both
// multiples of 32), with q_proj's bias and a norm unquantized (F16, as GPTQ leaves them).
std::vector<RawTensor> gptq_model(uint32_t bits, uint32_t group, bool desc_act, bool v1, bool zero_zero = false) {
  std::vector<RawTensor> t = gptq_module_tensors({L + "mlp.down_proj", 64, 32, bits, group, desc_act, v1, zero_zero, 21});
  for (RawTensor& x : gptq_module_tensors({L + "self_attn.q_proj", 32, 32, bits, group, desc_act, v1, false, 22}))
    t.push_back(x);
  t.push_back(f16_tensor(L + "self_attn.q_proj.bias", "F16", {32}));
  t.push_back(f16_tensor(L + "post_attention_layernorm.weight", "F16", {32}));
  return t;
}
// One group (group_size -1): the tensors of the refusals of issue #27 (the shapes every GPTQ
// reader takes for GPTQ's).
std::vector<RawTensor> gptq_tensors() { return gptq_model(4, 0, false, true); }

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


// --- gpt-oss MXFP4 and ModelOpt NVFP4 (decoded; issue #27) --------------------------------------

RawTensor u8_tensor(const std::string& name, std::vector<uint64_t> shape, std::vector<uint8_t> data) {
  return RawTensor{name, "U8", shape, std::move(data)};
}

// E8M0 exponents as gpt-oss's scales hold them (around 127: the weights' magnitudes), with the
// extremes 0 (2^-127, subnormal results) and 254 among them; never 0xFF.
std::vector<uint8_t> e8m0_scales(size_t n, uint32_t seed) {
  std::vector<uint8_t> v = xorshift32_bytes(n, seed, 7);
  for (uint8_t& b : v) b = uint8_t(118 + b % 16);
  if (n > 2) {
    v[1] = 0;
    v[2] = 254;
  }
  return v;
}

// gpt-oss's experts as transformers' Mxfp4GptOssExperts holds them (integrations/mxfp4.py):
// gate_up_proj_blocks [E, 2I, H/32, 16], gate_up_proj_scales [E, 2I, H/32], down_proj_blocks
// [E, H, I/32, 16], down_proj_scales [E, H, I/32], biases BF16; E 2, H 64, I 32. The attention,
// router and embeddings (quantizer_mxfp4.py modules_to_not_convert) BF16.
std::vector<RawTensor> gpt_oss_tensors(bool with_scales = true, uint64_t block_bytes = 16, uint64_t scale_groups = 2) {
  const std::string E = L + "mlp.experts.";
  std::vector<RawTensor> t = {
      u8_tensor(E + "gate_up_proj_blocks", {2, 64, 2, block_bytes}, xorshift32_bytes(2 * 64 * 2 * block_bytes, 31, 7)),
      f16_tensor(E + "gate_up_proj_bias", "BF16", {2, 64}),
      u8_tensor(E + "down_proj_blocks", {2, 64, 1, 16}, xorshift32_bytes(2 * 64 * 16, 33, 7)),
      u8_tensor(E + "down_proj_scales", {2, 64, 1}, e8m0_scales(2 * 64, 34)),
      f16_tensor(E + "down_proj_bias", "BF16", {2, 64}),
      f16_tensor(L + "mlp.router.weight", "BF16", {2, 64}),
      f16_tensor(L + "self_attn.q_proj.weight", "BF16", {4, 64}),
      f16_tensor("model.embed_tokens.weight", "BF16", {4, 64})};
  if (with_scales)
    t.push_back(u8_tensor(E + "gate_up_proj_scales", {2, 64, scale_groups}, e8m0_scales(2 * 64 * scale_groups, 32)));
  return t;
}

// openai/gpt-oss-20b's config.json quantization_config (sorted keys).
const char kMxfp4Config[] =
    "{\n  \"architectures\": [\n    \"GptOssForCausalLM\"\n  ],\n  \"hidden_size\": 64,\n"
    "  \"model_type\": \"gpt_oss\",\n  \"num_local_experts\": 2,\n  \"quantization_config\": {\n"
    "    \"modules_to_not_convert\": [\n      \"model.layers.*.self_attn\",\n      \"model.layers.*.mlp.router\",\n"
    "      \"model.embed_tokens\",\n      \"lm_head\"\n    ],\n    \"quant_method\": \"mxfp4\"\n  },\n"
    "  \"torch_dtype\": \"bfloat16\"\n}\n";

// E4M3FN block scales as ModelOpt writes them (finite, positive: per-block amax / (6 * global)).
std::vector<uint8_t> e4m3_scales(size_t n, uint32_t seed) {
  std::vector<uint8_t> v = xorshift32_bytes(n, seed, 7);
  for (uint8_t& b : v) {
    b &= 0x7F;
    if (b == 0x7F) b = 0x7E;
  }
  if (n > 1) v[0] = 0x38;  // 1.0
  return v;
}

// ModelOpt's NVFP4 export (modelopt/torch/export, as vLLM's modelopt.py loads it): per linear
// `weight` U8 [out, in/2], `weight_scale` F8_E4M3 [out, in/16], `weight_scale_2` F32 [] and
// `input_scale` F32 []; lm_head excluded (BF16), norms BF16. in 32, out 8.
std::vector<RawTensor> modelopt_linear(const std::string& m, uint32_t seed, float global, uint64_t scale_cols = 2,
                                       bool with_global = true) {
  std::vector<RawTensor> t = {u8_tensor(m + ".weight", {8, 16}, xorshift32_bytes(8 * 16, seed, 7)),
                              RawTensor{m + ".weight_scale", "F8_E4M3", {8, scale_cols}, e4m3_scales(8 * scale_cols, seed + 1)},
                              f32_tensor(m + ".input_scale", {}, {0.03125f})};
  if (with_global) t.push_back(f32_tensor(m + ".weight_scale_2", {}, {global}));
  return t;
}

std::vector<RawTensor> modelopt_tensors(uint64_t scale_cols = 2, bool with_global = true) {
  std::vector<RawTensor> t = modelopt_linear(L + "mlp.down_proj", 41, 0.0123f, scale_cols, with_global);
  for (RawTensor& x : modelopt_linear(L + "self_attn.q_proj", 43, 3.0e-3f)) t.push_back(x);
  t.push_back(f16_tensor(L + "input_layernorm.weight", "BF16", {32}));
  t.push_back(f16_tensor("lm_head.weight", "BF16", {4, 32}));
  return t;
}

// A ModelOpt NVFP4 checkpoint's config.json quantization_config (sorted keys; vLLM's
// ModelOptNvFp4Config.from_config reads quant_algo, group_size and exclude_modules).
const char kModelOptConfig[] =
    "{\n  \"architectures\": [\n    \"LlamaForCausalLM\"\n  ],\n  \"hidden_size\": 32,\n"
    "  \"model_type\": \"llama\",\n  \"quantization_config\": {\n    \"exclude_modules\": [\n      \"lm_head\"\n    ],\n"
    "    \"group_size\": 16,\n    \"kv_cache_quant_algo\": null,\n    \"producer\": {\n      \"name\": \"modelopt\",\n"
    "      \"version\": \"0.29.0\"\n    },\n    \"quant_algo\": \"NVFP4\",\n    \"quant_method\": \"modelopt\"\n  },\n"
    "  \"torch_dtype\": \"bfloat16\"\n}\n";

// ModelOpt's hf_quant_config.json beside it (export/unified_export_hf.py).
const char kModelOptHfQuantConfig[] =
    "{\n    \"producer\": {\n        \"name\": \"modelopt\",\n        \"version\": \"0.29.0\"\n    },\n"
    "    \"quantization\": {\n        \"quant_algo\": \"NVFP4\",\n        \"kv_cache_quant_algo\": null,\n"
    "        \"group_size\": 16,\n        \"exclude_modules\": [\n            \"lm_head\"\n        ]\n    }\n}\n";

HubCase fp4_case(const std::string& dir, const std::vector<RawTensor>& tensors, const char* config,
                 const std::string& status, const std::string& tensor, const std::string& detail,
                 const std::string& description) {
  HubCase c = make_case(dir, tensors, config, tensor, detail, description);
  c.status = status;
  return c;
}

// The malformed neighbours of the decoded fixtures below, refused when the model is built.
void add_fp4_refusals(std::vector<HubCase>* out) {
  const std::string E = L + "mlp.experts.";
  out->push_back(fp4_case("mxfp4-blocks-not-16", gpt_oss_tensors(true, 8), kMxfp4Config, "ConventionCompanionShape",
                          E + "gate_up_proj_blocks", "",
                          "gpt-oss mxfp4 whose gate_up_proj_blocks' last dimension is 8 bytes, not 16 (32 values)"));
  out->push_back(fp4_case("mxfp4-scales-shape", gpt_oss_tensors(true, 16, 3), kMxfp4Config, "ConventionCompanionShape",
                          E + "gate_up_proj_scales", "",
                          "gpt-oss mxfp4 whose gate_up_proj_scales has 3 groups a row where its blocks have 2"));
  out->push_back(fp4_case("mxfp4-missing-scales", gpt_oss_tensors(false), kMxfp4Config, "ConventionMissingCompanion",
                          E + "gate_up_proj_blocks", "",
                          "gpt-oss mxfp4 with gate_up_proj_blocks but no gate_up_proj_scales"));
  out->push_back(fp4_case("mxfp4-config-no-tensors",
                          {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 32}), f16_tensor(L + "input_layernorm.weight", "BF16", {32})},
                          kMxfp4Config, "ConventionMissingCompanion", L + "input_layernorm.weight",
                          "mxfp4 (config.json quant_method): no <p>_blocks tensor with its <p>_scales",
                          "config.json names mxfp4 over BF16 tensors: the method's tensors are absent"));
  out->push_back(fp4_case("modelopt-nvfp4-scale-shape", modelopt_tensors(3), kModelOptConfig, "ConventionCompanionShape",
                          L + "mlp.down_proj.weight_scale", "",
                          "ModelOpt nvfp4 whose weight_scale has 3 columns for 32 values (16 a scale: 2)"));
  out->push_back(fp4_case("modelopt-nvfp4-missing-scale-2", modelopt_tensors(2, false), kModelOptConfig,
                          "ConventionMissingCompanion", L + "mlp.down_proj.weight", "",
                          "ModelOpt nvfp4 whose down_proj has weight_scale but no weight_scale_2"));
  out->push_back(fp4_case("modelopt-nvfp4-config-no-tensors",
                          {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 32}), f16_tensor(L + "input_layernorm.weight", "BF16", {32})},
                          kModelOptConfig, "ConventionMissingCompanion", L + "input_layernorm.weight",
                          "modelopt NVFP4 (config.json quant_method, quant_algo): no <m>.weight with <m>.weight_scale and "
                          "<m>.weight_scale_2",
                          "config.json names modelopt NVFP4 over BF16 tensors: the method's tensors are absent"));
}

// --- ModelOpt FP8 (decoded; modelopt_fp8.cpp) ------------------------------------------------

// ModelOpt's FP8 export (modelopt/torch/export unified_export_hf.py, as vLLM's modelopt.py
// ModelOptFp8Config loads it): per linear `weight` F8_E4M3 [out, in], `weight_scale` F32 and, per
// tensor, a static `input_scale` F32 []; lm_head excluded (BF16), norms BF16. The hf_quant_config.json
// beside it names the algo.
std::string modelopt_hf_quant_config(const std::string& algo) {
  return "{\n    \"producer\": {\n        \"name\": \"modelopt\",\n        \"version\": \"0.29.0\"\n    },\n"
         "    \"quantization\": {\n        \"quant_algo\": \"" + algo + "\",\n        \"kv_cache_quant_algo\": null,\n"
         "        \"exclude_modules\": [\n            \"lm_head\"\n        ]\n    }\n}\n";
}
std::string modelopt_fp8_config(const std::string& algo) {
  return "{\n  \"architectures\": [\n    \"LlamaForCausalLM\"\n  ],\n  \"model_type\": \"llama\",\n"
         "  \"quantization_config\": {\n    \"exclude_modules\": [\n      \"lm_head\"\n    ],\n"
         "    \"kv_cache_quant_algo\": null,\n    \"producer\": {\n      \"name\": \"modelopt\",\n"
         "      \"version\": \"0.29.0\"\n    },\n    \"quant_algo\": \"" + algo + "\",\n    \"quant_method\": \"modelopt\"\n  },\n"
         "  \"torch_dtype\": \"bfloat16\"\n}\n";
}

// quant_algo FP8: one scale a weight (q_proj's the first value 1.0 x 5.0), input_scale plain.
std::vector<RawTensor> modelopt_fp8_tensors(bool down_scale = true, std::vector<uint64_t> down_scale_shape = {}) {
  std::vector<RawTensor> t = {fp8_weight(L + "self_attn.q_proj.weight", 4, 8, 51),
                              f32_tensor(L + "self_attn.q_proj.weight_scale", {}, {5.0f}),
                              f32_tensor(L + "self_attn.q_proj.input_scale", {}, {0.0625f}),
                              fp8_weight(L + "mlp.down_proj.weight", 6, 8, 52),
                              f32_tensor(L + "mlp.down_proj.input_scale", {}, {0.03125f}),
                              f16_tensor(L + "input_layernorm.weight", "BF16", {8}),
                              f16_tensor("lm_head.weight", "BF16", {4, 8})};
  if (down_scale) t.push_back(f32_tensor(L + "mlp.down_proj.weight_scale", down_scale_shape, {0.0013f, 2.5f, -3.0f, 7.0f, 0.25f, 96.0f}));
  return t;
}

// FP8_PER_CHANNEL_PER_TOKEN: weight_scale [out], no input_scale.
std::vector<RawTensor> modelopt_fp8_pc_tensors() {
  return {fp8_weight(L + "mlp.gate_proj.weight", 6, 8, 53),
          f32_tensor(L + "mlp.gate_proj.weight_scale", {6}, {0.5f, 3.0f, 0.001953125f, 11.0f, 0.3f, 1.0f}),
          f16_tensor("lm_head.weight", "BF16", {4, 8})};
}

// FP8_PB_WO: 128 x 128 blocks, weight_scale [out / 128, 1, in / 128, 1] as ModelOpt exports it.
std::vector<RawTensor> modelopt_fp8_pb_tensors(uint64_t cols = 256) {
  return {fp8_weight(L + "mlp.up_proj.weight", 128, cols, 54),
          f32_tensor(L + "mlp.up_proj.weight_scale", {1, 1, 2, 1}, {5.0f, 0.0078125f}),
          f16_tensor(L + "post_attention_layernorm.weight", "BF16", {8})};
}

HubCase modelopt_case(const std::string& dir, const std::vector<RawTensor>& tensors, const std::string& algo,
                      bool config_json, const std::string& status, const std::string& tensor, const std::string& detail,
                      const std::string& description) {
  const std::string cfg = modelopt_fp8_config(algo);
  HubCase c = make_case(dir, tensors, config_json ? cfg.c_str() : nullptr, tensor, detail, description, status);
  // The refusals keep to config.json (their verdict is the same through either file).
  if (status == "Ok") c.files.push_back({"hf_quant_config.json", bytes_of(modelopt_hf_quant_config(algo))});
  return c;
}

void add_modelopt_fp8_cases(std::vector<HubCase>* out) {
  const std::string ok = "Ok";
  out->push_back(modelopt_case("modelopt-fp8", modelopt_fp8_tensors(), "FP8", true, ok, "", "",
                               "ModelOpt quant_algo FP8: F8_E4M3 weights with one F32 weight_scale each (q_proj's first "
                               "value 1.0 x 5.0 = 5.0), static input_scale handed on plain, lm_head excluded (BF16)"));
  out->push_back(modelopt_case("modelopt-fp8-hf-quant-config", modelopt_fp8_tensors(), "fp8", false, ok, "", "",
                               "ModelOpt FP8 with hf_quant_config.json only (no config.json), quant_algo in lower case "
                               "(vLLM upper-cases it): decoded as modelopt-fp8"));
  out->push_back(modelopt_case("modelopt-fp8-per-channel", modelopt_fp8_pc_tensors(), "FP8_PER_CHANNEL_PER_TOKEN", false,
                               ok, "", "",
                               "ModelOpt FP8_PER_CHANNEL_PER_TOKEN (hf_quant_config.json): weight_scale [6], one a row"));
  out->push_back(modelopt_case("modelopt-fp8-pb-wo", modelopt_fp8_pb_tensors(), "FP8_PB_WO", true, ok, "", "",
                               "ModelOpt FP8_PB_WO: a [128, 256] weight in 128 x 128 blocks, weight_scale [1, 1, 2, 1] "
                               "as exported"));
  // Malformed neighbours.
  out->push_back(modelopt_case("modelopt-fp8-scale-shape", modelopt_fp8_tensors(true, {6}), "FP8", true,
                               "ConventionCompanionShape", L + "mlp.down_proj.weight_scale", "",
                               "ModelOpt FP8 (per tensor) whose down_proj weight_scale has 6 values, one a row"));
  out->push_back(modelopt_case("modelopt-fp8-scale-missing", modelopt_fp8_tensors(false), "FP8", true,
                               "ConventionMissingCompanion", L + "mlp.down_proj.weight", "",
                               "ModelOpt FP8 whose F8_E4M3 down_proj weight has no weight_scale: an error, never raw FP8"));
  out->push_back(modelopt_case("modelopt-fp8-pb-not-dividing", modelopt_fp8_pb_tensors(200), "FP8_PB_WO", true,
                               "ConventionGroupNotDividing", L + "mlp.up_proj.weight", "",
                               "ModelOpt FP8_PB_WO over a [128, 200] weight: 200 columns are no whole 128-blocks"));
  {
    static const char kWhat[] = "modelopt FP8 (quant_algo): no F8_E4M3 <m>.weight with its <m>.weight_scale";
    out->push_back(modelopt_case("modelopt-fp8-no-tensors",
                                 {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 8}), f16_tensor(L + "input_layernorm.weight", "BF16", {8})},
                                 "FP8", true, "QuantizationTensorsAbsent", L + "input_layernorm.weight", kWhat,
                                 "config.json names modelopt FP8 over BF16 tensors: the method's tensors are absent"));
  }
}

// GPTQ's config.json quantization_config as GPTQModel writes it (sorted keys).
std::string gptq_config(uint32_t bits, const std::string& group, bool desc_act, const std::string& format) {
  return "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n"
         "    \"bits\": " + std::to_string(bits) + ",\n    \"checkpoint_format\": \"" + format + "\",\n"
         "    \"desc_act\": " + (desc_act ? "true" : "false") + ",\n    \"group_size\": " + group + ",\n"
         "    \"lm_head\": false,\n    \"quant_method\": \"gptq\",\n    \"static_groups\": false,\n"
         "    \"sym\": false,\n    \"true_sequential\": true\n  }\n}\n";
}

// The tensor named `name` in `t`, replaced by `with`.
std::vector<RawTensor> replaced(std::vector<RawTensor> t, const RawTensor& with) {
  for (RawTensor& x : t)
    if (x.name == with.name) x = with;
  return t;
}

// GPTQ (gptq_convention.cpp, issue #28): decoded, and its malformed neighbours.
void add_gptq_cases(std::vector<HubCase>* out) {
  const std::string ok = "Ok", D = L + "mlp.down_proj";
  out->push_back(make_case("gptq", gptq_tensors(), kGptqConfig, "", "",
                           "GPTQ 4-bit, group_size -1, checkpoint_format gptq (v1): decoded [out, in] (issue #27 "
                           "refused it by name; before that it was taken for MLX and blamed as ConventionOrphanCompanion)",
                           ok));
  out->push_back(make_case("gptq-no-config", gptq_model(4, 32, false, true), nullptr, "", "",
                           "GPTQ 4-bit g32 without config.json: qweight + qzeros + scales with GPTQ's shapes name it; the "
                           "bits from qzeros' width, the group from the scales' rows, v1 as vLLM assumes",
                           ok));
  const std::string c_desc = gptq_config(4, "16", true, "gptq");
  out->push_back(make_case("gptq-desc-act", gptq_model(4, 16, true, true), c_desc.c_str(), "", "",
                           "desc_act: g_idx in activation order (not input / group), honoured", ok));
  const std::string c_v2 = gptq_config(8, "32", false, "gptq_v2");
  out->push_back(make_case("gptq-8bit-v2", gptq_model(8, 32, false, false), c_v2.c_str(), "", "",
                           "8-bit g32, checkpoint_format gptq_v2 (zero points stored as they are)", ok));
  const std::string c_2 = gptq_config(2, "32", false, "gptq");
  out->push_back(make_case("gptq-2bit", gptq_model(2, 32, false, true), c_2.c_str(), "", "", "2-bit g32, v1", ok));
  const std::string c_4 = gptq_config(4, "32", false, "gptq");
  out->push_back(make_case("gptq-v1-zero-spill", gptq_model(4, 32, false, true, true), c_4.c_str(), "", "",
                           "v1 with a zero point of 0: stored as -1, its ones spill into the 7 lanes above it; decoded "
                           "as vLLM reads the lanes (each 15 + 1 = 16)",
                           ok));
  // Malformed neighbours.
  out->push_back(make_case("gptq-qweight-rows",
                           replaced(gptq_model(4, 32, false, true), RawTensor{D + ".qweight", "I32", {6, 32}, std::vector<uint8_t>(768, 0x11)}),
                           c_4.c_str(), D + ".qweight", "",
                           "qweight of 6 rows where g_idx's 64 inputs at 4 bits need 64 * 4 / 32 = 8",
                           "ConventionCompanionShape"));
  out->push_back(make_case("gptq-scales-shape",
                           replaced(gptq_model(4, 32, false, true), RawTensor{D + ".scales", "F16", {3, 32}, std::vector<uint8_t>(192, 0x30)}),
                           c_4.c_str(), D + ".scales", "",
                           "scales of 3 group rows where 64 inputs in groups of 32 have 2",
                           "ConventionCompanionShape"));
  out->push_back(make_case("gptq-qzeros-shape",
                           replaced(gptq_model(4, 32, false, true), RawTensor{D + ".qzeros", "I32", {2, 1}, std::vector<uint8_t>(8, 0x77)}),
                           c_4.c_str(), D + ".qzeros", "",
                           "qzeros of 1 word a group where 32 outputs at 4 bits need 4",
                           "ConventionCompanionShape"));
  const std::string c_3 = gptq_config(3, "32", false, "gptq");
  out->push_back(make_case("gptq-3bit", gptq_model(3, 32, false, true, true), c_3.c_str(), "", "",
                           "3-bit g32, v1: 32 codes in 3 words (codes 10 and 21 straddle them), qzeros packed the "
                           "same way; down_proj's first zero point 0 (stored -1, its ones over the rest of its word)",
                           ok));
  out->push_back(make_case("gptq-3bit-qweight-rows",
                           replaced(gptq_model(3, 32, false, true), RawTensor{D + ".qweight", "I32", {7, 32}, std::vector<uint8_t>(896, 0x49)}),
                           c_3.c_str(), D + ".qweight", "",
                           "3-bit qweight of 7 rows where g_idx's 64 inputs need 64 * 3 / 32 = 6 (whole 3-word blocks)",
                           "ConventionCompanionShape"));
  out->push_back(make_case("gptq-3bit-qzeros-shape",
                           replaced(gptq_model(3, 32, false, true), RawTensor{D + ".qzeros", "I32", {2, 4}, std::vector<uint8_t>(32, 0x24)}),
                           c_3.c_str(), D + ".qzeros", "",
                           "3-bit qzeros of 4 words a group where 32 outputs need 32 * 3 / 32 = 3",
                           "ConventionCompanionShape"));
  // GPTQModel's dynamic (gptqmodel/quantization/config.py QuantizeConfig.dynamic): down_proj
  // 8-bit by a "+:" rule, up_proj at the section's 4 bits, q_proj left unquantized by "-:" (a
  // plain F16 weight); vLLM gptq_utils.py get_dynamic_override reads the rules in order.
  const auto dynamic_config = [](const std::string& rules) {
    return "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n"
           "    \"bits\": 4,\n    \"checkpoint_format\": \"gptq\",\n    \"desc_act\": false,\n"
           "    \"dynamic\": {\n" + rules + "\n    },\n    \"group_size\": 32,\n    \"lm_head\": false,\n"
           "    \"quant_method\": \"gptq\",\n    \"sym\": false\n  }\n}\n";
  };
  const auto dynamic_tensors = [](bool q_proj_quantized) {
    std::vector<RawTensor> t = gptq_module_tensors({L + "mlp.down_proj", 64, 32, 8, 32, false, true, false, 31});
    for (RawTensor& x : gptq_module_tensors({L + "mlp.up_proj", 32, 32, 4, 32, false, true, false, 32})) t.push_back(x);
    if (q_proj_quantized) {
      for (RawTensor& x : gptq_module_tensors({L + "self_attn.q_proj", 32, 32, 4, 32, false, true, false, 33})) t.push_back(x);
    } else {
      t.push_back(f16_tensor(L + "self_attn.q_proj.weight", "F16", {32, 32}));
    }
    t.push_back(f16_tensor(L + "post_attention_layernorm.weight", "F16", {32}));
    return t;
  };
  const std::string rules = "      \"+:.*\\\\.(?:down|gate)_proj$\": {\n        \"bits\": 8,\n        \"desc_act\": false\n      },\n"
                            "      \"-:model\\\\.layers\\\\.[0-9]+\\\\.self_attn\\\\.q_proj\": {}";
  const std::string c_dyn = dynamic_config(rules);
  out->push_back(make_case("gptq-dynamic", dynamic_tensors(false), c_dyn.c_str(), "", "",
                           "GPTQModel dynamic: \"+:\" makes down_proj 8-bit (group_size from the section), up_proj "
                           "at the section's 4 bits, \"-:\" leaves q_proj unquantized (a plain F16 weight)",
                           ok));
  out->push_back(make_case("gptq-dynamic-excluded", dynamic_tensors(true), c_dyn.c_str(), L + "self_attn.q_proj.qweight",
                           "gptq dynamic: quantized, yet a rule leaves it unquantized (-:): "
                           "model\\.layers\\.[0-9]+\\.self_attn\\.q_proj",
                           "a \"-:\" rule matches q_proj, yet q_proj has a qweight: the config is another export's",
                           "ConventionExcludedQuantized"));
  const std::string c_look = dynamic_config("      \"+:.*(?=down)down_proj\": {\n        \"bits\": 8\n      }");
  out->push_back(make_case("gptq-dynamic-regex", dynamic_tensors(false), c_look.c_str(), L + "mlp.down_proj.g_idx",
                           "gptq dynamic: regex not read (lookaround, flags or named groups): .*(?=down)down_proj",
                           "a dynamic rule with a lookahead: refused by name, not guessed",
                           "QuantizationUnsupported"));
  {
    static const char kWhy[] = "gptq (quant_method): no <m>.qweight with its <m>.qzeros and <m>.scales";
    out->push_back(make_case("gptq-config-no-tensors",
                             {f16_tensor(L + "mlp.up_proj.weight", "F16", {4, 8}), f16_tensor(L + "input_layernorm.weight", "F16", {8})},
                             c_4.c_str(), L + "input_layernorm.weight", kWhy,
                             "config.json names gptq over F16 tensors (a dequantized copy): its tensors are absent",
                             "QuantizationTensorsAbsent"));
  }
}

// An AWQ model (awq_fixtures.cpp: AutoAWQ's WQLinear_GEMM.from_linear): down_proj [out 32, in 64]
// and k_proj [out 32, in 96] quantized with group_size 32 (two groups and three), k_proj's bias, a
// norm and lm_head unquantized (F16: AutoAWQ leaves them, lm_head by modules_to_not_convert).
// (from_linear sizes its packed buffers out // 32 * w_bit words: its outputs are multiples of 32.)
std::vector<RawTensor> awq_model() {
  std::vector<RawTensor> t = awq_module_tensors({L + "mlp.down_proj", 64, 32, 32, 31});
  for (RawTensor& x : awq_module_tensors({L + "self_attn.k_proj", 96, 32, 32, 32})) t.push_back(x);
  t.push_back(f16_tensor(L + "self_attn.k_proj.bias", "F16", {32}));
  t.push_back(f16_tensor(L + "post_attention_layernorm.weight", "F16", {32}));
  t.push_back(f16_tensor("lm_head.weight", "F16", {8, 32}));
  return t;
}

// The same model as WQLinear_GEMV lays it out (awq_gemv_module_tensors): group 32, so down_proj's
// two groups and k_proj's three are padded to calculate_zeros_width's 4 words (32 scales) a row.
std::vector<RawTensor> awq_gemv_model() {
  std::vector<RawTensor> t = awq_gemv_module_tensors({L + "mlp.down_proj", 64, 32, 32, 31});
  for (RawTensor& x : awq_gemv_module_tensors({L + "self_attn.k_proj", 96, 32, 32, 32})) t.push_back(x);
  t.push_back(f16_tensor(L + "self_attn.k_proj.bias", "F16", {32}));
  t.push_back(f16_tensor(L + "post_attention_layernorm.weight", "F16", {32}));
  t.push_back(f16_tensor("lm_head.weight", "F16", {8, 32}));
  return t;
}

// config.json's quantization_config as AutoAWQ's save_quantized writes it
// (awq/models/_config.py AwqConfig.to_transformers_dict; transformers sorts the keys).
std::string awq_config(const std::string& bits, const std::string& version, const std::string& zero_point) {
  return "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n"
         "    \"bits\": " + bits + ",\n    \"group_size\": 32,\n    \"modules_to_not_convert\": [\n"
         "      \"lm_head\"\n    ],\n    \"quant_method\": \"awq\",\n    \"version\": \"" + version + "\",\n"
         "    \"zero_point\": " + zero_point + "\n  }\n}\n";
}

// AWQ (awq_convention.cpp, issue #28): GEMM decoded, the other layouts refused by name, and the
// malformed neighbours.
void add_awq_cases(std::vector<HubCase>* out) {
  const std::string ok = "Ok";
  const std::string D = L + "mlp.down_proj";
  const std::string c = awq_config("4", "gemm", "true");
  out->push_back(make_case("awq", awq_model(), c.c_str(), "", "",
                           "AutoAWQ GEMM 4-bit g32 (the 0,2,4,6,1,3,5,7 interleave, zeros too), lm_head in "
                           "modules_to_not_convert: decoded [out, in]",
                           ok));
  out->push_back(make_case("awq-no-config", awq_model(), nullptr, "", "",
                           "the same tensors without config.json: qweight [in, out / 8] beside scales [groups, out] "
                           "is AWQ's shape; the group from the scales' rows",
                           ok));
  const std::string cx = awq_config("4", "exllama", "true");
  out->push_back(make_case("awq-exllama", awq_model(), cx.c_str(), "", "",
                           "version exllama: AutoAWQ's exllama modules load the GEMM tensors as stored: decoded", ok));
  const std::string cv = awq_config("4", "gemv", "true");
  out->push_back(make_case("awq-gemv", awq_gemv_model(), cv.c_str(), "", "",
                           "version gemv (WQLinear_GEMV.from_linear: qweight [out, in / 8] in natural lane order, "
                           "qzeros [out, 4] and scales [out, 32] padded by calculate_zeros_width): decoded [out, in]",
                           ok));
  out->push_back(make_case("awq-gemv-gemm-tensors", awq_model(), cv.c_str(), D + ".scales", "",
                           "version gemv over GEMM tensors: down_proj's qweight [64, 4] reads as out 64, in 32, and "
                           "its scales [2, 32] are not GEMV's [64, 32]",
                           "ConventionCompanionShape"));
  out->push_back(make_case("awq-gemv-qzeros-unpadded",
                           replaced(awq_gemv_model(), RawTensor{D + ".qzeros", "I32", {32, 1}, std::vector<uint8_t>(128, 0x21)}),
                           cv.c_str(), D + ".qzeros", "",
                           "down_proj's qzeros [32, 1]: its 2 groups in one word, where calculate_zeros_width pads "
                           "group 32's rows to 4 words",
                           "ConventionCompanionShape"));
  const std::string cz = awq_config("4", "gemm", "false");
  out->push_back(make_case("awq-zero-point-false", awq_model(), cz.c_str(), D + ".qweight",
                           "awq zero_point false (AutoAWQ writes no GEMM checkpoint without zero points)",
                           "zero_point false: AutoAWQ's from_linear needs zeros; refused by name"));
  const std::string c8 = awq_config("8", "gemm", "true");
  out->push_back(make_case("awq-8bit", awq_model(), c8.c_str(), D + ".qweight", "",
                           "bits 8: WQLinear_GEMM packs only 4", "ConventionBitsNotAllowed"));
  out->push_back(make_case("awq-qweight-cols",
                           replaced(awq_model(), RawTensor{D + ".qweight", "I32", {64, 5}, std::vector<uint8_t>(1280, 0x11)}),
                           c.c_str(), D + ".qweight", "", "down_proj's qweight has 5 columns for 32 outputs (8 a word: 4)",
                           "ConventionCompanionShape"));
  out->push_back(make_case("awq-scales-shape",
                           replaced(awq_model(), RawTensor{D + ".scales", "F16", {3, 32}, std::vector<uint8_t>(192, 0x30)}),
                           c.c_str(), D + ".scales", "", "down_proj's scales have 3 rows for 64 inputs in groups of 32",
                           "ConventionCompanionShape"));
  out->push_back(make_case("awq-qzeros-shape",
                           replaced(awq_model(), RawTensor{D + ".qzeros", "I32", {2, 32}, std::vector<uint8_t>(256, 0x77)}),
                           c.c_str(), D + ".qzeros", "", "down_proj's qzeros unpacked, [2, 32], where AWQ packs [2, 4]",
                           "ConventionCompanionShape"));
  {
    std::vector<RawTensor> t = awq_model();
    t.push_back(f16_tensor(L + "mlp.up_proj.scales", "F16", {2, 32}));
    out->push_back(make_case("awq-orphan-scales", t, c.c_str(), L + "mlp.up_proj.scales", "",
                             "an up_proj.scales with no up_proj.qweight", "ConventionOrphanCompanion"));
  }
  {
    static const char kWhy[] = "awq (quant_method): no <m>.qweight with its <m>.qzeros and <m>.scales";
    out->push_back(make_case("awq-config-no-tensors",
                             {f16_tensor(L + "mlp.up_proj.weight", "F16", {4, 8}), f16_tensor(L + "input_layernorm.weight", "F16", {8})},
                             c.c_str(), L + "input_layernorm.weight", kWhy,
                             "config.json names awq over F16 tensors (a dequantized copy): its tensors are absent",
                             "QuantizationTensorsAbsent"));
  }
}

// Older repos keep the method beside the model, not in config.json (vLLM gptq.py / awq.py
// get_config_filenames): AutoGPTQ's quantize_config.json and AutoAWQ's quant_config.json, read
// when the tensor names show a scheme and config.json names none; the method the
// file's (GPTQ and AWQ decoded, issue #28).
const char kQuantizeConfig[] =
    "{\n  \"bits\": 4,\n  \"group_size\": 128,\n  \"damp_percent\": 0.01,\n  \"desc_act\": false,\n"
    "  \"static_groups\": false,\n  \"sym\": true,\n  \"true_sequential\": true,\n  \"model_name_or_path\": null,\n"
    "  \"model_file_base_name\": \"model\",\n  \"quant_method\": \"gptq\",\n  \"checkpoint_format\": \"gptq\"\n}";
// (q_group_size 32: AutoAWQ's default 128 does not divide the fixture's 64 inputs.)
const char kAwqQuantConfig[] = "{\n  \"zero_point\": true,\n  \"q_group_size\": 32,\n  \"w_bit\": 4,\n  \"version\": \"GEMM\"\n}";

void add_other_config_refusals(std::vector<HubCase>* out) {
  HubCase g = make_case("gptq-quantize-config", gptq_tensors(), nullptr, "", "",
                        "GPTQ without a quantization_config in config.json; AutoGPTQ's quantize_config.json beside it names "
                        "the method (bits 4, group_size 128: one group of 64 inputs), decoded",
                        "Ok");
  g.files.push_back({"quantize_config.json", bytes_of(kQuantizeConfig)});
  out->push_back(g);
  HubCase a = make_case("awq-quant-config", awq_model(), nullptr, "", "",
                        "AWQ without a quantization_config in config.json; AutoAWQ's older quant_config.json beside it "
                        "(w_bit 4, q_group_size 32, zero_point, version GEMM) names awq, the file's writer: decoded",
                        "Ok");
  a.files.push_back({"quant_config.json", bytes_of(kAwqQuantConfig)});
  out->push_back(a);
}

// The decoded fixtures: hub/<dir>/model.safetensors [+ config.json, hf_quant_config.json].
void add_fp4_decoded(std::vector<SampleFile>* out) {
  auto model = [&](const std::string& dir, const std::vector<RawTensor>& t) {
    out->push_back({"hub/" + dir + "/model.safetensors", reference_file(t)});
  };
  model("mxfp4-gpt-oss", gpt_oss_tensors());
  out->push_back({"hub/mxfp4-gpt-oss/config.json", bytes_of(kMxfp4Config)});
  model("mxfp4-gpt-oss-no-config", gpt_oss_tensors());
  model("modelopt-nvfp4", modelopt_tensors());
  out->push_back({"hub/modelopt-nvfp4/config.json", bytes_of(kModelOptConfig)});
  out->push_back({"hub/modelopt-nvfp4/hf_quant_config.json", bytes_of(kModelOptHfQuantConfig)});
  model("modelopt-nvfp4-no-config", modelopt_tensors());
  // GPTQ whose g_idx names a third group of two: the header is GPTQ's, the data is not
  // (QuantGroupIndexOutOfRange when the weight decodes, at the value's byte).
  {
    std::vector<RawTensor> t = gptq_model(4, 32, false, true);
    for (RawTensor& x : t)
      if (x.name == L + "mlp.down_proj.g_idx") x.data[4 * 40] = 2;
    model("gptq-g-idx-range", t);
    out->push_back({"hub/gptq-g-idx-range/config.json", bytes_of(gptq_config(4, "32", false, "gptq"))});
  }
  // ModelOpt's own file alone (no config.json): hf_quant_config.json names modelopt NVFP4.
  model("modelopt-nvfp4-hf-quant-config", modelopt_tensors());
  out->push_back({"hub/modelopt-nvfp4-hf-quant-config/hf_quant_config.json", bytes_of(kModelOptHfQuantConfig)});
}

// --- compressed-tensors pack-quantized (decoded; issue #27) -------------------------------------

// pack_to_int32 (neuralmagic/compressed-tensors src/compressed_tensors/compressors/
// quantized_compressors/pack_quantized.py): signed values q of `bits` bits stored unsigned
// (q + 2^(bits-1)), 32 // bits to an int32, value i of a word at bit i * bits, rows padded with
// zeros to whole words; packed_dim 0 packs down the columns instead (the zero points). `q` is
// row-major [rows, cols]; returns the words row-major. Cross-checked outside the repository (no
// upstream code is part of it): compressed-tensors' own pack_to_int32 / unpack_from_int32 (at
// 52792be), run under Debian's python3-torch 1.13 on the committed ct-* fixtures, give these words
// and zero points back from the unpacked values, and its _dequantize arithmetic in float32 equals
// `weightstream dequant`'s output, f32 and f16 (session 9, 2026-12-07).
std::vector<uint32_t> ct_pack(const std::vector<int>& q, uint64_t rows, uint64_t cols, uint32_t bits, int packed_dim) {
  const uint32_t pf = 32 / bits, off = 1u << (bits - 1);
  std::vector<uint32_t> w;
  if (packed_dim == 1) {
    const uint64_t words = (cols + pf - 1) / pf;
    w.assign(rows * words, 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        w[r * words + c / pf] |= (uint32_t(q[r * cols + c] + int(off)) & ((1u << bits) - 1)) << ((c % pf) * bits);
  } else {
    const uint64_t wrows = (rows + pf - 1) / pf;
    w.assign(wrows * cols, 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        w[(r / pf) * cols + c] |= (uint32_t(q[r * cols + c] + int(off)) & ((1u << bits) - 1)) << ((r % pf) * bits);
  }
  return w;
}

RawTensor i32_words(const std::string& name, std::vector<uint64_t> shape, const std::vector<uint32_t>& w) {
  RawTensor t{name, "I32", shape, {}};
  for (uint32_t v : w) put_u32(&t.data, v);
  return t;
}

// Signed `bits`-bit values from the generator's bytes, the extremes -2^(bits-1) and 2^(bits-1)-1
// first.
std::vector<int> ct_values(size_t n, uint32_t bits, uint32_t seed) {
  const std::vector<uint8_t> b = xorshift32_bytes(n, seed, 7);
  std::vector<int> q(n);
  const int lo = -(1 << (bits - 1)), span = 1 << bits;
  for (size_t i = 0; i < n; ++i) q[i] = lo + int(b[i] % span);
  if (n > 1) {
    q[0] = lo;
    q[1] = -lo - 1;
  }
  return q;
}

// BF16 scales as llm-compressor's observers write them (positive, the model's dtype).
RawTensor ct_scales(const std::string& name, std::vector<uint64_t> shape, uint32_t seed) {
  RawTensor t{name, "BF16", shape, {}};
  const std::vector<uint8_t> b = xorshift32_bytes(element_count(shape), seed, 7);
  for (uint8_t x : b) put_u16(&t.data, float_to_bf16(float(1 + x % 29) / 1024.0f));
  return t;
}

// weight_shape: compress_weight stores torch.tensor(weight.shape), int64 (the int32 of
// compression_param_info's declared dtype with `i32`).
RawTensor ct_shape(const std::string& name, uint64_t rows, uint64_t cols, bool i32 = false) {
  RawTensor t{name, i32 ? "I32" : "I64", {2}, {}};
  for (uint64_t v : {rows, cols})
    for (int k = 0; k < (i32 ? 4 : 8); ++k) t.data.push_back(uint8_t(v >> (8 * k)));
  return t;
}

struct CtLinear {
  uint32_t bits = 4;
  uint64_t rows = 8, cols = 32;
  uint64_t group = 16;      // 0: channel
  bool symmetric = true;
  int64_t packed_words = -1;  // -1: as packed; else the stored width (a malformed neighbour)
  uint64_t zp_rows = 0;       // 0: as packed
  bool zero_point = true;     // asymmetric: write it
  // weight_g_idx: 0 none; 1 actorder "group" as GPTQ implementations make it (g_idx = [i //
  // group_size for i in columns][invperm] for their column permutation, here invperm[c] = 7c mod
  // cols: every group exactly group_size columns); 2 all -1 (initialize.py's initial value: column order); 3 as 1
  // with column 5's group past the scales; 4 as 1 with one column of group 1 moved to group 0.
  int g_idx = 0;
  bool legacy_zp = false;     // int8 [rows, groups], as written before zero points were packed
  uint64_t shape_rows = 0, shape_cols = 0;  // 0: weight_shape as the Linear's; else stored (malformed)
  bool shape_i32 = false;     // weight_shape int32
};

// One Linear as PackedQuantizationCompressor.compress_weight writes it (weight_packed,
// weight_shape, weight_zero_point for asymmetric group / channel) beside the quantization
// lifecycle's weight_scale (and weight_g_idx with actorder).
std::vector<RawTensor> ct_linear(const std::string& m, const CtLinear& a, uint32_t seed) {
  const uint32_t pf = 32 / a.bits;
  const uint64_t groups = a.group ? a.cols / a.group : 1;
  std::vector<uint32_t> packed = ct_pack(ct_values(a.rows * a.cols, a.bits, seed), a.rows, a.cols, a.bits, 1);
  uint64_t words = (a.cols + pf - 1) / pf;
  if (a.packed_words >= 0) {
    packed.assign(a.rows * uint64_t(a.packed_words), 0x12345678u);
    words = uint64_t(a.packed_words);
  }
  std::vector<RawTensor> t = {i32_words(m + ".weight_packed", {a.rows, words}, packed),
                              ct_scales(m + ".weight_scale", {a.rows, groups}, seed + 1),
                              ct_shape(m + ".weight_shape", a.shape_rows ? a.shape_rows : a.rows,
                                       a.shape_cols ? a.shape_cols : a.cols, a.shape_i32)};
  if (!a.symmetric && a.zero_point) {
    const uint64_t zrows = a.zp_rows ? a.zp_rows : a.rows;
    const std::vector<int> zv = ct_values(zrows * groups, a.bits, seed + 2);
    if (a.legacy_zp) {
      // compressed-tensors before ed3ac7c (2025-04): the zero_point parameter as initialize.py
      // made it (QuantizationArgs.pytorch_dtype(): int8), saved unpacked.
      RawTensor z{m + ".weight_zero_point", "I8", {zrows, groups}, {}};
      for (int v : zv) z.data.push_back(uint8_t(int8_t(v)));
      t.push_back(z);
    } else {
      const std::vector<uint32_t> z = ct_pack(zv, zrows, groups, a.bits, 0);
      t.push_back(i32_words(m + ".weight_zero_point", {(zrows + pf - 1) / pf, groups}, z));
    }
  }
  if (a.g_idx) {
    RawTensor g{m + ".weight_g_idx", "I32", {a.cols}, {}};
    const uint64_t gs = a.group ? a.group : a.cols;
    for (uint64_t c = 0; c < a.cols; ++c) {
      uint32_t v = uint32_t((7 * c) % a.cols / gs);
      if (a.g_idx == 2) v = 0xFFFFFFFFu;
      if (a.g_idx == 3 && c == 5) v = uint32_t(a.cols / gs);
      if (a.g_idx == 4 && c == 3) v = 0;  // 7 * 3 mod 32 = 21: group 1
      put_u32(&g.data, v);
    }
    t.push_back(g);
  }
  return t;
}

std::vector<RawTensor> ct_tensors(const CtLinear& a, const CtLinear& b) {
  std::vector<RawTensor> t = ct_linear(L + "mlp.down_proj", a, 51);
  for (RawTensor& x : ct_linear(L + "self_attn.q_proj", b, 55)) t.push_back(x);
  t.push_back(f16_tensor(L + "input_layernorm.weight", "BF16", {32}));
  t.push_back(f16_tensor("lm_head.weight", "BF16", {4, 32}));  // `ignore`: left in BF16
  return t;
}

// llm-compressor's config.json quantization_config for a preset scheme (W4A16: group 128, scaled
// down to `group`; sorted keys as transformers writes them; compressed-tensors
// quantization/quant_config.py QuantizationConfig, quant_args.py QuantizationArgs).
std::string ct_config(uint32_t bits, const std::string& strategy, const std::string& group, bool symmetric,
                      const std::string& format = "pack-quantized", const std::string& type = "int",
                      const std::string& block = "null") {
  return "{\n  \"architectures\": [\n    \"LlamaForCausalLM\"\n  ],\n  \"model_type\": \"llama\",\n"
         "  \"quantization_config\": {\n    \"config_groups\": {\n      \"group_0\": {\n"
         "        \"input_activations\": null,\n        \"output_activations\": null,\n"
         "        \"targets\": [\n          \"Linear\"\n        ],\n        \"weights\": {\n"
         "          \"actorder\": null,\n          \"block_structure\": " + block + ",\n          \"dynamic\": false,\n"
         "          \"group_size\": " + group + ",\n          \"num_bits\": " + std::to_string(bits) + ",\n"
         "          \"observer\": \"minmax\",\n          \"observer_kwargs\": {},\n"
         "          \"strategy\": \"" + strategy + "\",\n          \"symmetric\": " + (symmetric ? "true" : "false") +
         ",\n          \"type\": \"" + type + "\"\n        }\n      }\n    },\n    \"format\": \"" + format + "\",\n"
         "    \"global_compression_ratio\": null,\n    \"ignore\": [\n      \"lm_head\"\n    ],\n"
         "    \"kv_cache_scheme\": null,\n    \"quant_method\": \"compressed-tensors\",\n"
         "    \"quantization_status\": \"compressed\",\n    \"sparsity_config\": {},\n    \"version\": \"0.10.2\"\n"
         "  },\n  \"torch_dtype\": \"bfloat16\"\n}\n";
}

CtLinear ct_args(uint32_t bits, uint64_t group, bool symmetric) {
  CtLinear a;
  a.bits = bits;
  a.group = group;
  a.symmetric = symmetric;
  return a;
}

// naive- / int- / float-quantized (compressors/quantized_compressors/naive_quantized.py): one
// Linear's `<m>.weight` as quantize() leaves it (I8, or F8_E4M3 for type float) beside its
// weight_scale of the strategy's shape ([out, 1] channel, [out, in / group] group, [out / R,
// in / C] block, [1] tensor) and, asymmetric, its int8 weight_zero_point of the scale's shape.
struct CtStored {
  bool fp8 = false;
  uint64_t scale_rows = 8, scale_cols = 1;  // 0 rows: tensor ([1])
  bool zero_point = false;
  const char* scale_dtype = "BF16";
};
std::vector<RawTensor> ct_stored_linear(const std::string& m, const CtStored& a, uint32_t seed) {
  std::vector<RawTensor> t;
  if (a.fp8) {
    t.push_back(fp8_weight(m + ".weight", 8, 32, seed));
  } else {
    RawTensor q{m + ".weight", "I8", {8, 32}, xorshift32_bytes(8 * 32, seed, 7)};
    q.data[0] = 0x80;  // -128 and 127 first: the range's ends
    q.data[1] = 0x7F;
    t.push_back(q);
  }
  const std::vector<uint64_t> shape = a.scale_rows ? std::vector<uint64_t>{a.scale_rows, a.scale_cols} : std::vector<uint64_t>{1};
  if (std::string(a.scale_dtype) == "F32") {
    std::vector<float> v;
    for (uint8_t x : xorshift32_bytes(element_count(shape), seed + 1, 7)) v.push_back(float(1 + x % 29) / 512.0f);
    t.push_back(f32_tensor(m + ".weight_scale", shape, v));
  } else {
    t.push_back(ct_scales(m + ".weight_scale", shape, seed + 1));
  }
  if (a.zero_point) {
    RawTensor z{m + ".weight_zero_point", "I8", shape, {}};
    for (uint8_t x : xorshift32_bytes(element_count(shape), seed + 2, 7)) z.data.push_back(uint8_t(int8_t(int(x % 64) - 32)));
    t.push_back(z);
  }
  return t;
}
std::vector<RawTensor> ct_stored_tensors(const CtStored& a, const CtStored* q_proj = nullptr) {
  std::vector<RawTensor> t = ct_stored_linear(L + "mlp.down_proj", a, 61);
  for (RawTensor& x : ct_stored_linear(L + "self_attn.q_proj", q_proj ? *q_proj : a, 65)) t.push_back(x);
  t.push_back(f16_tensor(L + "input_layernorm.weight", "BF16", {32}));
  t.push_back(f16_tensor("lm_head.weight", "BF16", {4, 32}));  // `ignore`: left in BF16
  return t;
}

// The malformed neighbours (and the undecoded variants, refused by name).
void add_ct_cases(std::vector<HubCase>* out) {
  const std::string D = L + "mlp.down_proj";
  const std::string g4 = ct_config(4, "group", "16", true), a4 = ct_config(4, "group", "16", false);
  const CtLinear sym = ct_args(4, 16, true), asym = ct_args(4, 16, false);
  auto add = [&](const std::string& dir, const std::vector<RawTensor>& t, const std::string& cfg, const std::string& status,
                 const std::string& tensor, const std::string& detail, const std::string& why) {
    std::vector<RawTensor> copy = t;
    HubCase c = make_case(dir, copy, cfg.empty() ? nullptr : cfg.c_str(), tensor, detail, why, status);
    out->push_back(c);
  };
  // Header order: I64 (weight_shape) first, then I32, BF16 (reference_file).
  add("ct-no-config", ct_tensors(sym, sym), "", "ConventionUnknownParams", D + ".weight_shape",
      "compressed-tensors (.weight_packed + .weight_shape): no config.json states num_bits",
      "compressed-tensors pack-quantized without config.json: the names say the scheme, the shapes not num_bits");
  CtLinear wide = sym;
  wide.packed_words = 5;
  add("ct-packed-width", ct_tensors(wide, sym), g4, "ConventionCompanionShape", D + ".weight_packed", "",
      "pack-quantized 4-bit, group 16: down_proj's weight_packed is 5 words wide where its 2 scale groups make 4");
  add("ct-group-not-dividing", ct_tensors(sym, sym), ct_config(4, "group", "24", true), "ConventionGroupNotDividing",
      D + ".weight_packed", "",
      "pack-quantized group_size 24 over rows of 32 (2 scale groups): the group size does not divide the row");
  CtLinear zshape = asym;
  zshape.zp_rows = 16;
  add("ct-zero-point-shape", ct_tensors(zshape, asym), a4, "ConventionCompanionShape", D + ".weight_zero_point", "",
      "asymmetric pack-quantized whose down_proj weight_zero_point has 2 packed rows for 8 rows (1)");
  CtLinear nozp = asym;
  nozp.zero_point = false;
  add("ct-missing-zero-point", ct_tensors(nozp, asym), a4, "ConventionMissingCompanion", D + ".weight_packed", "",
      "asymmetric pack-quantized (symmetric: false) whose down_proj has no weight_zero_point");
  CtLinear gidx = sym;
  gidx.g_idx = 1;
  add("ct-g-idx", ct_tensors(gidx, sym), g4, "Ok", "", "",
      "pack-quantized with actorder group's weight_g_idx (down_proj: column c in group (7c mod 32) // 16): "
      "decoded, each column with its group's scale");
  add("ct-sparse-24", ct_tensors(sym, sym), ct_config(4, "group", "16", true, "sparse-24-bitmask"),
      "QuantizationUnsupported", D + ".weight_shape",
      "compressed-tensors format sparse-24-bitmask (config.json quantization_config.format)",
      "compressed-tensors' 2:4 sparse format (sparse-24-bitmask): refused by name");
  // The stored formats' neighbours (down_proj malformed, q_proj as written).
  CtStored fp8_zp, grid, int8;
  fp8_zp.fp8 = true;
  fp8_zp.zero_point = true;
  grid.scale_rows = 3;
  grid.scale_cols = 5;
  const CtStored fp8_ok = [] {
    CtStored x;
    x.fp8 = true;
    return x;
  }();
  add("ct-fp8-zero-point", ct_stored_tensors(fp8_zp, &fp8_ok),
      ct_config(8, "channel", "null", true, "float-quantized", "float"), "QuantizationUnsupported",
      D + ".weight_zero_point", "compressed-tensors float-quantized weight with a weight_zero_point",
      "float-quantized FP8 whose down_proj has an int8 weight_zero_point: refused by name (float weights have none)");
  add("ct-int8-scale-grid", ct_stored_tensors(grid, &int8), ct_config(8, "channel", "null", true, "int-quantized"),
      "ConventionCompanionShape", D + ".weight_scale", "",
      "int-quantized I8 [8, 32] whose weight_scale is [3, 5]: no tensor, channel, group or whole-block grid");
  add("ct-int8-dtype", ct_stored_tensors(fp8_ok, &int8), ct_config(8, "channel", "null", true, "int-quantized"),
      "ConventionCompanionShape", D + ".weight", "",
      "int-quantized (type int) whose down_proj weight is F8_E4M3: the weight is not the config's int8");
  add("ct-config-no-tensors",
      {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 32}), f16_tensor(L + "input_layernorm.weight", "BF16", {32})}, g4,
      "QuantizationTensorsAbsent", L + "input_layernorm.weight",
      "compressed-tensors (config.json quant_method): no <m>.weight_packed tensor",
      "config.json names compressed-tensors pack-quantized over BF16 tensors: the method's tensors are absent");
}

// The decoded fixtures: hub/ct-*/model.safetensors + config.json.
void add_ct_decoded(std::vector<SampleFile>* out) {
  auto model = [&](const std::string& dir, const std::vector<RawTensor>& t, const std::string& cfg) {
    out->push_back({"hub/" + dir + "/model.safetensors", reference_file(t)});
    out->push_back({"hub/" + dir + "/config.json", bytes_of(cfg)});
  };
  // W4A16 (symmetric 4-bit, group 16).
  model("ct-w4a16-group", ct_tensors(ct_args(4, 16, true), ct_args(4, 16, true)), ct_config(4, "group", "16", true));
  // W4A16 asymmetric: packed zero points.
  model("ct-w4-asym-group", ct_tensors(ct_args(4, 16, false), ct_args(4, 16, false)), ct_config(4, "group", "16", false));
  // 8-bit per channel (weight_scale [out, 1]).
  model("ct-w8-channel", ct_tensors(ct_args(8, 0, true), ct_args(8, 0, true)), ct_config(8, "channel", "null", true));
  // Asymmetric group 16 with int8 zero points unpacked (files written before ed3ac7c).
  CtLinear legacy = ct_args(4, 16, false);
  legacy.legacy_zp = true;
  model("ct-w4-asym-legacy-zp", ct_tensors(legacy, legacy), ct_config(4, "group", "16", false));
  // 2-bit asymmetric per channel: 16 values a word, zero points 16 rows a word.
  model("ct-w2-asym-channel", ct_tensors(ct_args(2, 0, false), ct_args(2, 0, false)), ct_config(2, "channel", "null", false));
  // Malformed: weight_shape disagreeing with the packed tensor and its scales, found in the data
  // (model_ct_hub_test.cpp; not in expected.json: a sequential source finds it as the stream passes,
  // after ModelReady). down_proj's int64 weight_shape says 24 columns where 4 words and 2 groups
  // of 16 make 32; the int32 one of q_proj says 4 rows for 8 (down_proj's int32 one agrees).
  CtLinear cols24 = ct_args(4, 16, true);
  cols24.shape_cols = 24;
  model("ct-weight-shape-cols", ct_tensors(cols24, ct_args(4, 16, true)), ct_config(4, "group", "16", true));
  CtLinear i32 = ct_args(8, 0, true), rows4 = ct_args(8, 0, true);
  i32.shape_i32 = rows4.shape_i32 = true;
  rows4.shape_rows = 4;
  model("ct-weight-shape-rows-i32", ct_tensors(i32, rows4), ct_config(8, "channel", "null", true));
  // weight_g_idx (down_proj, asymmetric group 16): all -1 (column order); a value past the groups
  // and a group of 17 columns, refused when the weight decodes (QuantGroupIndexOutOfRange).
  CtLinear unset = ct_args(4, 16, false), range = ct_args(4, 16, true), overfull = ct_args(4, 16, true);
  unset.g_idx = 2;
  range.g_idx = 3;
  overfull.g_idx = 4;
  model("ct-g-idx-unset", ct_tensors(unset, ct_args(4, 16, false)), ct_config(4, "group", "16", false));
  model("ct-g-idx-range", ct_tensors(range, ct_args(4, 16, true)), ct_config(4, "group", "16", true));
  model("ct-g-idx-overfull", ct_tensors(overfull, ct_args(4, 16, true)), ct_config(4, "group", "16", true));
  // The stored formats: W8A8 int8 per channel (int-quantized), int8 asymmetric group 16
  // (naive-quantized), FP8 per channel (float-quantized, FP8_DYNAMIC's weights), FP8 blocks of
  // 4 x 16 with F32 scales, FP8 per tensor with its static input_scale (handed on as stored).
  CtStored int8_channel, int8_asym, fp8_channel, fp8_block, fp8_tensor;
  int8_asym.scale_cols = 2;
  int8_asym.zero_point = true;
  fp8_channel.fp8 = fp8_block.fp8 = fp8_tensor.fp8 = true;
  fp8_block.scale_rows = 2;
  fp8_block.scale_cols = 2;
  fp8_block.scale_dtype = fp8_tensor.scale_dtype = "F32";
  fp8_tensor.scale_rows = 0;
  model("ct-int8-channel", ct_stored_tensors(int8_channel), ct_config(8, "channel", "null", true, "int-quantized"));
  model("ct-int8-asym-group", ct_stored_tensors(int8_asym), ct_config(8, "group", "16", false, "naive-quantized"));
  model("ct-fp8-channel", ct_stored_tensors(fp8_channel), ct_config(8, "channel", "null", true, "float-quantized", "float"));
  model("ct-fp8-block", ct_stored_tensors(fp8_block),
        ct_config(8, "block", "null", true, "float-quantized", "float", "[\n            4,\n            16\n          ]"));
  std::vector<RawTensor> ft = ct_stored_tensors(fp8_tensor);
  ft.push_back(f32_tensor(L + "mlp.down_proj.input_scale", {1}, {0.0625f}));
  model("ct-fp8-tensor", ft, ct_config(8, "tensor", "null", true, "float-quantized", "float"));
}

// --- compressed-tensors nvfp4- / mxfp4-pack-quantized (decoded; issue #27) ----------------------

// One Linear as compressed-tensors' FP4 compressors write it (vllm-project/compressed-tensors
// compressors/nvfp4/base.py NVFP4PackedCompressor.compress, nvfp4/helpers.py pack_fp4_to_uint8:
// `indices[:, 0] | (indices[:, 1] << 4)`, the even value in the low nibble; mxfp4/base.py
// MXFP4PackedCompressor): `weight_packed` U8 [out, in / 2] (the codes, every one of the 16
// among them), `weight_scale` F8_E4M3 [out, in / 16] (nvfp4) or U8 E8M0 exponents [out, in / 32]
// (mxfp4: compress_mx_scale), and for nvfp4 `weight_global_scale` F32 [1] (initialize.py, the
// tensor_group strategy) with the activations' `input_global_scale` F32 [1] (W4A4). `packed_bytes`
// / `scale_cols` other than the Linear's make the malformed neighbours.
struct CtFp4Linear {
  bool nv = true;
  uint64_t rows = 8, cols = 32;
  uint64_t packed_bytes = 0, scale_cols = 0;  // 0: as written
  bool global = true;                          // nvfp4's weight_global_scale (mxfp4: a stray one)
  float global_value = 0.0f;
};
std::vector<RawTensor> ct_fp4_linear(const std::string& m, const CtFp4Linear& a, uint32_t seed) {
  const uint64_t group = a.nv ? 16 : 32;
  const uint64_t bytes = a.packed_bytes ? a.packed_bytes : a.cols / 2;
  const uint64_t sc = a.scale_cols ? a.scale_cols : a.cols / group;
  std::vector<RawTensor> t = {u8_tensor(m + ".weight_packed", {a.rows, bytes}, xorshift32_bytes(a.rows * bytes, seed, 7))};
  if (a.nv) {
    t.push_back(RawTensor{m + ".weight_scale", "F8_E4M3", {a.rows, sc}, e4m3_scales(a.rows * sc, seed + 1)});
    t.push_back(f32_tensor(m + ".input_global_scale", {1}, {448.0f * 6.0f / 3.25f}));
  } else {
    t.push_back(u8_tensor(m + ".weight_scale", {a.rows, sc}, e8m0_scales(a.rows * sc, seed + 1)));
  }
  if (a.global) t.push_back(f32_tensor(m + ".weight_global_scale", {1}, {a.global_value}));
  return t;
}

// down_proj and q_proj quantized (global scales 448 * 6 / amax for amaxes that leave the division
// inexact), a norm and the `ignore`d lm_head in BF16.
std::vector<RawTensor> ct_fp4_tensors(CtFp4Linear a, CtFp4Linear b = CtFp4Linear()) {
  if (a.global_value == 0.0f) a.global_value = 2688.0f / 0.7431f;
  if (b.global_value == 0.0f) b.global_value = 2688.0f / 0.0123f;
  b.nv = a.nv;
  b.cols = a.cols;
  if (!a.nv) b.global = false;
  std::vector<RawTensor> t = ct_fp4_linear(L + "mlp.down_proj", a, 71);
  for (RawTensor& x : ct_fp4_linear(L + "self_attn.q_proj", b, 75)) t.push_back(x);
  t.push_back(f16_tensor(L + "input_layernorm.weight", "BF16", {a.cols}));
  t.push_back(f16_tensor("lm_head.weight", "BF16", {4, a.cols}));  // `ignore`: left in BF16
  return t;
}

// llm-compressor's config.json for its NVFP4 (W4A4: weights and input activations tensor_group of
// 16, static_minmax; compressed-tensors quantization/quant_scheme.py NVFP4) and MXFP4A16 (weights
// group of 32) presets (sorted keys).
std::string ct_fp4_config(bool nv, const std::string& format) {
  const std::string args = std::string("\"actorder\": null,\n          \"block_structure\": null,\n") +
                           "          \"dynamic\": %D,\n          \"group_size\": " + (nv ? "16" : "32") + ",\n" +
                           "          \"num_bits\": 4,\n          \"observer\": \"" + (nv ? "static_minmax" : "minmax") + "\",\n" +
                           "          \"observer_kwargs\": {},\n          \"strategy\": \"" + (nv ? "tensor_group" : "group") +
                           "\",\n          \"symmetric\": true,\n          \"type\": \"float\"\n";
  auto with = [&](const std::string& dynamic) {
    std::string x = args;
    x.replace(x.find("%D"), 2, dynamic);
    return x;
  };
  return "{\n  \"architectures\": [\n    \"LlamaForCausalLM\"\n  ],\n  \"model_type\": \"llama\",\n"
         "  \"quantization_config\": {\n    \"config_groups\": {\n      \"group_0\": {\n"
         "        \"input_activations\": " + (nv ? "{\n          " + with("\"local\"") + "        }" : std::string("null")) + ",\n"
         "        \"output_activations\": null,\n        \"targets\": [\n          \"Linear\"\n        ],\n"
         "        \"weights\": {\n          " + with("false") + "        }\n      }\n    },\n"
         "    \"format\": \"" + format + "\",\n    \"global_compression_ratio\": null,\n    \"ignore\": [\n      \"lm_head\"\n    ],\n"
         "    \"kv_cache_scheme\": null,\n    \"quant_method\": \"compressed-tensors\",\n"
         "    \"quantization_status\": \"compressed\",\n    \"sparsity_config\": {},\n    \"version\": \"0.11.0\"\n"
         "  },\n  \"torch_dtype\": \"bfloat16\"\n}\n";
}

// The decoded fixtures (status Ok: values checked by model_ct_fp4_hub_test.cpp) and their
// malformed neighbours, refused when the model is built.
void add_ct_fp4_cases(std::vector<HubCase>* out) {
  const std::string D = L + "mlp.down_proj";
  const std::string nv = ct_fp4_config(true, "nvfp4-pack-quantized"), mx = ct_fp4_config(false, "mxfp4-pack-quantized");
  auto add = [&](const std::string& dir, const std::vector<RawTensor>& t, const std::string& cfg, const std::string& status,
                 const std::string& tensor, const std::string& detail, const std::string& why) {
    out->push_back(make_case(dir, t, cfg.empty() ? nullptr : cfg.c_str(), tensor, detail, why, status));
  };
  CtFp4Linear mx64;
  mx64.nv = false;
  mx64.cols = 64;
  mx64.global = false;  // MXFP4PackedCompressor writes none
  add("ct-nvfp4", ct_fp4_tensors(CtFp4Linear()), nv, "Ok", "", "",
      "compressed-tensors nvfp4-pack-quantized (llm-compressor NVFP4): E2M1 * (e4m3(weight_scale) / weight_global_scale)");
  add("ct-nvfp4-no-config", ct_fp4_tensors(CtFp4Linear()), "", "Ok", "", "",
      "nvfp4-pack-quantized without config.json: weight_packed + weight_global_scale name it, the shapes give the rest");
  add("ct-mxfp4", ct_fp4_tensors(mx64), mx, "Ok", "", "",
      "compressed-tensors mxfp4-pack-quantized (MXFP4A16, [8, 64]): E2M1 * 2^(weight_scale - 127), E8M0 0 and 254 among the scales");
  CtFp4Linear scale3;
  scale3.scale_cols = 3;
  add("ct-nvfp4-scale-shape", ct_fp4_tensors(scale3), nv, "ConventionCompanionShape", D + ".weight_scale", "",
      "nvfp4-pack-quantized whose down_proj weight_scale is [8, 3] for rows of 32 values (16 a scale: 2)");
  CtFp4Linear width;
  width.packed_bytes = 12;
  add("ct-nvfp4-packed-width", ct_fp4_tensors(width), nv, "ConventionGroupNotDividing", D + ".weight_packed", "",
      "nvfp4-pack-quantized whose down_proj weight_packed is 12 bytes wide: 24 values, not whole groups of 16");
  CtFp4Linear noglobal;
  noglobal.global = false;
  add("ct-nvfp4-missing-global", ct_fp4_tensors(noglobal), nv, "ConventionMissingCompanion", D + ".weight_packed", "",
      "nvfp4-pack-quantized whose down_proj has no weight_global_scale (the divisor of its scales)");
  CtFp4Linear stray = mx64;
  stray.global = true;
  stray.global_value = 1.0f;
  add("ct-mxfp4-global-scale", ct_fp4_tensors(stray), mx, "QuantizationUnsupported", D + ".weight_global_scale",
      "compressed-tensors mxfp4-pack-quantized weight with a weight_global_scale",
      "mxfp4-pack-quantized whose down_proj has a weight_global_scale (MXFP4PackedCompressor writes none): refused by name");
  add("ct-nvfp4-config-no-tensors",
      {f16_tensor(L + "mlp.up_proj.weight", "BF16", {4, 32}), f16_tensor(L + "input_layernorm.weight", "BF16", {32})}, nv,
      "QuantizationTensorsAbsent", L + "input_layernorm.weight",
      "compressed-tensors nvfp4-pack-quantized (config.json): no <m>.weight_packed tensor",
      "config.json names compressed-tensors nvfp4-pack-quantized over BF16 tensors: the method's tensors are absent");
}

// --- bitsandbytes (decoded; issue #28) ---------------------------------------------------------

// A bitsandbytes model (bnb_fixtures.cpp): down_proj [64, 320] (320 blocks of 64: two nested
// blocks of 256 when double quantized) and q_proj [32, 32] quantized, q_proj's bias and a norm
// left BF16 (Linear4bit quantizes weights only).
std::vector<RawTensor> bnb4_model(bool fp4, uint32_t blocksize, bool nested) {
  std::vector<RawTensor> t = bnb4_module_tensors({L + "mlp.down_proj", 64, 320, fp4, blocksize, nested, 31});
  for (RawTensor& x : bnb4_module_tensors({L + "self_attn.q_proj", 32, 32, fp4, blocksize, nested, 32})) t.push_back(x);
  t.push_back(f16_tensor(L + "self_attn.q_proj.bias", "BF16", {32}));
  t.push_back(f16_tensor(L + "post_attention_layernorm.weight", "BF16", {32}));
  return t;
}
std::vector<RawTensor> bnb8_model() {
  std::vector<RawTensor> t = bnb8_module_tensors(L + "mlp.down_proj", 24, 40, 41);
  for (RawTensor& x : bnb8_module_tensors(L + "self_attn.q_proj", 16, 16, 42)) t.push_back(x);
  t.push_back(f16_tensor(L + "self_attn.q_proj.bias", "F16", {16}));
  t.push_back(f16_tensor(L + "post_attention_layernorm.weight", "F16", {16}));
  return t;
}

// transformers BitsAndBytesConfig.to_dict() as save_pretrained writes it (sorted keys).
std::string bnb_config(bool four, const std::string& quant_type, bool double_quant) {
  const std::string t = four ? "true" : "false", e = four ? "false" : "true";
  return "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 1,\n  \"quantization_config\": {\n"
         "    \"_load_in_4bit\": " + t + ",\n    \"_load_in_8bit\": " + e + ",\n"
         "    \"bnb_4bit_compute_dtype\": \"bfloat16\",\n    \"bnb_4bit_quant_storage\": \"uint8\",\n"
         "    \"bnb_4bit_quant_type\": \"" + quant_type + "\",\n    \"bnb_4bit_use_double_quant\": " +
         (double_quant ? "true" : "false") + ",\n    \"llm_int8_enable_fp32_cpu_offload\": false,\n"
         "    \"llm_int8_has_fp16_weight\": false,\n    \"llm_int8_skip_modules\": null,\n"
         "    \"llm_int8_threshold\": 6.0,\n    \"load_in_4bit\": " + t + ",\n    \"load_in_8bit\": " + e + ",\n"
         "    \"quant_method\": \"bitsandbytes\"\n  },\n  \"torch_dtype\": \"bfloat16\"\n}\n";
}

// The absolute offset of a tensor's data in a reference_file().
uint64_t data_begin(const std::vector<uint8_t>& file, const std::string& name) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t o = h.find("\"data_offsets\":[", h.find("\"" + name + "\":")) + 16;
  return 8 + n + strtoull(h.c_str() + o, nullptr, 10);
}

RawTensor& named(std::vector<RawTensor>& t, const std::string& name) {
  for (RawTensor& x : t)
    if (x.name == name) return x;
  return t.front();
}
std::vector<RawTensor> without(std::vector<RawTensor> t, const std::string& name) {
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) t.erase(t.begin() + long(i));
  return t;
}

// The malformed neighbours of a bitsandbytes model (bnb_convention.cpp), each refused before
// ModelReady with its status at its offset.
void add_bnb_cases(std::vector<HubCase>* out) {
  const std::string D = L + "mlp.down_proj.weight", S = D + ".quant_state.bitsandbytes__nf4";
  const std::string cfg = bnb_config(true, "nf4", false), cfg8 = bnb_config(false, "fp4", false);
  auto data_case = [&](const std::string& dir, const std::vector<RawTensor>& t, const std::string& config,
                       const std::string& tensor, uint64_t past_begin, const std::string& status,
                       const std::string& description) {
    HubCase c = make_case(dir, t, config.c_str(), tensor, "", description, status);
    c.offset = data_begin(c.files[0].bytes, tensor) + past_begin;
    out->push_back(c);
  };
  {  // the JSON cut before its closing brace: an error at the byte after it
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    RawTensor& st = named(t, S);
    st.data.pop_back();
    st.shape = {st.data.size()};
    const uint64_t size = st.data.size();
    data_case("bnb-state-not-json", t, cfg, S, size, "BnbQuantStateInvalid",
              "a quant_state JSON cut before its closing brace: it does not parse (the error at the byte after "
              "its last)");
  }
  {  // the JSON names [64, 64]: 4096 values where the packed bytes hold 20480
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    RawTensor& st = named(t, S);
    std::string j(st.data.begin(), st.data.end());
    j.replace(j.find("[64, 320]"), 9, "[64, 64]");
    st.data.assign(j.begin(), j.end());
    st.shape = {st.data.size()};
    data_case("bnb-state-shape", t, cfg, S, 0, "ConventionCompanionShape",
              "a quant_state whose shape [64, 64] names 4096 values where the packed weight holds 20480: refused "
              "at the JSON's data");
  }
  {  // blocksize 96: not a power of two
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    RawTensor& st = named(t, S);
    std::string j(st.data.begin(), st.data.end());
    j.replace(j.find("\"blocksize\": 64"), 15, "\"blocksize\": 96");
    st.data.assign(j.begin(), j.end());
    data_case("bnb-blocksize", t, cfg, S, 0, "BnbQuantStateInvalid",
              "a quant_state blocksize of 96, not a power of two (bitsandbytes writes 64 to 4096): refused at the "
              "JSON's data");
  }
  {  // an nf4 state whose quant_map is the FP4 table
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    std::vector<RawTensor> fp4 = bnb4_module_tensors({"x", 32, 32, true, 64, false, 1});
    named(t, D + ".quant_map").data = named(fp4, "x.weight.quant_map").data;
    data_case("bnb-quant-map", t, cfg, D + ".quant_map", 0, "BnbQuantMapMismatch",
              "an nf4 weight whose quant_map is the FP4 table: the kernels decode with their own NF4 table, so "
              "it is refused, not decoded with other numbers");
  }
  {  // two quant states for one weight
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    RawTensor extra = named(t, S);
    extra.name = D + ".quant_state.bitsandbytes__fp4";
    t.push_back(extra);
    out->push_back(make_case("bnb-two-states", t, cfg.c_str(), extra.name, "",
                             "quant_state.bitsandbytes__nf4 and __fp4 beside one weight: which one bitsandbytes would "
                             "read is undefined; refused at the second",
                             "BnbQuantStateInvalid"));
  }
  out->push_back(make_case("bnb-missing-absmax", without(bnb4_model(false, 64, false), D + ".absmax"), cfg.c_str(), D,
                           "", "a 4-bit weight with its quant_state and quant_map but no absmax",
                           "ConventionMissingCompanion"));
  {
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    RawTensor orphan = named(t, D + ".absmax");
    orphan.name = L + "mlp.gate_proj.weight.absmax";
    t.push_back(orphan);
    out->push_back(make_case("bnb-orphan-absmax", t, cfg.c_str(), orphan.name, "",
                             "an absmax whose weight (mlp.gate_proj.weight) is not in the model",
                             "ConventionOrphanCompanion"));
  }
  {  // absmax one block short: 319 of 320
    std::vector<RawTensor> t = bnb4_model(false, 64, false);
    RawTensor& a = named(t, D + ".absmax");
    a.data.resize(a.data.size() - 4);
    a.shape = {319};
    out->push_back(make_case("bnb-absmax-count", t, cfg.c_str(), D + ".absmax", "",
                             "319 absmax for the 320 blocks of 64 the quant_state's [64, 320] makes",
                             "ConventionCompanionShape"));
  }
  {  // 8-bit weight_format 1 ("col32"): bitsandbytes refuses every format but "row"
    std::vector<RawTensor> t = bnb8_model();
    named(t, D + "_format").data = {1};
    data_case("bnb-int8-weight-format", t, cfg8, D + "_format", 0, "UnsupportedFormat",
              "an 8-bit weight_format of 1 (col32): bitsandbytes' maybe_rearrange_weight takes only 0 (row)");
  }
  {
    static const char kWhy[] =
        "bitsandbytes (quant_method): no <m>.weight with its quant_state and absmax (4-bit) or SCB (8-bit)";
    std::vector<RawTensor> t = {f16_tensor(L + "mlp.down_proj.weight", "BF16", {4, 8}),
                                f16_tensor(L + "input_layernorm.weight", "BF16", {8})};
    out->push_back(make_case("bnb-config-no-tensors", t, cfg.c_str(), L + "input_layernorm.weight", kWhy,
                             "config.json names bitsandbytes over BF16 tensors (a dequantized copy): its tensors are "
                             "absent",
                             "QuantizationTensorsAbsent"));
  }
}

void add_bnb_decoded(std::vector<SampleFile>* out) {
  auto model = [&](const std::string& dir, const std::vector<RawTensor>& t, const std::string& config) {
    out->push_back({"hub/" + dir + "/model.safetensors", reference_file(t)});
    if (!config.empty()) out->push_back({"hub/" + dir + "/config.json", bytes_of(config)});
  };
  model("bnb-nf4", bnb4_model(false, 64, false), bnb_config(true, "nf4", false));
  model("bnb-nf4-nested", bnb4_model(false, 64, true), bnb_config(true, "nf4", true));
  model("bnb-fp4-no-config", bnb4_model(true, 128, false), "");
  model("bnb-int8", bnb8_model(), bnb_config(false, "fp4", false));
}
// `s` with the first `from` replaced by `to` (a config written as another, edited).
std::string with(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// The quantization config's lists of modules left unquantized and compressed-tensors' targets
// (lib/src/conventions/module_lists.h): modules read as stored, the files contradicting a list,
// and a mixed-precision config decoded per target.
void add_module_list_cases(std::vector<HubCase>* out) {
  const std::string ok = "Ok";
  // fp8: transformers' modules_to_not_convert (should_convert_module: "mlp.gate" ends the router's
  // name), the router left F8_E4M3 without a scale and read as stored.
  const std::string not_convert = block_config("4", "4", "    \"modules_to_not_convert\": [\n      \"lm_head\",\n"
                                                          "      \"mlp.gate\"\n    ],\n");
  out->push_back(make_case("fp8-modules-to-not-convert",
                           {fp8_weight(L + "mlp.down_proj.weight", 8, 8, 71),
                            f32_tensor(L + "mlp.down_proj.weight_scale_inv", {2, 2}, {0.125f, 3.0f, 1.5f, 4.0f}),
                            fp8_weight(L + "mlp.gate.weight", 4, 8, 72), f16_tensor("lm_head.weight", "BF16", {4, 8})},
                           not_convert.c_str(), "", "",
                           "fp8 with modules_to_not_convert [lm_head, mlp.gate]: the router mlp.gate (its name ends with "
                           "the entry) is F8_E4M3 without a scale and read as stored, not refused; down_proj decoded",
                           ok));
  // vLLM's ignored_layers (an exact name) over a module stored with its block scale.
  const std::string ignored = block_config("4", "4", "    \"ignored_layers\": [\n      \"" + L + "mlp.down_proj\"\n    ],\n");
  out->push_back(make_case("fp8-excluded-quantized", fp8_block_tensors(), ignored.c_str(), L + "mlp.down_proj.weight",
                           "stored quantized, yet ignored_layers \"" + L + "mlp.down_proj\" leaves it unquantized (config.json)",
                           "fp8 whose ignored_layers names down_proj, stored F8_E4M3 with its weight_scale_inv: the "
                           "files contradict the config (vLLM would load it unquantized)",
                           "ConventionExcludedQuantized"));
  // ModelOpt: config.json without quantization_config, hf_quant_config.json beside it whose
  // exclude_modules wildcard (vLLM modelopt.py: fnmatch) leaves self_attn in BF16.
  {
    std::vector<RawTensor> t = {f16_tensor(L + "self_attn.q_proj.weight", "BF16", {4, 8}),
                                fp8_weight(L + "mlp.down_proj.weight", 6, 8, 73),
                                f32_tensor(L + "mlp.down_proj.weight_scale", {}, {2.5f}),
                                f32_tensor(L + "mlp.down_proj.input_scale", {}, {0.03125f}),
                                f16_tensor(L + "input_layernorm.weight", "BF16", {8}),
                                f16_tensor("lm_head.weight", "BF16", {4, 8})};
    const char* plain_config = "{\n  \"architectures\": [\n    \"LlamaForCausalLM\"\n  ],\n  \"model_type\": \"llama\",\n"
                               "  \"torch_dtype\": \"bfloat16\"\n}\n";
    HubCase c = make_case("modelopt-fp8-exclude-wildcard", t, plain_config, "", "",
                          "ModelOpt FP8 whose config.json has no quantization_config: hf_quant_config.json beside it "
                          "names the method, its exclude_modules \"*self_attn*\" (a wildcard) leaves q_proj in BF16",
                          ok);
    c.files.push_back({"hf_quant_config.json",
                       bytes_of(with(modelopt_hf_quant_config("FP8"), "\"lm_head\"\n", "\"lm_head\",\n            \"*self_attn*\"\n"))});
    out->push_back(c);
  }
  out->push_back(modelopt_case("modelopt-fp8-excluded-quantized", modelopt_fp8_tensors(), "FP8", true,
                               "ConventionExcludedQuantized", L + "self_attn.q_proj.weight",
                               "stored quantized, yet exclude_modules \"" + L + "self_attn*\" leaves it unquantized (config.json)",
                               "ModelOpt FP8 whose exclude_modules wildcard covers self_attn, while q_proj is stored "
                               "F8_E4M3 with its weight_scale"));
  {  // (modelopt_case writes config.json from the algo: the list is edited in.)
    HubCase& c = out->back();
    const std::string cfg = with(modelopt_fp8_config("FP8"), "\"lm_head\"\n", "\"lm_head\",\n      \"" + L + "self_attn*\"\n");
    c.files[1].bytes = bytes_of(cfg);
  }
  // compressed-tensors: `ignore` with a `re:` entry over a packed module; targets that leave a
  // packed module unmatched; a target naming a module stored plain; and a mixed-precision config
  // (two groups, two schemes of one format) decoded module by module.
  const std::string D = L + "mlp.down_proj";
  const std::string g4 = ct_config(4, "group", "16", true);
  const CtLinear sym = ct_args(4, 16, true);
  out->push_back(make_case("ct-ignore-quantized", ct_tensors(sym, sym),
                           with(g4, "\"lm_head\"\n", "\"lm_head\",\n      \"re:.*down_proj$\"\n").c_str(),
                           D + ".weight_packed", "stored quantized, yet ignore \"re:.*down_proj$\" leaves it unquantized (config.json)",
                           "pack-quantized whose ignore list's regex re:.*down_proj$ matches down_proj, stored packed",
                           "ConventionExcludedQuantized"));
  out->push_back(make_case("ct-no-target", ct_tensors(sym, sym),
                           with(g4, "\"Linear\"", "\"re:.*mlp.*\"").c_str(), L + "self_attn.q_proj.weight_packed",
                           "stored quantized, yet no config_groups target with weights matches it (config.json)",
                           "pack-quantized whose only target re:.*mlp.* leaves q_proj unquantized, stored packed",
                           "ConventionExcludedQuantized"));
  {
    std::vector<RawTensor> t = ct_tensors(sym, sym);
    t.push_back(f16_tensor(L + "mlp.gate_proj.weight", "BF16", {8, 32}));
    out->push_back(make_case("ct-target-missing-packed", t, with(g4, "\"Linear\"", "\"re:.*_proj$\"").c_str(),
                             L + "mlp.gate_proj.weight",
                             "config_groups target \"re:.*_proj$\" quantizes it, yet no weight_packed is stored",
                             "pack-quantized whose target re:.*_proj$ names gate_proj, stored as a BF16 weight without "
                             "its packed tensors: never passed on as if plain",
                             "ConventionMissingCompanion"));
  }
  {
    CtLinear asym = ct_args(4, 16, false), w8 = ct_args(8, 0, true);
    const std::string group_1 =
        "      \"group_1\": {\n        \"input_activations\": null,\n        \"output_activations\": null,\n"
        "        \"targets\": [\n          \"re:.*self_attn.*\"\n        ],\n        \"weights\": {\n"
        "          \"actorder\": null,\n          \"block_structure\": null,\n          \"dynamic\": false,\n"
        "          \"group_size\": null,\n          \"num_bits\": 8,\n          \"observer\": \"minmax\",\n"
        "          \"observer_kwargs\": {},\n          \"strategy\": \"channel\",\n          \"symmetric\": true,\n"
        "          \"type\": \"int\"\n        }\n      }\n    },\n    \"format\"";
    std::string cfg = with(ct_config(4, "group", "16", false), "\"Linear\"", "\"re:.*mlp.*\"");
    cfg = with(cfg, "      }\n    },\n    \"format\"", "      },\n" + group_1);
    out->push_back(make_case("ct-mixed-precision", ct_tensors(asym, w8), cfg.c_str(), "", "",
                             "pack-quantized with two config groups: re:.*mlp.* 4-bit asymmetric groups of 16 "
                             "(down_proj), re:.*self_attn.* 8-bit symmetric channel (q_proj); each decoded with its "
                             "group's arguments",
                             ok));
  }
}

}  // namespace

std::vector<HubCase> hub_cases() {
  std::vector<HubCase> out;
  // The tensor named when config.json names the method: the first (in header order) of a scheme
  // the names show. Header order: dtype descending, then name (F32 scales before F8 weights).
  add_fp8_cases(&out);
  add_gptq_cases(&out);
  add_awq_cases(&out);
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
  add_fp4_refusals(&out);
  add_other_config_refusals(&out);
  add_modelopt_fp8_cases(&out);
  add_ct_cases(&out);
  add_bnb_cases(&out);
  add_ct_fp4_cases(&out);
  add_module_list_cases(&out);
  return out;
}

// The other config file a case's verdict comes from (quantize_config.json, ...), or null.
std::string other_config(const HubCase& c) {
  for (const SampleFile& f : c.files)
    if (f.path != "model.safetensors" && f.path != "config.json") return json_string(f.path);
  return "null";
}

// A stored tensor of a safetensors file, read from its header (the generator's own reading):
// absolute offset, bytes, shape; false when the file has no such tensor.
bool stored_tensor(const std::vector<uint8_t>& file, const std::string& name, uint64_t* at,
                   std::vector<uint8_t>* bytes, std::vector<uint64_t>* shape) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[size_t(k)]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t e = h.find("\"" + name + "\":");
  if (e == std::string::npos) return false;
  shape->clear();
  size_t p = h.find("\"shape\":[", e) + 9;
  while (h[p] != ']') {
    shape->push_back(strtoull(h.c_str() + p, nullptr, 10));
    p = h.find_first_of(",]", p);
    if (h[p] == ',') ++p;
  }
  const size_t o = h.find("\"data_offsets\":[", e) + 16;
  const uint64_t a = strtoull(h.c_str() + o, nullptr, 10), b = strtoull(h.c_str() + h.find(',', o) + 1, nullptr, 10);
  *at = 8 + n + a;
  bytes->assign(file.begin() + long(*at), file.begin() + long(8 + n + b));
  return true;
}

// The warnings a GPTQ v1 case's Validate load raises (warning.h GptqZeroSpill), from its stored
// words: for each `<m>.qzeros` (bits from its width against `<m>.scales`: out * bits / 32 words a
// group), every lane whose code is all ones, the first one's word (3 bits: its 3-word block).
// JSON objects {code, tensor, offset, count} in file order; "" for other cases.
std::string gptq_spill_warnings(const HubCase& c) {
  if (c.status != "Ok" || c.dir.compare(0, 4, "gptq") != 0) return "";
  const std::vector<uint8_t>* model = nullptr;
  for (const SampleFile& f : c.files) {
    if (f.path == "model.safetensors") model = &f.bytes;
    if (std::string(f.bytes.begin(), f.bytes.end()).find("gptq_v2") != std::string::npos) return "";  // v2
  }
  if (!model) return "";
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t((*model)[size_t(k)]) << (8 * k);
  const std::string h(model->begin() + 8, model->begin() + 8 + long(n));
  std::vector<std::pair<uint64_t, std::string>> found;
  for (size_t e = h.find(".qzeros\":"); e != std::string::npos; e = h.find(".qzeros\":", e + 1)) {
    const size_t q = h.rfind('"', e);
    const std::string m = h.substr(q + 1, e - q - 1);
    uint64_t zat = 0, sat = 0;
    std::vector<uint8_t> z, sc;
    std::vector<uint64_t> zs, ss;
    if (!stored_tensor(*model, m + ".qzeros", &zat, &z, &zs) || !stored_tensor(*model, m + ".scales", &sat, &sc, &ss)) continue;
    const uint32_t bits = uint32_t(zs[1] * 32 / ss[1]), mask = (1u << bits) - 1;
    const uint32_t words = bits == 3 ? 3 : 1, lanes = bits == 3 ? 32 : 32 / bits;
    uint64_t count = 0, first = 0;
    for (size_t b = 0; b + 4 * words <= z.size(); b += 4 * words) {
      uint32_t hits = 0;
      for (uint32_t k = 0; k < lanes; ++k) {
        const uint32_t bit = bits * k;
        uint64_t two = 0;
        for (uint32_t j = 0; j < 2 && bit / 32 + j < words; ++j) {
          uint32_t v = 0;
          memcpy(&v, z.data() + b + 4 * (bit / 32 + j), 4);
          two |= uint64_t(v) << (32 * j);
        }
        hits += ((two >> (bit % 32)) & mask) == mask;
      }
      if (hits && !count) first = zat + b;
      count += hits;
    }
    if (count)
      found.push_back({first, "{\"code\": \"GptqZeroSpill\", \"tensor\": " + json_string(m + ".qzeros") +
                                  ", \"offset\": " + std::to_string(first) + ", \"count\": " + std::to_string(count) + "}"});
  }
  std::sort(found.begin(), found.end());
  std::string out;
  for (const auto& f : found) out += (out.empty() ? "" : ", ") + f.second;
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
            ", \"config\": " + (c.has_config ? "true" : "false") + ", \"other_config\": " + other_config(c) +
            // The warnings its Validate load raises (warning.h), when it raises any.
            (gptq_spill_warnings(c).empty() ? "" : ", \"warnings\": [" + gptq_spill_warnings(c) + "]") +
            ", \"description\": " +
            json_string(c.description) + "}" + (i + 1 < cases.size() ? ",\n" : "\n");
  }
  json += "]}\n";
  out.push_back({"hub/expected.json", bytes_of(json)});
  add_fp4_decoded(&out);
  add_ct_decoded(&out);
  add_bnb_decoded(&out);
  return out;
}

}  // namespace samplegen
