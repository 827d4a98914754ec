// ws-make-samples — convention fixtures (see convention_fixtures.h).
#include "convention_fixtures.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "half_float.h"
#include "index_writer.h"
#include "prng.h"
#include "safetensors_writer.h"
#include "hub_fixtures.h"
#include "malformed_fixtures.h"
#include "uqff_fixtures.h"

namespace samplegen {

namespace {

// Deterministic bytes: xorshift32 per fixture tensor.
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  return xorshift32_bytes(n, seed * 747796405u + 2891336453u, 7);
}

// The blobs' SHA-256 (sha256sum of their bytes), as `ollama pull` names them; checked by
// tests/conventions/fixture_files_test.cpp.
const char kInferredBlobA[] = "f8ad6a09c2b772124008ae2875f4798338e2a7e8f9c63850804a4e22ca4d0aec";
const char kInferredBlobB[] = "c054310783e0f7c315d6a389aad4e207f6934a2954f1b09989719fefe9e85613";

RawTensor packed(const std::string& name, std::vector<uint64_t> shape, uint32_t seed) {
  return RawTensor{name, "U32", shape, random_bytes(element_count(shape) * 4, seed)};
}

// Float scales/biases with exactly representable values: (i%5 + 1)/16 (scales) or -(i%3)/4.
RawTensor floats(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape,
                 bool bias) {
  RawTensor t{name, dtype, shape, {}};
  for (uint64_t i = 0; i < element_count(shape); ++i) {
    float v = bias ? -float(i % 3) / 4.0f : float(i % 5 + 1) / 16.0f;
    if (dtype == "F32") {
      uint32_t b;
      memcpy(&b, &v, 4);
      for (int k = 0; k < 4; ++k) t.data.push_back(uint8_t(b >> (8 * k)));
    } else {
      uint16_t h = dtype == "BF16" ? float_to_bf16(v) : float_to_f16(v);
      t.data.push_back(uint8_t(h));
      t.data.push_back(uint8_t(h >> 8));
    }
  }
  return t;
}

// U8 scales: E8M0 around 2^0 (125..129) or E4M3 values with exponent 6..8 (0x30..0x4F).
RawTensor u8_scales(const std::string& name, std::vector<uint64_t> shape, bool e4m3) {
  RawTensor t{name, "U8", shape, {}};
  for (uint64_t i = 0; i < element_count(shape); ++i)
    t.data.push_back(uint8_t(e4m3 ? 0x30 + (i * 7) % 0x20 : 125 + i % 5));
  return t;
}

}  // namespace

std::vector<uint8_t> serialize_raw(const std::vector<RawTensor>& tensors,
                                   const std::vector<size_t>& data_order,
                                   const std::map<std::string, std::string>& metadata, bool pad) {
  std::vector<uint64_t> begin(tensors.size());
  uint64_t at = 0;
  for (size_t i : data_order) {
    begin[i] = at;
    at += tensors[i].data.size();
  }
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool first = true;
    for (const auto& kv : metadata) {
      if (!first) h += ",";
      first = false;
      append_json_string(&h, kv.first);
      h += ":";
      append_json_string(&h, kv.second);
    }
    h += "}";
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const RawTensor& t = tensors[i];
    if (h.size() > 1) h += ",";
    append_json_string(&h, t.name);
    h += ":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) h += (d ? "," : "") + std::to_string(t.shape[d]);
    h += "],\"data_offsets\":[" + std::to_string(begin[i]) + "," +
         std::to_string(begin[i] + t.data.size()) + "]}";
  }
  h += "}";
  if (pad) while (h.size() % 8) h += ' ';
  std::vector<uint8_t> out;
  for (int k = 0; k < 8; ++k) out.push_back(uint8_t(uint64_t(h.size()) >> (8 * k)));
  out.insert(out.end(), h.begin(), h.end());
  for (size_t i : data_order) out.insert(out.end(), tensors[i].data.begin(), tensors[i].data.end());
  return out;
}

