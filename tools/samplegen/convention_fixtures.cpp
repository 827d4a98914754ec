// ws-make-samples — convention fixtures (see convention_fixtures.h).
#include "convention_fixtures.h"

#include <string.h>

#include <algorithm>

#include "half_float.h"
#include "safetensors_writer.h"

namespace samplegen {

namespace {

// Deterministic bytes: xorshift32 per fixture tensor.
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  uint32_t x = seed * 747796405u + 2891336453u;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = uint8_t(x >> 7);
  }
  return out;
}

uint64_t count(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

RawTensor packed(const std::string& name, std::vector<uint64_t> shape, uint32_t seed) {
  return RawTensor{name, "U32", shape, random_bytes(count(shape) * 4, seed)};
}

// Float scales/biases with exactly representable values: (i%5 + 1)/16 (scales) or -(i%3)/4.
RawTensor floats(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape,
                 bool bias) {
  RawTensor t{name, dtype, shape, {}};
  for (uint64_t i = 0; i < count(shape); ++i) {
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
  for (uint64_t i = 0; i < count(shape); ++i)
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
  const std::string hex = "4f1d0e7b9c2a5d3e8f607182a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6";
  f.manifest_json =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
      "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + hex +
      "\",\"size\":0,\"name\":\"a.weight\"}]}";
  return f;
}

std::vector<SampleFile> build_convention_fixtures() {
  std::vector<SampleFile> out;
  MlxFixture m = mlx_fixture();
  out.push_back({"mlx/model.safetensors", serialize_raw(m.tensors, m.data_order, {{"format", "mlx"}}, false)});
  out.push_back({"mlx/config.json", std::vector<uint8_t>(m.config_json.begin(), m.config_json.end())});
  OllamaFixture o = ollama_fixture();
  std::vector<size_t> order;
  for (size_t i = 0; i < o.tensors.size(); ++i) order.push_back(i);
  out.push_back({"ollama/blob.safetensors", serialize_raw(o.tensors, order, o.metadata, true)});
  out.push_back({"ollama/manifest.json", std::vector<uint8_t>(o.manifest_json.begin(), o.manifest_json.end())});
  return out;
}

}  // namespace samplegen
