// Builds the synthetic GGUF header declared in synth_gguf.h, in the key order llama.cpp's
// convert_hf_to_gguf.py writes.
//
// Contents:
//   - 30 KVs: general.* and llama.* hyper-parameters (strings, u32, f32), tokenizer.ggml.model
//     "gpt2" / pre "llama-bpe", bos/eos ids, a chat template, general.quantization_version and an
//     explicit general.alignment = 32 (so the reader's alignment check runs);
//   - tokenizer.ggml.tokens: 128,256 strings: GPT-2's 256 byte tokens (bytes_to_unicode), 127,744
//     merged tokens with byte-level BPE's shape (about half start with "Ġ", the escaped space; a
//     few are indentation runs or digits; 1-32 bytes, mean 6.9), and 256 special tokens
//     "<|...|>" from id 128,000;
//   - tokenizer.ggml.scores (f32) and tokenizer.ggml.token_type (i32), one per token;
//   - tokenizer.ggml.merges: 280,147 strings "left right", each a split of a merged token;
//   - 995 tensor infos: token_embd, output_norm, output, and 32 layers of attention (q/k/v/o,
//     norms) and an 8-expert MoE FFN with the experts unmerged (ffn_gate_inp, then ffn_gate.E,
//     ffn_down.E, ffn_up.E for E = 0..7): Q4_K weights, Q6_K for attn_v/ffn_down/output (the
//     Q4_K_M recipe), F32 norms and router; offsets are the running sum padded to 32.
// Randomness is a fixed-seed splitmix64: the same bytes on every run and machine.
#include "synth_gguf.h"

#include <stdio.h>
#include <string.h>

namespace wsbench {
namespace {

// GGUF value types (FORMATS.md §5).
enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kString = 8, kArray = 9 };
// GGML types used and their block geometry (elements, bytes per block), from FORMATS.md §5 rather
// than from the library, so that a library bug cannot hide in the generator.
struct GgmlType {
  uint32_t id, block_elems, block_bytes;
};
constexpr GgmlType kTF32{0, 1, 4}, kTQ4K{12, 256, 144}, kTQ6K{14, 256, 210};
constexpr uint32_t kAlignment = 32;

constexpr uint32_t kVocab = 128256, kFirstSpecial = 128000, kMerges = 280147;
constexpr uint32_t kLayers = 32, kExperts = 8, kEmbd = 4096, kFfn = 14336, kKvDim = 1024;

class Rng {  // splitmix64
 public:
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }

 private:
  uint64_t s_ = 0x5EED5EED5EED5EEDull;
};

class Writer {
 public:
  std::vector<uint8_t> out;
  uint64_t kvs = 0;

  void raw(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  void u32(uint32_t v) { raw(&v, 4); }  // GGUF is little-endian, like every host we run on
  void u64(uint64_t v) { raw(&v, 8); }
  void f32(float v) { raw(&v, 4); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void key(const char* k, uint32_t type) {
    ++kvs;
    str(k);
    u32(type);
  }
  void kv_str(const char* k, const std::string& v) {
    key(k, kString);
    str(v);
  }
  void kv_u32(const char* k, uint32_t v) {
    key(k, kU32);
    u32(v);
  }
  void kv_f32(const char* k, float v) {
    key(k, kF32);
    f32(v);
  }
  void array_header(const char* k, uint32_t elem_type, uint64_t count) {
    key(k, kArray);
    u32(elem_type);
    u64(count);
  }
};

// GPT-2's bytes_to_unicode(): byte b as the code point byte-level BPE vocabularies spell it in.
void append_utf8(std::string* s, uint32_t cp) {
  if (cp < 0x80) {
    s->push_back(char(cp));
  } else {
    s->push_back(char(0xC0 | (cp >> 6)));  // every code point used here is below 0x800
    s->push_back(char(0x80 | (cp & 0x3F)));
  }
}
uint32_t byte_to_codepoint(uint32_t b) {
  bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  if (printable) return b;
  uint32_t n = 0;  // the non-printable bytes map to 256, 257, ... in byte order
  for (uint32_t c = 0; c < b; ++c)
    if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255))) ++n;
  return 256 + n;
}