MlxFixture mlx_fixture() {
  MlxFixture f;
  const std::string L = "model.layers.0.";
  // Sorted by name, as MLX writes header keys. Defaults: affine, 4 bits, group 32; q_proj is
  // overridden to 3 bits (F16 scales), up_proj to mxfp4; experts is a MoE stack [E, out, in*4/32].
  f.tensors = {
      packed(L + "mlp.down_proj.weight", {4, 8}, 1),              // 0: K = 64
      floats(L + "mlp.down_proj.scales", "BF16", {4, 2}, false),  // 1
      floats(L + "mlp.down_proj.biases", "BF16", {4, 2}, true),   // 2
      packed(L + "mlp.experts.gate_proj.weight", {2, 2, 8}, 2),   // 3
      floats(L + "mlp.experts.gate_proj.scales", "BF16", {2, 2, 2}, false),  // 4
      floats(L + "mlp.experts.gate_proj.biases", "BF16", {2, 2, 2}, true),   // 5
      packed(L + "mlp.up_proj.weight", {2, 8}, 3),                // 6: mxfp4, K = 64
      u8_scales(L + "mlp.up_proj.scales", {2, 2}, false),         // 7
      floats(L + "self_attn.q_proj.bias", "F32", {2}, false),     // 8: a linear's bias, plain
      packed(L + "self_attn.q_proj.weight", {2, 6}, 4),           // 9: 3-bit, K = 64
      floats(L + "self_attn.q_proj.scales", "F16", {2, 2}, false),  // 10
      floats(L + "self_attn.q_proj.biases", "F16", {2, 2}, true),   // 11
      floats("model.norm.weight", "F16", {8}, false),             // 12
  };
  std::sort(f.tensors.begin(), f.tensors.end(),
            [](const RawTensor& a, const RawTensor& b) { return a.name < b.name; });
  // Data order as a hash map might leave it: every packed weight before every companion.
  auto idx = [&](const std::string& n) {
    for (size_t i = 0; i < f.tensors.size(); ++i)
      if (f.tensors[i].name == n) return i;
    return size_t(0);
  };
  for (const char* n : {"self_attn.q_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
                        "mlp.experts.gate_proj.weight"})
    f.data_order.push_back(idx(L + n));
  f.data_order.push_back(idx("model.norm.weight"));
  f.data_order.push_back(idx(L + "self_attn.q_proj.bias"));
  for (const char* n : {"mlp.down_proj.scales", "self_attn.q_proj.scales", "mlp.up_proj.scales",
                        "mlp.experts.gate_proj.scales", "mlp.down_proj.biases",
                        "self_attn.q_proj.biases", "mlp.experts.gate_proj.biases"})
    f.data_order.push_back(idx(L + n));
  f.config_json =
      "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 64,\n  \"quantization\": {\n"
      "    \"group_size\": 32,\n    \"bits\": 4,\n"
      "    \"model.layers.0.self_attn.q_proj\": {\"group_size\": 32, \"bits\": 3},\n"
      "    \"model.layers.0.mlp.up_proj\": {\"group_size\": 32, \"bits\": 4, \"mode\": \"mxfp4\"}\n"
      "  },\n  \"quantization_config\": {\"group_size\": 32, \"bits\": 4}\n}\n";
  return f;
}

OllamaFixture ollama_fixture() {
  OllamaFixture f;
  f.tensors = {
      packed("a.weight", {2, 8}, 11),                       // int4 (blob default), group 32
      floats("a.weight.bias", "BF16", {2, 2}, true),
      floats("a.weight.scale", "BF16", {2, 2}, false),
      packed("b.weight", {2, 16}, 12),                      // mxfp8: K = 64
      u8_scales("b.weight.scale", {2, 2}, false),
      packed("c.weight", {2, 8}, 13),                       // nvfp4: K = 64, group 16
      floats("c.weight.global_scale", "F32", {}, false),
      u8_scales("c.weight.scale", {2, 4}, true),
      floats("lin.bias", "F32", {2}, true),                 // no .scale beside it: plain
      floats("norm.weight", "BF16", {4}, false),
  };
  f.metadata = {{"quant_type", "int4"},           {"group_size", "32"},
                {"b.weight.quant_type", "mxfp8"}, {"b.weight.group_size", "32"},
                {"c.weight.quant_type", "nvfp4"}, {"c.weight.group_size", "16"}};
  const std::string hex = "b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42";
  f.manifest_json =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
      "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + hex +
      "\",\"size\":0,\"name\":\"a.weight\"}]}";
  return f;
}

