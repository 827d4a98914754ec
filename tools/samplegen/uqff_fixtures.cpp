// ws-make-samples — UQFF fixtures (see uqff_fixtures.h).
#include "uqff_fixtures.h"

#include <string.h>

#include <algorithm>

#include "half_float.h"
#include "prng.h"

namespace samplegen {

namespace {

std::vector<uint8_t> noise(size_t n, uint32_t seed) { return xorshift32_bytes(n, seed * 2654435761u + 12345u, 11); }

void put16(std::vector<uint8_t>* b, size_t at, uint16_t v) {
  (*b)[at] = uint8_t(v);
  (*b)[at + 1] = uint8_t(v >> 8);
}
void push32(std::vector<uint8_t>* b, uint32_t v) {
  for (int k = 0; k < 4; ++k) b->push_back(uint8_t(v >> (8 * k)));
}

RawTensor u8_scalar(const std::string& name, uint8_t v) { return RawTensor{name, "U8", {}, {v}}; }
RawTensor u32_scalar(const std::string& name, uint32_t v) {
  RawTensor t{name, "U32", {}, {}};
  push32(&t.data, v);
  return t;
}
RawTensor u32_vector(const std::string& name, const std::vector<uint32_t>& v) {
  RawTensor t{name, "U32", {v.size()}, {}};
  for (uint32_t x : v) push32(&t.data, x);
  return t;
}
// Exactly representable float values: (i%7 + 1)/32 for scales, -(i%3)/8 for biases and dense.
RawTensor floats(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape, bool negative) {
  RawTensor t{name, dtype, shape, {}};
  for (uint64_t i = 0; i < element_count(shape); ++i) {
    const float v = negative ? -float(i % 3) / 8.0f + float(i % 5) / 4.0f : float(i % 7 + 1) / 32.0f;
    if (dtype == "F32") {
      uint32_t b;
      memcpy(&b, &v, 4);
      push32(&t.data, b);
    } else {
      const uint16_t h = dtype == "BF16" ? float_to_bf16(v) : float_to_f16(v);
      t.data.push_back(uint8_t(h));
      t.data.push_back(uint8_t(h >> 8));
    }
  }
  return t;
}

// GGML blocks with random quants and finite fp16 scales (ggml's row validation rejects inf/NaN):
// d (and dmin) at the offsets ggml-common.h gives, values 2^-6 .. 2^-3.
std::vector<uint8_t> ggml_blocks(uint32_t type, uint64_t blocks, uint32_t seed) {
  const uint32_t size = type == 2 ? 18 : type == 8 ? 34 : 144;  // Q4_0, Q8_0, Q4_K
  std::vector<uint8_t> b = noise(size * blocks, seed);
  for (uint64_t i = 0; i < blocks; ++i) {
    put16(&b, size * i, float_to_f16(float(1 + i % 8) / 64.0f));
    if (type == 12) put16(&b, size * i + 2, float_to_f16(float(1 + i % 4) / 128.0f));
  }
  return b;
}

void gguf_layer(std::vector<RawTensor>* out, const std::string& key, uint32_t type, uint32_t rows, uint32_t cols,
                uint32_t seed) {
  const uint32_t elems = type == 12 ? 256 : 32;
  out->push_back(RawTensor{key + ".weight", "U8", {}, ggml_blocks(type, uint64_t(rows) * cols / elems, seed)});
  out->back().shape = {out->back().data.size()};
  out->push_back(u8_scalar(key + ".weight.format", 0));
  out->push_back(u32_scalar(key + ".weight.dtype", type));
  out->push_back(u32_vector(key + ".weight.shape", {rows, cols}));
}

// Afq = MLX affine: U32 packed [rows, K*bits/32], scales and biases [rows, K/group].
void afq_layer(std::vector<RawTensor>* out, const std::string& key, uint32_t bits, uint32_t group,
               const std::string& sdtype, uint32_t rows, uint32_t k, uint32_t seed) {
  const uint64_t words = uint64_t(k) * bits / 32;
  out->push_back(RawTensor{key + ".weight", "U32", {rows, words}, noise(rows * words * 4, seed)});
  out->push_back(floats(key + ".weight.scales", sdtype, {rows, k / group}, false));
  out->push_back(floats(key + ".weight.biases", sdtype, {rows, k / group}, true));
  out->push_back(u8_scalar(key + ".weight.format", 4));
  out->push_back(u8_scalar(key + ".weight.bits", uint8_t(bits)));
  out->push_back(u8_scalar(key + ".weight.group_size", uint8_t(group)));
}

// F8Q8: 33-byte blocks {e4m3 d; i8 qs[32]}; d bytes 0x28..0x47 (finite, never 0x7F/0xFF). The
// flattened weight is padded to whole blocks, as mistral.rs's from_weight pads it (with zeros
// before quantizing; here the padding's codes are noise, which the reader must drop anyway).
void f8q8_layer(std::vector<RawTensor>* out, const std::string& key, const std::vector<uint32_t>& shape, uint32_t seed) {
  uint32_t elements = 1;
  for (uint32_t d : shape) elements *= d;
  const uint32_t blocks = (elements + 31) / 32;
  std::vector<uint8_t> b = noise(33 * blocks, seed);
  for (uint32_t i = 0; i < blocks; ++i) b[33 * i] = uint8_t(0x28 + (i * 11) % 0x20);
  out->push_back(RawTensor{key + ".weight", "U8", {b.size()}, b});
  out->push_back(u8_scalar(key + ".weight.format", 5));
  out->push_back(u32_scalar(key + ".weight.num_blocks", blocks));
  out->push_back(u32_vector(key + ".weight.shape", shape));
}
void f8q8_layer(std::vector<RawTensor>* out, const std::string& key, uint32_t rows, uint32_t cols, uint32_t seed) {
  f8q8_layer(out, key, {rows, cols}, seed);
}

void version_tensors(std::vector<RawTensor>* out, uint32_t major, uint32_t minor, uint32_t patch) {
  out->push_back(u32_scalar("uqff.version.major", major));
  out->push_back(u32_scalar("uqff.version.minor", minor));
  out->push_back(u32_scalar("uqff.version.patch", patch));
}

// Mxfp4: U8 [rows, K/2] nibbles, U8 E8M0 scales [rows, K/32] around 2^0 (124..130).
void mxfp4_layer(std::vector<RawTensor>* out, const std::string& key, uint32_t rows, uint32_t k, uint32_t seed) {
  out->push_back(RawTensor{key + ".weight", "U8", {rows, k / 2}, noise(rows * k / 2, seed)});
  RawTensor s{key + ".weight.scales", "U8", {rows, k / 32}, {}};
  for (uint32_t i = 0; i < rows * k / 32; ++i) s.data.push_back(uint8_t(124 + i % 7));
  out->push_back(s);
  out->push_back(u8_scalar(key + ".weight.format", 6));
}

// Position of a dtype in the reference crate's enum: its writer sorts by it, descending.
int dtype_rank(const std::string& d) {
  static const char* const kOrder[] = {"BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3",
                                       "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16",
                                       "I32", "U32", "F32", "C64", "F64", "I64", "U64"};
  for (int i = 0; i < int(sizeof kOrder / sizeof kOrder[0]); ++i)
    if (d == kOrder[i]) return i;
  return -1;
}

std::vector<RawTensor> writer_order(std::vector<RawTensor> t) {
  std::stable_sort(t.begin(), t.end(), [](const RawTensor& a, const RawTensor& b) {
    const int ra = dtype_rank(a.dtype), rb = dtype_rank(b.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  return t;
}

const std::string L = "model.layers.0.";

}  // namespace

UqffFixture uqff_fixture() {
  UqffFixture f;
  UqffFile s0{"model-0.uqff", {}}, s1{"model-1.uqff", {}}, res{"residual.safetensors", {}};
  s0.tensors.push_back(u32_scalar("uqff.version.major", 1));
  s0.tensors.push_back(u32_scalar("uqff.version.minor", 2));
  s0.tensors.push_back(u32_scalar("uqff.version.patch", 0));
  gguf_layer(&s0.tensors, L + "self_attn.q_proj", 2, 4, 64, 21);   // Q4_0: 8 blocks
  gguf_layer(&s0.tensors, L + "self_attn.k_proj", 8, 2, 64, 22);   // Q8_0: 4 blocks
  gguf_layer(&s0.tensors, L + "self_attn.v_proj", 12, 2, 256, 23); // Q4_K: 2 blocks
  s0.tensors.push_back(floats(L + "self_attn.o_proj.weight", "BF16", {4, 8}, true));  // Unquant
  s0.tensors.push_back(u8_scalar(L + "self_attn.o_proj.weight.format", 1));
  s0.tensors.push_back(floats(L + "self_attn.o_proj.bias", "F32", {4}, true));  // a layer's .bias
  afq_layer(&s1.tensors, L + "mlp.gate_proj", 4, 32, "BF16", 2, 64, 31);
  afq_layer(&s1.tensors, L + "mlp.up_proj", 3, 32, "F16", 2, 64, 32);
  f8q8_layer(&s1.tensors, L + "mlp.down_proj", 2, 64, 33);
  mxfp4_layer(&s1.tensors, L + "mlp.experts.gate_up_proj", 2, 64, 34);
  res.tensors.push_back(floats("model.embed_tokens.weight", "BF16", {8, 4}, true));
  res.tensors.push_back(floats("model.norm.weight", "F32", {4}, false));
  res.tensors.push_back(floats("lm_head.weight", "F16", {8, 4}, true));
  f.files = {s0, s1, res};
  f.config_json =
      "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
      "  \"hidden_size\": 64,\n  \"num_hidden_layers\": 1,\n  \"vocab_size\": 8\n}\n";
  return f;
}

UqffFixture uqff_f8q8_fixture() {
  UqffFixture f;
  UqffFile s0{"model-0.uqff", {}}, s1{"model-1.uqff", {}}, res{"residual.safetensors", {}};
  version_tensors(&s0.tensors, 1, 2, 0);
  f8q8_layer(&s0.tensors, L + "self_attn.q_proj", {3, 20}, 41);              // 60 values: 2 blocks
  f8q8_layer(&s0.tensors, L + "self_attn.k_proj", {1, 32}, 42);              // 32 values: 1 block
  version_tensors(&s1.tensors, 1, 2, 0);                                       // the same, again
  f8q8_layer(&s1.tensors, L + "mlp.experts.down_proj", {2, 3, 7}, 43);       // 42 values: 2 blocks
  f8q8_layer(&s1.tensors, L + "mlp.gate_proj", {5, 5}, 44);                  // 25 values: 1 block
  res.tensors.push_back(floats("model.norm.weight", "F32", {4}, false));
  f.files = {s0, s1, res};
  f.config_json =
      "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
      "  \"hidden_size\": 32,\n  \"num_hidden_layers\": 1\n}\n";
  return f;
}

std::vector<uint8_t> uqff_file_bytes(const UqffFile& f) {
  const std::vector<RawTensor> t = writer_order(f.tensors);
  std::vector<size_t> order;
  for (size_t i = 0; i < t.size(); ++i) order.push_back(i);
  return serialize_raw(t, order, {}, true);
}

uint64_t uqff_entry_offset(const UqffFile& f, const std::string& name) {
  const std::vector<uint8_t> b = uqff_file_bytes(f);
  const std::string s(b.begin(), b.end()), q = "\"" + name + "\"";
  const size_t at = s.find(q);
  return at == std::string::npos ? ~0ull : at;
}

uint64_t uqff_data_offset(const UqffFile& f, const std::string& name) {
  const std::vector<uint8_t> b = uqff_file_bytes(f);
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(b[k]) << (8 * k);
  uint64_t at = 8 + n;
  for (const RawTensor& t : writer_order(f.tensors)) {
    if (t.name == name) return at;
    at += t.data.size();
  }
  return ~0ull;
}

RawTensor* uqff_find(UqffFixture* f, const std::string& name, size_t* file) {
  for (size_t i = 0; i < f->files.size(); ++i)
    for (RawTensor& t : f->files[i].tensors)
      if (t.name == name) {
        if (file) *file = i;
        return &t;
      }
  return nullptr;
}

bool uqff_drop(UqffFixture* f, const std::string& name) {
  for (UqffFile& file : f->files)
    for (size_t i = 0; i < file.tensors.size(); ++i)
      if (file.tensors[i].name == name) {
        file.tensors.erase(file.tensors.begin() + long(i));
        return true;
      }
  return false;
}

std::vector<UqffVariant> uqff_malformed_variants() {
  std::vector<UqffVariant> out;
  auto add = [&](const std::string& name, const std::string& status, size_t file, const std::string& tensor,
                 bool data, const std::string& detail, auto edit) {
    UqffVariant v{name, uqff_fixture(), status, file, tensor, "", data, detail};
    edit(&v.fixture);
    out.push_back(v);
  };
  const std::string q = L + "self_attn.q_proj", gate = L + "mlp.gate_proj", up = L + "mlp.up_proj";
  const std::string ex = L + "mlp.experts.gate_up_proj", down = L + "mlp.down_proj";
  add("missing-version", "UqffMissingVersion", 0, "uqff.version.minor", false, "",
      [](UqffFixture* f) { uqff_drop(f, "uqff.version.minor"); });
  add("major-2", "UqffMajorVersion", 0, "uqff.version.major", true, "",
      [](UqffFixture* f) { *uqff_find(f, "uqff.version.major") = u32_scalar("uqff.version.major", 2); });
  add("major-0", "UqffMajorVersion", 0, "uqff.version.major", true, "",
      [](UqffFixture* f) { *uqff_find(f, "uqff.version.major") = u32_scalar("uqff.version.major", 0); });
  add("minor-3", "UqffMinorVersionTooNew", 0, "uqff.version.minor", true, "",
      [](UqffFixture* f) { *uqff_find(f, "uqff.version.minor") = u32_scalar("uqff.version.minor", 3); });
  add("version-vector", "UqffVersionNotScalar", 0, "uqff.version.patch", false, "",
      [](UqffFixture* f) { *uqff_find(f, "uqff.version.patch") = u32_vector("uqff.version.patch", {0}); });
  add("version-u8", "UqffVersionNotScalar", 0, "uqff.version.major", false, "",
      [](UqffFixture* f) { *uqff_find(f, "uqff.version.major") = u8_scalar("uqff.version.major", 1); });
  add("duplicate-key", "UqffDuplicateKey", 2, "model.norm.weight", false, "", [](UqffFixture* f) {
    f->files[1].tensors.push_back(floats("model.norm.weight", "F32", {4}, false));
  });
  add("pre-1.0", "UqffPreV1", 0, "0", false, "", [](UqffFixture* f) {
    f->files[0].tensors = {RawTensor{"0", "U8", {16}, noise(16, 1)}, RawTensor{"1", "U8", {8}, noise(8, 2)}};
  });
  add("format-u32", "UqffFormatNotScalar", 1, up + ".weight.format", false, "", [&](UqffFixture* f) {
    *uqff_find(f, up + ".weight.format") = u32_scalar(up + ".weight.format", 4);
  });
  add("tag-7", "UqffUnknownFormatTag", 1, ex + ".weight.format", true, "",
      [&](UqffFixture* f) { uqff_find(f, ex + ".weight.format")->data = {7}; });
  add("tag-mismatch", "UqffFormatTagMismatch", 1, ex + ".weight.format", true, "",
      [&](UqffFixture* f) { uqff_find(f, ex + ".weight.format")->data = {4}; });
  add("afq-missing-group", "UqffMissingCompanion", 1, gate + ".weight", false, ".weight.group_size",
      [&](UqffFixture* f) { uqff_drop(f, gate + ".weight.group_size"); });
  add("gguf-extra-zeros", "UqffUnexpectedCompanion", 0, q + ".weight.zeros", false, ".weight.zeros",
      [&](UqffFixture* f) { f->files[0].tensors.push_back(RawTensor{q + ".weight.zeros", "U8", {4}, noise(4, 3)}); });
  add("unknown-suffix", "UqffUnexpectedCompanion", 1, down + ".weight.extra", false, ".weight.extra",
      [&](UqffFixture* f) { f->files[1].tensors.push_back(u8_scalar(down + ".weight.extra", 0)); });
  add("hqq", "UqffUnsupportedType", 1, L + "mlp.hqq_proj.weight", false, "hqq", [](UqffFixture* f) {
    const std::string k = L + "mlp.hqq_proj";
    std::vector<RawTensor>& t = f->files[1].tensors;
    t.push_back(RawTensor{k + ".weight", "U8", {32}, noise(32, 5)});
    t.push_back(u8_scalar(k + ".weight.format", 2));
    t.push_back(floats(k + ".weight.scales", "F16", {2}, false));
    t.push_back(floats(k + ".weight.zeros", "F16", {2}, false));
    t.push_back(u32_vector(k + ".weight.shape", {2, 32}));
    t.push_back(u8_scalar(k + ".weight.bits", 4));
    t.push_back(u32_scalar(k + ".weight.group_size", 32));
    t.push_back(u8_scalar(k + ".weight.axis", 0));
  });
  add("fp8", "UqffUnsupportedType", 1, L + "mlp.fp8_proj.weight", false, "fp8", [](UqffFixture* f) {
    const std::string k = L + "mlp.fp8_proj";
    std::vector<RawTensor>& t = f->files[1].tensors;
    t.push_back(RawTensor{k + ".weight", "F8_E4M3", {2, 32}, noise(64, 6)});
    t.push_back(u8_scalar(k + ".weight.format", 3));
    t.push_back(floats(k + ".weight.dequant_w_scale", "F32", {}, false));
    t.push_back(floats(k + ".weight.dequant_x_scale", "F32", {}, false));
    t.push_back(floats(k + ".weight.quant_scale", "F32", {}, false));
    t.push_back(u32_scalar(k + ".weight.dtype", 0));
  });
  add("orphan-scales", "ConventionOrphanCompanion", 2, "model.norm.weight.scales", false, "", [](UqffFixture* f) {
    f->files[2].tensors.push_back(floats("model.norm.weight.scales", "F32", {1}, false));
  });
  add("afq-bits-5", "ConventionBitsNotAllowed", 1, up + ".weight.bits", true, "",
      [&](UqffFixture* f) { uqff_find(f, up + ".weight.bits")->data = {5}; });
  add("afq-group-16", "ConventionBitsNotAllowed", 1, gate + ".weight.group_size", true, "",
      [&](UqffFixture* f) { uqff_find(f, gate + ".weight.group_size")->data = {16}; });
  add("gguf-retired-type", "GgufRetiredType", 0, q + ".weight.dtype", true, "",
      [&](UqffFixture* f) { *uqff_find(f, q + ".weight.dtype") = u32_scalar(q + ".weight.dtype", 4); });
  add("gguf-size-mismatch", "ConventionCompanionShape", 0, q + ".weight", false, "",
      [&](UqffFixture* f) { *uqff_find(f, q + ".weight.shape") = u32_vector(q + ".weight.shape", {4, 96}); });
  // 2 x 64 values take 4 blocks: 5 is one too many (mistral.rs writes ceil(elements / 32)).
  add("f8q8-num-blocks", "UqffNumBlocksMismatch", 1, down + ".weight.num_blocks", true, "",
      [&](UqffFixture* f) { *uqff_find(f, down + ".weight.num_blocks") = u32_scalar(down + ".weight.num_blocks", 5); });
  out.back().found = 5;
  out.back().expected = 4;
  // Errors about a layer's companion values name the layer (`<key>.weight`, as the MLX and Ollama
  // layers do) and give the offset of the companion at fault.
  const std::pair<const char*, std::string> kAt[] = {
      {"format-u32", up + ".weight.format"},        {"tag-7", ex + ".weight.format"},
      {"tag-mismatch", ex + ".weight.format"},      {"afq-bits-5", up + ".weight.bits"},
      {"afq-group-16", gate + ".weight.group_size"}, {"gguf-retired-type", q + ".weight.dtype"},
      {"f8q8-num-blocks", down + ".weight.num_blocks"},
  };
  for (UqffVariant& v : out) {
    for (const auto& a : kAt) {
      if (v.name != a.first) continue;
      v.at = a.second;
      v.tensor = a.second.substr(0, a.second.find(".weight") + 7);
    }
  }
  return out;
}

std::vector<UqffVariant> uqff_f8q8_variants() {
  std::vector<UqffVariant> out;
  const std::string q = L + "self_attn.q_proj", ex = L + "mlp.experts.down_proj";
  auto add = [&](const std::string& name, const std::string& status, size_t file, const std::string& tensor,
                 const std::string& at, bool data, int64_t found, int64_t expected, auto edit) {
    UqffVariant v{name, uqff_f8q8_fixture(), status, file, tensor, at, data, "", found, expected};
    edit(&v.fixture);
    out.push_back(v);
  };
  // [3, 20] = 60 values need 2 blocks (the last one padded): 1 cannot hold them.
  add("f8q8-blocks-short", "UqffNumBlocksMismatch", 0, q + ".weight", q + ".weight.num_blocks", true, 1, 2,
      [&](UqffFixture* f) { *uqff_find(f, q + ".weight.num_blocks") = u32_scalar(q + ".weight.num_blocks", 1); });
  // [2, 3, 7] = 42 values take 2 blocks: 3 is not what mistral.rs writes.
  add("f8q8-blocks-long", "UqffNumBlocksMismatch", 1, ex + ".weight", ex + ".weight.num_blocks", true, 3, 2,
      [&](UqffFixture* f) { *uqff_find(f, ex + ".weight.num_blocks") = u32_scalar(ex + ".weight.num_blocks", 3); });
  // model-1.uqff's copy says 1.1.0, model-0.uqff's 1.2.0: an error at the copy's data.
  add("version-copy-differs", "UqffVersionMismatch", 1, "uqff.version.minor", "", true, 1, 2, [](UqffFixture* f) {
    for (RawTensor& t : f->files[1].tensors)
      if (t.name == "uqff.version.minor") t = u32_scalar("uqff.version.minor", 1);
  });
  add("version-copy-u8", "UqffVersionNotScalar", 1, "uqff.version.patch", "", false, -1, -1, [](UqffFixture* f) {
    for (RawTensor& t : f->files[1].tensors)
      if (t.name == "uqff.version.patch") t = u8_scalar("uqff.version.patch", 0);
  });
  return out;
}

std::vector<SampleFile> build_uqff_fixtures() {
  std::vector<SampleFile> out;
  for (const char* dir : {"uqff", "uqff-f8q8"}) {
    const UqffFixture f = std::string(dir) == "uqff" ? uqff_fixture() : uqff_f8q8_fixture();
    for (const UqffFile& file : f.files) out.push_back({std::string(dir) + "/" + file.name, uqff_file_bytes(file)});
    out.push_back({std::string(dir) + "/config.json", std::vector<uint8_t>(f.config_json.begin(), f.config_json.end())});
  }
  return out;
}

}  // namespace samplegen
