// Builds the synthetic headers declared in synth_header.h.
#include "synth_header.h"

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace wsbench {
namespace {

// The dtypes these models use, with their rank in the reference crate's enum: the writer sorts
// tensors by that rank, descending, so F32 scales come first, then BF16, then FP8 weights.
struct DTypeInfo {
  const char* name;
  int order;
  uint32_t bits;
};
constexpr DTypeInfo kU8{"U8", 4, 8};
constexpr DTypeInfo kF8E4M3{"F8_E4M3", 7, 8};
constexpr DTypeInfo kBF16{"BF16", 14, 16};
constexpr DTypeInfo kF32{"F32", 17, 32};

struct Spec {
  std::string name;
  const DTypeInfo* dtype;
  std::vector<uint64_t> shape;
};

void append_u64(std::string* out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

// Appends one compact tensor entry, `"name":{"dtype":...,"shape":[...],"data_offsets":[b,e]}`.
void append_entry(std::string* out, const std::string& name, const char* dtype,
                  const std::vector<uint64_t>& shape, uint64_t begin, uint64_t end) {
  out->push_back('"');
  out->append(name);
  out->append("\":{\"dtype\":\"");
  out->append(dtype);
  out->append("\",\"shape\":[");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out->push_back(',');
    append_u64(out, shape[i]);
  }
  out->append("],\"data_offsets\":[");
  append_u64(out, begin);
  out->push_back(',');
  append_u64(out, end);
  out->append("]}");
}

// The reference writer's metadata for PyTorch-saved files; real headers start with it.
const char kMetadataPrefix[] = "{\"__metadata__\":{\"format\":\"pt\"}";

// Pads the JSON with spaces to a multiple of 8 (as the reference writer does) and prepends the
// u64 LE length.
void finish_file(SynthHeader* h, const std::string& json) {
  std::string body = json;
  body.append((8 - body.size() % 8) % 8, ' ');
  h->header_size = body.size();
  h->bytes.clear();
  h->bytes.reserve(8 + body.size());
  for (int i = 0; i < 8; ++i) h->bytes.push_back(static_cast<char>((h->header_size >> (8 * i)) & 0xFF));
  h->bytes.append(body);
}

// Lays tensors out like the reference writer: sorted by (dtype descending, name), back to back.
SynthHeader build(const std::string& case_name, std::vector<Spec> specs) {
  std::sort(specs.begin(), specs.end(), [](const Spec& a, const Spec& b) {
    if (a.dtype->order != b.dtype->order) return a.dtype->order > b.dtype->order;
    return a.name < b.name;
  });
  SynthHeader h;
  h.name = case_name;
  std::string json;
  json.reserve(specs.size() * 136 + 64);
  json.append(kMetadataPrefix);
  uint64_t offset = 0;
  for (const Spec& s : specs) {
    uint64_t elements = 1;
    for (uint64_t d : s.shape) elements *= d;
    uint64_t bytes = elements * s.dtype->bits / 8;
    json.push_back(',');
    append_entry(&json, s.name, s.dtype->name, s.shape, offset, offset + bytes);
    offset += bytes;
    h.name_bytes += s.name.size();
  }
  json.push_back('}');
  h.tensors = static_cast<uint32_t>(specs.size());
  h.data_size = offset;
  finish_file(&h, json);
  return h;
}

std::string layer(int i) { return "model.layers." + std::to_string(i) + "."; }

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A DeepSeek FP8 linear: F8_E4M3 weight [out, in] and its F32 block scales [out/128, in/128].
void fp8_linear(std::vector<Spec>* v, const std::string& path, uint64_t out, uint64_t in) {
  v->push_back({path + ".weight", &kF8E4M3, {out, in}});
  v->push_back({path + ".weight_scale_inv", &kF32, {ceil_div(out, 128), ceil_div(in, 128)}});
}

}  // namespace

SynthHeader make_llama_70b() {
  // config.json of Llama-3.1-70B: hidden 8192, intermediate 28672, 64 heads, 8 KV heads of 128.
  const uint64_t H = 8192, I = 28672, KV = 8 * 128, V = 128256;
  std::vector<Spec> v;
  for (int l = 0; l < 80; ++l) {
    std::string p = layer(l);
    v.push_back({p + "input_layernorm.weight", &kBF16, {H}});
    v.push_back({p + "post_attention_layernorm.weight", &kBF16, {H}});
    v.push_back({p + "self_attn.q_proj.weight", &kBF16, {H, H}});
    v.push_back({p + "self_attn.k_proj.weight", &kBF16, {KV, H}});
    v.push_back({p + "self_attn.v_proj.weight", &kBF16, {KV, H}});
    v.push_back({p + "self_attn.o_proj.weight", &kBF16, {H, H}});
    v.push_back({p + "mlp.gate_proj.weight", &kBF16, {I, H}});
    v.push_back({p + "mlp.up_proj.weight", &kBF16, {I, H}});
    v.push_back({p + "mlp.down_proj.weight", &kBF16, {H, I}});
  }
  v.push_back({"model.embed_tokens.weight", &kBF16, {V, H}});
  v.push_back({"model.norm.weight", &kBF16, {H}});
  v.push_back({"lm_head.weight", &kBF16, {V, H}});
  return build("llama-70b", std::move(v));
}

SynthHeader make_deepseek_v3() {
  // config.json of DeepSeek-V3: hidden 7168, MLA (q_lora 1536, kv_lora 512, rope 64, 128 heads of
  // 128+64 / 128), dense intermediate 18432 in layers 0-2, 256 routed + 1 shared expert of 2048.
  const uint64_t H = 7168, V = 129280, DENSE = 18432, MOE = 2048, E = 256;
  std::vector<Spec> v;
  v.reserve(92000);
  for (int l = 0; l <= 61; ++l) {  // layer 61 is the multi-token-prediction module
    std::string p = layer(l);
    v.push_back({p + "input_layernorm.weight", &kBF16, {H}});
    v.push_back({p + "post_attention_layernorm.weight", &kBF16, {H}});
    fp8_linear(&v, p + "self_attn.q_a_proj", 1536, H);
    v.push_back({p + "self_attn.q_a_layernorm.weight", &kBF16, {1536}});
    fp8_linear(&v, p + "self_attn.q_b_proj", 128 * 192, 1536);
    fp8_linear(&v, p + "self_attn.kv_a_proj_with_mqa", 512 + 64, H);
    v.push_back({p + "self_attn.kv_a_layernorm.weight", &kBF16, {512}});
    fp8_linear(&v, p + "self_attn.kv_b_proj", 128 * (128 + 128), 512);
    fp8_linear(&v, p + "self_attn.o_proj", H, 128 * 128);
    if (l < 3) {
      fp8_linear(&v, p + "mlp.gate_proj", DENSE, H);
      fp8_linear(&v, p + "mlp.up_proj", DENSE, H);
      fp8_linear(&v, p + "mlp.down_proj", H, DENSE);
      continue;
    }
    v.push_back({p + "mlp.gate.weight", &kBF16, {E, H}});
    v.push_back({p + "mlp.gate.e_score_correction_bias", &kF32, {E}});
    for (uint64_t e = 0; e < E; ++e) {
      std::string x = p + "mlp.experts." + std::to_string(e) + ".";
      fp8_linear(&v, x + "gate_proj", MOE, H);
      fp8_linear(&v, x + "up_proj", MOE, H);
      fp8_linear(&v, x + "down_proj", H, MOE);
    }
    fp8_linear(&v, p + "mlp.shared_experts.gate_proj", MOE, H);
    fp8_linear(&v, p + "mlp.shared_experts.up_proj", MOE, H);
    fp8_linear(&v, p + "mlp.shared_experts.down_proj", H, MOE);
    if (l == 61) {
      v.push_back({p + "embed_tokens.weight", &kBF16, {V, H}});
      v.push_back({p + "enorm.weight", &kBF16, {H}});
      v.push_back({p + "hnorm.weight", &kBF16, {H}});
      v.push_back({p + "eh_proj.weight", &kBF16, {H, 2 * H}});
      v.push_back({p + "shared_head.norm.weight", &kBF16, {H}});
      v.push_back({p + "shared_head.head.weight", &kBF16, {V, H}});
    }
  }
  v.push_back({"model.embed_tokens.weight", &kBF16, {V, H}});
  v.push_back({"model.norm.weight", &kBF16, {H}});
  v.push_back({"lm_head.weight", &kBF16, {V, H}});
  return build("deepseek-v3", std::move(v));
}

SynthHeader make_flat(const std::string& case_name, uint64_t max_header_bytes) {
  // Written directly rather than through build(): 1.4 M Spec objects would only slow the setup.
  // Fixed-width names keep name order = numeric order = data order, as the writer would sort them.
  SynthHeader h;
  h.name = case_name;
  std::string json;
  json.reserve(max_header_bytes + 128);
  json.append(kMetadataPrefix);
  std::string entry;
  std::string name = "t0000000";
  const std::vector<uint64_t> shape{1};
  for (uint64_t i = 0;; ++i) {
    char digits[8];
    snprintf(digits, sizeof digits, "%07llu", static_cast<unsigned long long>(i % 10000000));
    name.replace(1, 7, digits);
    entry.assign(1, ',');
    append_entry(&entry, name, kU8.name, shape, i, i + 1);
    // +1 for the closing brace; padding to 8 only ever rounds down below the cap (see below).
    if (json.size() + entry.size() + 1 > max_header_bytes) break;
    json.append(entry);
    h.name_bytes += name.size();
    ++h.tensors;
    h.data_size = i + 1;
  }
  json.push_back('}');
  // Padding must not cross the cap: drop whole entries until the padded size fits.
  while (((json.size() + 7) & ~size_t(7)) > max_header_bytes) {
    size_t cut = json.rfind(",\"t");
    json.resize(cut);
    json.push_back('}');
    h.name_bytes -= name.size();
    --h.tensors;
    --h.data_size;
  }
  finish_file(&h, json);
  return h;
}

SynthHeader make_nesting(const std::string& case_name, uint32_t depth) {
  SynthHeader h;
  h.name = case_name;
  std::string json;
  json.reserve(2 * size_t(depth) + 128);
  json.append(kMetadataPrefix);
  json.append(",\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":");
  json.append(depth, '[');
  json.append(depth, ']');
  json.append("}}");
  h.tensors = 0;  // the header must be rejected
  finish_file(&h, json);
  return h;
}

}  // namespace wsbench