MlxFixture mlx_bits_fixture() {
  MlxFixture f;
  const std::string L = "model.layers.1.";
  // Defaults: affine 4 bits, group 64. K is the logical row length: words = K * bits / 32.
  f.tensors = {
      packed(L + "mlp.gate_proj.weight", {2, 16}, 21),             // 4-bit g64, K = 128
      floats(L + "mlp.gate_proj.scales", "BF16", {2, 2}, false),
      floats(L + "mlp.gate_proj.biases", "BF16", {2, 2}, true),
      packed(L + "mlp.down_proj.weight", {3, 9}, 22),              // 3-bit g32, K = 96
      floats(L + "mlp.down_proj.scales", "F32", {3, 3}, false),
      floats(L + "mlp.down_proj.biases", "F32", {3, 3}, true),
      packed(L + "self_attn.k_proj.weight", {2, 10}, 23),          // 5-bit g32, K = 64
      floats(L + "self_attn.k_proj.scales", "BF16", {2, 2}, false),
      floats(L + "self_attn.k_proj.biases", "BF16", {2, 2}, true),
      packed(L + "self_attn.v_proj.weight", {2, 12}, 24),          // 6-bit g64, K = 64
      floats(L + "self_attn.v_proj.scales", "F32", {2, 1}, false),
      floats(L + "self_attn.v_proj.biases", "F32", {2, 1}, true),
      packed(L + "self_attn.o_proj.weight", {2, 8}, 25),           // 2-bit g128, K = 128
      floats(L + "self_attn.o_proj.scales", "BF16", {2, 1}, false),
      floats(L + "self_attn.o_proj.biases", "BF16", {2, 1}, true),
      floats("lm_head.weight", "F16", {4, 8}, false),              // override false: plain
  };
  std::sort(f.tensors.begin(), f.tensors.end(),
            [](const RawTensor& a, const RawTensor& b) { return a.name < b.name; });
  // The linears in reverse key order, each one's pieces in key order: biases, scales, then the
  // packed weight (companions first, the opposite of mlx_fixture()).
  auto module = [&](size_t i) { return f.tensors[i].name.substr(0, f.tensors[i].name.rfind('.')); };
  for (size_t end = f.tensors.size(); end > 0;) {
    size_t begin = end - 1;
    while (begin > 0 && module(begin - 1) == module(end - 1)) --begin;
    for (size_t i = begin; i < end; ++i) f.data_order.push_back(i);
    end = begin;
  }
  f.config_json =
      "{\n  \"model_type\": \"llama\",\n  \"quantization\": {\n"
      "    \"group_size\": 64,\n    \"bits\": 4,\n"
      "    \"model.layers.1.mlp.down_proj\": {\"group_size\": 32, \"bits\": 3},\n"
      "    \"model.layers.1.self_attn.k_proj\": {\"group_size\": 32, \"bits\": 5},\n"
      "    \"model.layers.1.self_attn.v_proj\": {\"group_size\": 64, \"bits\": 6},\n"
      "    \"model.layers.1.self_attn.o_proj\": {\"group_size\": 128, \"bits\": 2},\n"
      "    \"lm_head\": false\n  }\n}\n";
  return f;
}

OllamaFixture ollama_experts_fixture() {
  OllamaFixture f;
  const std::string P = "model.layers.0.mlp.experts.";
  f.tensors = {
      packed(P + "down_proj.weight", {2, 2, 16}, 31),           // int8 g64: K = 64
      floats(P + "down_proj.weight.bias", "BF16", {2, 2, 1}, true),
      floats(P + "down_proj.weight.scale", "BF16", {2, 2, 1}, false),
      packed(P + "up_proj.weight", {2, 2, 8}, 32),              // mxfp4: K = 64
      u8_scales(P + "up_proj.weight.scale", {2, 2, 2}, false),
  };
  f.metadata = {{P + "down_proj.weight.quant_type", "int8"}, {P + "down_proj.weight.group_size", "64"},
                {P + "up_proj.weight.quant_type", "mxfp4"}, {P + "up_proj.weight.group_size", "32"}};
  return f;
}

