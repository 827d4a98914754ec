#include "model_gen.h"

#include <string.h>

#include <string>

namespace mcu {
namespace {

struct Rng {  // SplitMix64
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

void u32(std::vector<uint8_t>& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(uint8_t(x >> (8 * i)));
}
void u64(std::vector<uint8_t>& v, uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(uint8_t(x >> (8 * i)));
}
void gstr(std::vector<uint8_t>& v, const std::string& s) {
  u64(v, s.size());
  v.insert(v.end(), s.begin(), s.end());
}
// A finite fp16 scale in [2^-7, 2^-4): exponent 8..10, random mantissa.
uint16_t scale16(Rng& r) { return uint16_t(((8 + r.next() % 3) << 10) | (r.next() & 0x3FF)); }

}  // namespace

std::vector<uint8_t> make_gguf() {
  Rng r{0x5747534Du};  // "WSGM"
  std::vector<uint8_t> v;
  for (char c : {'G', 'G', 'U', 'F'}) v.push_back(uint8_t(c));
  u32(v, 3);   // version
  u64(v, 2);   // tensors
  u64(v, 2);   // kv
  gstr(v, "general.architecture");
  u32(v, 8);   // string
  gstr(v, "llama");
  gstr(v, "general.alignment");
  u32(v, 4);   // u32
  u32(v, 32);
  // tensor infos: name, n_dims, ne[], type, offset
  const uint64_t q4_elems = 64 * 8, q8_elems = 64 * 4;
  const uint64_t q4_bytes = q4_elems / 32 * 18, q8_bytes = q8_elems / 32 * 34;  // 288, 272
  gstr(v, "blk.0.attn_q.weight");
  u32(v, 2); u64(v, 64); u64(v, 8);
  u32(v, 2);   // Q4_0
  u64(v, 0);
  gstr(v, "blk.0.ffn_down.weight");
  u32(v, 2); u64(v, 64); u64(v, 4);
  u32(v, 8);   // Q8_0
  u64(v, q4_bytes);  // 288: a multiple of 32
  while (v.size() % 32) v.push_back(0);
  for (uint64_t b = 0; b < q4_elems / 32; ++b) {
    uint16_t d = scale16(r);
    v.push_back(uint8_t(d)); v.push_back(uint8_t(d >> 8));
    for (int i = 0; i < 16; ++i) v.push_back(uint8_t(r.next()));
  }
  for (uint64_t b = 0; b < q8_elems / 32; ++b) {
    uint16_t d = scale16(r);
    v.push_back(uint8_t(d)); v.push_back(uint8_t(d >> 8));
    for (int i = 0; i < 32; ++i) v.push_back(uint8_t(r.next()));
  }
  (void)q8_bytes;
  return v;
}

std::vector<uint8_t> make_safetensors() {
  Rng r{0x57535354u};  // "WSST"
  // 16x32 BF16 (1024 bytes), then 32 F32 (128 bytes).
  std::string h =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[16,32],\"data_offsets\":[0,1024]},"
      "\"model.norm.weight\":{\"dtype\":\"F32\",\"shape\":[32],\"data_offsets\":[1024,1152]}}";
  while (h.size() % 8) h.push_back(' ');
  std::vector<uint8_t> v;
  u64(v, h.size());
  v.insert(v.end(), h.begin(), h.end());
  for (int i = 0; i < 16 * 32; ++i) {
    // Finite BF16 in roughly [-2, 2]: exponent 117..127, random sign and mantissa.
    uint16_t b = uint16_t(((r.next() & 1) << 15) | ((117 + r.next() % 11) << 7) | (r.next() & 0x7F));
    v.push_back(uint8_t(b)); v.push_back(uint8_t(b >> 8));
  }
  for (int i = 0; i < 32; ++i) {
    float f = 1.0f + float(r.next() % 1000) / 4096.0f;
    uint32_t u;
    memcpy(&u, &f, 4);
    u32(v, u);
  }
  return v;
}

ShardedModel make_sharded() {
  // The data of make_safetensors(), split: its header is the whole-file one, so recompute.
  const std::vector<uint8_t> whole = make_safetensors();
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | whole[size_t(i)];
  const uint8_t* data = whole.data() + 8 + n;
  auto shard = [](const std::string& entry, const uint8_t* bytes, size_t size) {
    std::string h = "{" + entry + "}";
    while (h.size() % 8) h.push_back(' ');
    std::vector<uint8_t> v;
    u64(v, h.size());
    v.insert(v.end(), h.begin(), h.end());
    v.insert(v.end(), bytes, bytes + size);
    return v;
  };
  ShardedModel m;
  m.shard1 = shard("\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[16,32],\"data_offsets\":[0,1024]}",
                   data, 1024);
  m.shard2 = shard("\"model.norm.weight\":{\"dtype\":\"F32\",\"shape\":[32],\"data_offsets\":[0,128]}", data + 1024, 128);
  const std::string index =
      "{\"metadata\": {\"total_size\": 1152}, \"weight_map\": {"
      "\"model.embed_tokens.weight\": \"model-00001-of-00002.safetensors\", "
      "\"model.norm.weight\": \"model-00002-of-00002.safetensors\"}}";
  m.index.assign(index.begin(), index.end());
  return m;
}

Fp8Model make_fp8() {
  Rng r{0x57534638u};  // "WSF8"
  constexpr uint32_t kOut = 130, kIn = 200;  // 2 x 2 blocks of 128, the last ones partial
  std::string h =
      "{\"model.layers.0.mlp.down_proj.weight\":{\"dtype\":\"F8_E4M3\",\"shape\":[130,200],\"data_offsets\":[0,26000]},"
      "\"model.layers.0.mlp.down_proj.weight_scale_inv\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[26000,26016]},"
      "\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[8],\"data_offsets\":[26016,26032]}}";
  while (h.size() % 8) h.push_back(' ');
  Fp8Model m;
  u64(m.shard, h.size());
  m.shard.insert(m.shard.end(), h.begin(), h.end());
  for (uint32_t i = 0; i < kOut * kIn; ++i) {
    // Any E4M3 byte but NaN (0x7F / 0xFF): the checkpoint's values, subnormals and zeros included.
    uint8_t b = uint8_t(r.next());
    if ((b & 0x7F) == 0x7F) b ^= 0x01;
    m.shard.push_back(b);
  }
  for (int i = 0; i < 4; ++i) {  // scale_inv: a power of two times a random mantissa, ~1e-3
    const float f = (1.0f + float(r.next() % 4096) / 4096.0f) / 1024.0f;
    uint32_t u;
    memcpy(&u, &f, 4);
    u32(m.shard, u);
  }
  for (int i = 0; i < 8; ++i) {
    const uint16_t b = uint16_t((127 << 7) | (r.next() & 0x7F));  // BF16 in [1, 2)
    m.shard.push_back(uint8_t(b));
    m.shard.push_back(uint8_t(b >> 8));
  }
  const std::string index =
      "{\"metadata\": {\"total_size\": 26032}, \"weight_map\": {"
      "\"model.layers.0.mlp.down_proj.weight\": \"model-00001-of-00001.safetensors\", "
      "\"model.layers.0.mlp.down_proj.weight_scale_inv\": \"model-00001-of-00001.safetensors\", "
      "\"model.norm.weight\": \"model-00001-of-00001.safetensors\"}}";
  m.index.assign(index.begin(), index.end());
  const std::string config =
      "{\"architectures\": [\"Qwen3ForCausalLM\"], \"quantization_config\": {\"activation_scheme\": \"dynamic\", "
      "\"fmt\": \"e4m3\", \"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}}";
  m.config.assign(config.begin(), config.end());
  return m;
}

}  // namespace mcu