const char kSpace[] = "\xC4\xA0";  // "Ġ" = bytes_to_unicode(' ')

// One merged token as a list of characters (each one UTF-8 sequence), so that merges can split it
// between characters.
std::vector<std::string> merged_token(Rng& rng) {
  std::vector<std::string> chars;
  uint32_t kind = rng.below(100);
  if (kind < 4) {  // indentation: a run of escaped spaces
    for (uint32_t i = 0, n = 2 + rng.below(15); i < n; ++i) chars.push_back(kSpace);
    return chars;
  }
  if (kind < 7) {  // digits: tiktoken-style vocabularies hold up to 3-digit groups
    for (uint32_t i = 0, n = 1 + rng.below(3); i < n; ++i) chars.push_back(std::string(1, char('0' + rng.below(10))));
    return chars;
  }
  if (kind < 57) chars.push_back(kSpace);  // a word that follows a space
  // Letters: 1 + up to 3 + up to 6, mean 5.5, longer words rarer; a capital now and then. With
  // the rest this gives 6.9 bytes per token and 8.05 per merge, GPT-2's 7.1 and 8.1.
  uint32_t n = 1 + rng.below(4) + rng.below(7);
  for (uint32_t i = 0; i < n; ++i) {
    char c = char('a' + rng.below(26));
    if (i == 0 && rng.below(5) == 0) c = char(c - 'a' + 'A');
    chars.push_back(std::string(1, c));
  }
  return chars;
}

std::string special_token(uint32_t id) {
  switch (id) {
    case 128000: return "<|begin_of_text|>";
    case 128001: return "<|end_of_text|>";
    case 128006: return "<|start_header_id|>";
    case 128007: return "<|end_header_id|>";
    case 128008: return "<|eom_id|>";
    case 128009: return "<|eot_id|>";
    case 128010: return "<|python_tag|>";
    default: return "<|reserved_special_token_" + std::to_string(id - kFirstSpecial) + "|>";
  }
}

struct TensorSpec {
  std::string name;
  GgmlType type;
  std::vector<uint64_t> ne;  // ne[0] first, as GGUF stores dimensions
};

std::vector<TensorSpec> tensor_specs() {
  std::vector<TensorSpec> t;
  t.push_back({"token_embd.weight", kTQ4K, {kEmbd, kVocab}});
  for (uint32_t l = 0; l < kLayers; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    t.push_back({b + "attn_norm.weight", kTF32, {kEmbd}});
    t.push_back({b + "attn_q.weight", kTQ4K, {kEmbd, kEmbd}});
    t.push_back({b + "attn_k.weight", kTQ4K, {kEmbd, kKvDim}});
    t.push_back({b + "attn_v.weight", kTQ6K, {kEmbd, kKvDim}});
    t.push_back({b + "attn_output.weight", kTQ4K, {kEmbd, kEmbd}});
    t.push_back({b + "ffn_norm.weight", kTF32, {kEmbd}});
    t.push_back({b + "ffn_gate_inp.weight", kTF32, {kEmbd, kExperts}});
    for (uint32_t e = 0; e < kExperts; ++e) {
      std::string x = "." + std::to_string(e) + ".weight";
      t.push_back({b + "ffn_gate" + x, kTQ4K, {kEmbd, kFfn}});
      t.push_back({b + "ffn_down" + x, kTQ6K, {kFfn, kEmbd}});
      t.push_back({b + "ffn_up" + x, kTQ4K, {kEmbd, kFfn}});
    }
  }
  t.push_back({"output_norm.weight", kTF32, {kEmbd}});
  t.push_back({"output.weight", kTQ6K, {kEmbd, kVocab}});
  return t;
}

}  // namespace