MlxFixture mlx_overrides_fixture() {
  MlxFixture f;
  const std::string L = "model.layers.0.";
  // Words per row = K * bits / 32; groups per row = K / group.
  f.tensors = {
      packed(L + "mlp.experts.gate_proj.weight", {2, 4, 8}, 51),            // top level: mxfp4, K = 64
      u8_scales(L + "mlp.experts.gate_proj.scales", {2, 4, 2}, false),
      packed(L + "mlp.gate.weight", {4, 16}, 52),                           // {"group_size":64,"bits":8}
      floats(L + "mlp.gate.scales", "BF16", {4, 1}, false),
      floats(L + "mlp.gate.biases", "BF16", {4, 1}, true),
      packed(L + "mlp.shared_expert_gate.weight", {1, 16}, 53),             // {"bits": 8}: affine g64
      floats(L + "mlp.shared_expert_gate.scales", "F16", {1, 1}, false),
      floats(L + "mlp.shared_expert_gate.biases", "F16", {1, 1}, true),
      packed(L + "self_attn.k_proj.weight", {2, 16}, 54),                   // {"group_size": 128}: 4-bit, K = 128
      floats(L + "self_attn.k_proj.scales", "F32", {2, 1}, false),
      floats(L + "self_attn.k_proj.biases", "F32", {2, 1}, true),
      packed(L + "self_attn.q_proj.weight", {2, 8}, 55),                    // {"mode": "nvfp4"}: g16, K = 64
      u8_scales(L + "self_attn.q_proj.scales", {2, 4}, true),
      packed(L + "self_attn.v_proj.weight", {2, 8}, 56),                    // true: mxfp4 g32, K = 64
      u8_scales(L + "self_attn.v_proj.scales", {2, 2}, false),
      packed(L + "self_attn.o_proj.weight", {2, 16}, 57),                   // {"mode": "mxfp8"}: g32, K = 64
      u8_scales(L + "self_attn.o_proj.scales", {2, 2}, false),
      floats(L + "mlp.down_proj.weight", "BF16", {4, 8}, false),            // {}: not quantized
      floats("lm_head.weight", "F16", {4, 8}, false),                       // false: not quantized
      floats("model.norm.weight", "F32", {8}, false),
  };
  std::sort(f.tensors.begin(), f.tensors.end(),
            [](const RawTensor& a, const RawTensor& b) { return a.name < b.name; });
  // Data in another order than the keys, as MLX's hash map leaves it: every second tensor, then
  // the others.
  for (size_t start : {size_t(1), size_t(0)})
    for (size_t i = start; i < f.tensors.size(); i += 2) f.data_order.push_back(i);
  f.config_json = mlx_overrides_config("{\"bits\": 8}", "\"group_size\": 32, \"bits\": 4, \"mode\": \"mxfp4\"");
  return f;
}

std::string mlx_overrides_config(const std::string& gate_override, const std::string& top) {
  const std::string section =
      "{\n    " + top + ",\n"
      "    \"model.layers.0.mlp.gate\": {\"group_size\": 64, \"bits\": 8},\n"
      "    \"model.layers.0.mlp.shared_expert_gate\": " + gate_override + ",\n"
      "    \"model.layers.0.self_attn.k_proj\": {\"group_size\": 128},\n"
      "    \"model.layers.0.self_attn.q_proj\": {\"mode\": \"nvfp4\"},\n"
      "    \"model.layers.0.self_attn.v_proj\": true,\n"
      "    \"model.layers.0.self_attn.o_proj\": {\"mode\": \"mxfp8\"},\n"
      "    \"model.layers.0.mlp.down_proj\": {},\n"
      "    \"lm_head\": false\n  }";
  return "{\n  \"model_type\": \"qwen3_moe\",\n  \"quantization\": " + section + ",\n  \"quantization_config\": " +
         section + "\n}\n";
}

OllamaInferredFixture ollama_inferred_fixture() {
  OllamaInferredFixture f;
  const std::string L = "model.layers.0.";
  f.plain.tensors = {
      packed(L + "mlp.up_proj.weight", {2, 32}, 61),                     // 32 words / 1 scale: int8 g128
      floats(L + "mlp.up_proj.weight.bias", "BF16", {2, 1}, true),
      floats(L + "mlp.up_proj.weight.scale", "BF16", {2, 1}, false),
      floats(L + "router.scale", "F32", {8}, false),                     // no base tensor: plain
      packed(L + "self_attn.k_proj.weight", {2, 16}, 62),                // 16 words / 1 scale: int8 g64
      floats(L + "self_attn.k_proj.weight.bias", "BF16", {2, 1}, true),
      floats(L + "self_attn.k_proj.weight.scale", "BF16", {2, 1}, false),
      packed(L + "self_attn.q_proj.weight", {4, 8}, 63),                 // 8 words / 2 scales: int4 g32
      floats(L + "self_attn.q_proj.weight.bias", "BF16", {4, 2}, true),
      floats(L + "self_attn.q_proj.weight.scale", "BF16", {4, 2}, false),
      floats("model.norm.weight", "BF16", {8}, false),
  };
  const std::string E = L + "mlp.experts.";
  f.named.tensors = {
      packed(E + "down_proj.weight", {2, 2, 8}, 64),                     // " Nvfp4 ": g16, K = 64
      floats(E + "down_proj.weight.global_scale", "F32", {}, false),
      u8_scales(E + "down_proj.weight.scale", {2, 2, 4}, true),
      packed(E + "gate_proj.weight", {2, 2, 16}, 65),                    // blob "INT8": g32, K = 64
      floats(E + "gate_proj.weight.bias", "BF16", {2, 2, 2}, true),
      floats(E + "gate_proj.weight.scale", "BF16", {2, 2, 2}, false),
      packed(E + "up_proj.weight", {2, 2, 8}, 66),                       // "q4": int4, group 32 from shapes
      floats(E + "up_proj.weight.bias", "BF16", {2, 2, 2}, true),
      floats(E + "up_proj.weight.scale", "BF16", {2, 2, 2}, false),
  };
  f.named.metadata = {{"quant_type", "INT8"}, {E + "down_proj.weight.quant_type", " Nvfp4 "},
                      {E + "up_proj.weight.quant_type", "q4"}};
  const std::vector<uint8_t> a = ollama_blob_bytes(f.plain), b = ollama_blob_bytes(f.named);
  f.manifest_json = ollama_manifest_json({{kInferredBlobA, a.size(), L + "self_attn.q_proj.weight"},
                                          {kInferredBlobB, b.size(), L + "mlp.experts"}});
  return f;
}

std::string ollama_blob_file(const std::string& hex) { return "sha256-" + hex; }

std::string ollama_manifest_json(const std::vector<ManifestLayerSpec>& layers) {
  std::string m =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
      "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
      std::string(64, '0') + "\",\"size\":2},\"layers\":[";
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i) m += ",";
    m += "{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + layers[i].hex +
         "\",\"size\":" + std::to_string(layers[i].size) + ",\"name\":\"" + layers[i].name + "\"}";
  }
  return m + "]}\n";
}

std::vector<uint8_t> mlx_file_bytes(const MlxFixture& f) {
  return serialize_raw(f.tensors, f.data_order, {{"format", "mlx"}}, false);
}

std::vector<uint8_t> ollama_blob_bytes(const OllamaFixture& f) {
  std::vector<size_t> order;
  for (size_t i = 0; i < f.tensors.size(); ++i) order.push_back(i);
  return serialize_raw(f.tensors, order, f.metadata, true);
}

std::string shard_file_name(size_t shard, size_t count) {
  char b[64];
  snprintf(b, sizeof b, "model-%05zu-of-%05zu.safetensors", shard + 1, count);
  return b;
}

ShardedFixture sharded_fixture() {
  ShardedFixture f;
  const std::string L = "model.layers.0.";
  f.shards.resize(3);
  f.shards[0].tensors = {
      floats("model.embed_tokens.weight", "BF16", {16, 8}, false),
      packed(L + "self_attn.q_proj.weight", {4, 4}, 41),  // 4-bit g32, K = 32; companions in shard 2
  };
  f.shards[1].tensors = {
      floats(L + "self_attn.q_proj.scales", "BF16", {4, 1}, false),
      floats(L + "self_attn.q_proj.biases", "BF16", {4, 1}, true),
      packed(L + "mlp.up_proj.weight", {4, 8}, 42),       // 4-bit g32, K = 64
      floats(L + "mlp.up_proj.scales", "BF16", {4, 2}, false),
      floats(L + "mlp.up_proj.biases", "BF16", {4, 2}, true),
  };
  f.shards[2].tensors = {
      floats("model.norm.weight", "F32", {8}, false),
      floats("lm_head.weight", "F16", {16, 8}, false),
  };
  for (size_t s = 0; s < f.shards.size(); ++s) {
    MlxFixture& sh = f.shards[s];
    std::sort(sh.tensors.begin(), sh.tensors.end(),
              [](const RawTensor& a, const RawTensor& b) { return a.name < b.name; });
    for (size_t i = 0; i < sh.tensors.size(); ++i) {
      sh.data_order.push_back(i);
      f.weight_map[sh.tensors[i].name] = shard_file_name(s, f.shards.size());
      f.total_size += sh.tensors[i].data.size();
    }
  }
  f.config_json = "{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": 1,\n"
                  "  \"quantization\": {\"group_size\": 32, \"bits\": 4}\n}\n";
  return f;
}