SynthGguf make_llama3_moe_gguf() {
  Rng rng;
  // The vocabulary first: merges are drawn from it.
  std::vector<std::vector<std::string>> merged;  // ids 256 .. kFirstSpecial-1, as characters
  merged.reserve(kFirstSpecial - 256);
  for (uint32_t id = 256; id < kFirstSpecial; ++id) merged.push_back(merged_token(rng));

  std::vector<TensorSpec> specs = tensor_specs();
  Writer w;
  w.raw("GGUF", 4);
  w.u32(3);
  w.u64(specs.size());
  w.u64(0);  // KV count, patched below

  w.kv_str("general.architecture", "llama");
  w.kv_str("general.type", "model");
  w.kv_str("general.name", "Synthetic Llama 3 MoE 8x8B Instruct");
  w.kv_str("general.basename", "synthetic-llama-3-moe");
  w.kv_str("general.size_label", "8x8B");
  w.kv_str("general.license", "llama3");
  w.kv_u32("llama.block_count", kLayers);
  w.kv_u32("llama.context_length", 131072);
  w.kv_u32("llama.embedding_length", kEmbd);
  w.kv_u32("llama.feed_forward_length", kFfn);
  w.kv_u32("llama.attention.head_count", 32);
  w.kv_u32("llama.attention.head_count_kv", 8);
  w.kv_f32("llama.rope.freq_base", 500000.0f);
  w.kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.kv_u32("llama.expert_count", kExperts);
  w.kv_u32("llama.expert_used_count", 2);
  w.kv_u32("general.file_type", 15);  // MOSTLY_Q4_K_M
  w.kv_u32("llama.vocab_size", kVocab);
  w.kv_u32("llama.rope.dimension_count", 128);
  w.kv_str("tokenizer.ggml.model", "gpt2");
  w.kv_str("tokenizer.ggml.pre", "llama-bpe");

  w.array_header("tokenizer.ggml.tokens", kString, kVocab);
  for (uint32_t b = 0; b < 256; ++b) {
    std::string s;
    append_utf8(&s, byte_to_codepoint(b));
    w.str(s);
  }
  for (const std::vector<std::string>& chars : merged) {
    std::string s;
    for (const std::string& c : chars) s += c;
    w.str(s);
  }
  for (uint32_t id = kFirstSpecial; id < kVocab; ++id) w.str(special_token(id));

  w.array_header("tokenizer.ggml.scores", kF32, kVocab);
  for (uint32_t id = 0; id < kVocab; ++id) w.f32(-float(id));
  w.array_header("tokenizer.ggml.token_type", kI32, kVocab);
  for (uint32_t id = 0; id < kVocab; ++id) w.u32(id < kFirstSpecial ? 1 : 3);  // normal / control

  // Each merge splits a merged token of two or more characters between two of them.
  w.array_header("tokenizer.ggml.merges", kString, kMerges);
  for (uint32_t i = 0, id = 0; i < kMerges; ++i) {
    const std::vector<std::string>* chars;
    do {
      chars = &merged[id];
      id = (id + 1) % uint32_t(merged.size());
    } while (chars->size() < 2);
    size_t cut = 1 + rng.below(uint32_t(chars->size() - 1));
    std::string s;
    for (size_t c = 0; c < chars->size(); ++c) {
      if (c == cut) s.push_back(' ');
      s += (*chars)[c];
    }
    w.str(s);
  }

  w.kv_u32("tokenizer.ggml.bos_token_id", 128000);
  w.kv_u32("tokenizer.ggml.eos_token_id", 128009);
  w.kv_str("tokenizer.chat_template",
           "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
           "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
           "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
           "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
           "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}");
  w.kv_u32("general.quantization_version", 2);
  w.kv_u32("general.alignment", kAlignment);

  uint64_t offset = 0, end = 0;
  for (const TensorSpec& s : specs) {
    w.str(s.name);
    w.u32(uint32_t(s.ne.size()));
    uint64_t elements = 1;
    for (uint64_t d : s.ne) {
      w.u64(d);
      elements *= d;
    }
    w.u32(s.type.id);
    w.u64(offset);
    end = offset + elements / s.type.block_elems * s.type.block_bytes;
    offset = (end + kAlignment - 1) / kAlignment * kAlignment;
  }
  while (w.out.size() % kAlignment) w.out.push_back(0);  // data would start here
  memcpy(w.out.data() + 16, &w.kvs, 8);

  SynthGguf g;
  g.name = "synth-llama3-moe";
  g.bytes = std::move(w.out);
  g.kvs = w.kvs;
  g.tensors = specs.size();
  g.data_size = end;
  return g;
}

bool write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return fclose(f) == 0 && ok;
}

}  // namespace wsbench