namespace {
std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::vector<size_t> key_order(size_t n) {
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) order.push_back(i);
  return order;
}
// The blobs' SHA-256, as `ollama pull` names them (sha256sum of the bytes below; the generator does
// not hash with the library under test). tests/conventions/fixture_files_test.cpp checks each name
// against its bytes, so a change to a blob's content fails there until its digest is updated here.
const char kBlobA[] = "b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42";
const char kBlobB[] = "5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7";
}  // namespace

std::vector<SampleFile> build_convention_fixtures() {
  std::vector<SampleFile> out;
  MlxFixture m = mlx_fixture();
  out.push_back({"mlx/model.safetensors", serialize_raw(m.tensors, m.data_order, {{"format", "mlx"}}, false)});
  out.push_back({"mlx/config.json", bytes_of(m.config_json)});
  MlxFixture mb = mlx_bits_fixture();
  out.push_back({"mlx-bits/model.safetensors", serialize_raw(mb.tensors, mb.data_order, {{"format", "mlx"}}, false)});
  out.push_back({"mlx-bits/config.json", bytes_of(mb.config_json)});
  OllamaFixture o = ollama_fixture(), e = ollama_experts_fixture();
  const std::vector<uint8_t> blob_a = serialize_raw(o.tensors, key_order(o.tensors.size()), o.metadata, true);
  const std::vector<uint8_t> blob_b = serialize_raw(e.tensors, key_order(e.tensors.size()), e.metadata, true);
  out.push_back({std::string("ollama/blobs/sha256-") + kBlobA, blob_a});
  out.push_back({std::string("ollama/blobs/sha256-") + kBlobB, blob_b});
  auto layer = [](const char* hex, size_t size, const std::string& name) {
    return "{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + std::string(hex) +
           "\",\"size\":" + std::to_string(size) + ",\"name\":\"" + name + "\"}";
  };
  const std::string manifest =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
      "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
      std::string(64, '0') + "\",\"size\":2},\"layers\":[" + layer(kBlobA, blob_a.size(), "a.weight") + "," +
      layer(kBlobB, blob_b.size(), "model.layers.0.mlp.experts") + "]}\n";
  out.push_back({"ollama/manifest.json", bytes_of(manifest)});
  ShardedFixture sf = sharded_fixture();
  for (size_t s = 0; s < sf.shards.size(); ++s)
    out.push_back({"sharded-mlx/" + shard_file_name(s, sf.shards.size()),
                   serialize_raw(sf.shards[s].tensors, sf.shards[s].data_order, {{"format", "mlx"}}, false)});
  out.push_back({"sharded-mlx/model.safetensors.index.json", bytes_of(shard_index_json(sf.total_size, sf.weight_map))});
  out.push_back({"sharded-mlx/config.json", bytes_of(sf.config_json)});
  MlxFixture mo = mlx_overrides_fixture();
  out.push_back({"mlx-overrides/model.safetensors", mlx_file_bytes(mo)});
  out.push_back({"mlx-overrides/config.json", bytes_of(mo.config_json)});
  const OllamaInferredFixture oi = ollama_inferred_fixture();
  out.push_back({"ollama-inferred/blobs/" + ollama_blob_file(kInferredBlobA), ollama_blob_bytes(oi.plain)});
  out.push_back({"ollama-inferred/blobs/" + ollama_blob_file(kInferredBlobB), ollama_blob_bytes(oi.named)});
  out.push_back({"ollama-inferred/manifest.json", bytes_of(oi.manifest_json)});
  for (SampleFile& f : build_uqff_fixtures()) out.push_back(std::move(f));  // uqff_fixtures.h
  for (SampleFile& f : build_malformed_fixtures()) out.push_back(std::move(f));  // malformed_fixtures.h
  for (SampleFile& f : build_hub_fixtures()) out.push_back(std::move(f));  // hub_fixtures.h
  return out;
}

}  // namespace samplegen
