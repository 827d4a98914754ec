// Canonical names: every row of the table from both families, the reverse mapping, the MLX
// companions, multimodal prefixes, Gemma's sandwich norms, passthrough and too-small buffers.
#include <string.h>

#include <string>

#include <gtest/gtest.h>

#include "weightstream/canonical_names.h"

namespace {

using ws::NameFamily;

std::string canon(const std::string& name, NameFamily* family = nullptr,
                  ws::NameOptions o = ws::NameOptions()) {
  char out[256];
  size_t n = ws::canonical_name(name.data(), name.size(), out, sizeof out, o, family);
  EXPECT_NE(n, ws::kNameTooSmall);
  EXPECT_EQ(out[n], '\0');
  return std::string(out, n);
}

std::string back(const std::string& c, NameFamily target, bool* mapped = nullptr,
                 ws::NameOptions o = ws::NameOptions()) {
  char out[256];
  size_t n = ws::name_from_canonical(c.data(), c.size(), target, out, sizeof out, o, mapped);
  EXPECT_NE(n, ws::kNameTooSmall);
  return std::string(out, n);
}

struct Case {
  const char* source;
  const char* canonical;
  NameFamily family;
  bool reverse_exact;  // name_from_canonical gives the source back
};

constexpr NameFamily HF = NameFamily::HuggingFace;
constexpr NameFamily GG = NameFamily::Gguf;
constexpr NameFamily NO = NameFamily::Unmapped;

const Case kCases[] = {
    // Globals.
    {"model.embed_tokens.weight", "embedding.weight", HF, true},
    {"token_embd.weight", "embedding.weight", GG, true},
    {"model.norm.weight", "norm.weight", HF, true},
    {"output_norm.weight", "norm.weight", GG, true},
    {"lm_head.weight", "output.weight", HF, true},
    {"output.weight", "output.weight", GG, true},
    {"rope_freqs.weight", "rope.freqs.weight", GG, true},
    // Attention (Llama, Qwen2 biases, Qwen3 q/k norms, Phi-3 fused qkv).
    {"model.layers.0.self_attn.q_proj.weight", "layers.0.attention.q.weight", HF, true},
    {"model.layers.31.self_attn.k_proj.weight", "layers.31.attention.k.weight", HF, true},
    {"model.layers.7.self_attn.v_proj.weight", "layers.7.attention.v.weight", HF, true},
    {"model.layers.12.self_attn.o_proj.weight", "layers.12.attention.o.weight", HF, true},
    {"model.layers.3.self_attn.q_proj.bias", "layers.3.attention.q.bias", HF, true},
    {"model.layers.3.self_attn.k_proj.bias", "layers.3.attention.k.bias", HF, true},
    {"model.layers.3.self_attn.v_proj.bias", "layers.3.attention.v.bias", HF, true},
    {"model.layers.5.self_attn.q_norm.weight", "layers.5.attention.q_norm.weight", HF, true},
    {"model.layers.5.self_attn.k_norm.weight", "layers.5.attention.k_norm.weight", HF, true},
    {"model.layers.2.self_attn.qkv_proj.weight", "layers.2.attention.qkv.weight", HF, true},
    {"blk.0.attn_q.weight", "layers.0.attention.q.weight", GG, true},
    {"blk.31.attn_k.weight", "layers.31.attention.k.weight", GG, true},
    {"blk.7.attn_v.weight", "layers.7.attention.v.weight", GG, true},
    {"blk.12.attn_output.weight", "layers.12.attention.o.weight", GG, true},
    {"blk.3.attn_q.bias", "layers.3.attention.q.bias", GG, true},
    {"blk.5.attn_q_norm.weight", "layers.5.attention.q_norm.weight", GG, true},
    {"blk.5.attn_k_norm.weight", "layers.5.attention.k_norm.weight", GG, true},
    {"blk.2.attn_qkv.weight", "layers.2.attention.qkv.weight", GG, true},
    // Norms.
    {"model.layers.4.input_layernorm.weight", "layers.4.attention_norm.weight", HF, true},
    {"model.layers.4.post_attention_layernorm.weight", "layers.4.ffn_norm.weight", HF, true},
    {"blk.4.attn_norm.weight", "layers.4.attention_norm.weight", GG, true},
    {"blk.4.ffn_norm.weight", "layers.4.ffn_norm.weight", GG, true},
    {"blk.4.post_attention_norm.weight", "layers.4.attention.post_norm.weight", GG, true},
    {"blk.4.post_ffw_norm.weight", "layers.4.ffn.post_norm.weight", GG, true},
    {"model.layers.4.post_feedforward_layernorm.weight", "layers.4.ffn.post_norm.weight", HF, true},
    {"model.layers.4.pre_feedforward_layernorm.weight", "layers.4.ffn_norm.weight", HF, false},
    // Dense feed-forward (and Phi-3's fused gate_up).
    {"model.layers.9.mlp.gate_proj.weight", "layers.9.ffn.gate.weight", HF, true},
    {"model.layers.9.mlp.up_proj.weight", "layers.9.ffn.up.weight", HF, true},
    {"model.layers.9.mlp.down_proj.weight", "layers.9.ffn.down.weight", HF, true},
    {"model.layers.9.mlp.gate_up_proj.weight", "layers.9.ffn.gate_up.weight", HF, true},
    {"blk.9.ffn_gate.weight", "layers.9.ffn.gate.weight", GG, true},
    {"blk.9.ffn_up.weight", "layers.9.ffn.up.weight", GG, true},
    {"blk.9.ffn_down.weight", "layers.9.ffn.down.weight", GG, true},
    // Mixtral experts and router.
    {"model.layers.1.block_sparse_moe.gate.weight", "layers.1.router.weight", HF, false},
    {"model.layers.1.block_sparse_moe.experts.0.w1.weight", "layers.1.experts.0.ffn.gate.weight", HF, false},
    {"model.layers.1.block_sparse_moe.experts.7.w3.weight", "layers.1.experts.7.ffn.up.weight", HF, false},
    {"model.layers.1.block_sparse_moe.experts.7.w2.weight", "layers.1.experts.7.ffn.down.weight", HF, false},
    // Qwen-MoE / DeepSeek experts, router and shared experts.
    {"model.layers.2.mlp.gate.weight", "layers.2.router.weight", HF, true},
    {"model.layers.2.mlp.experts.59.gate_proj.weight", "layers.2.experts.59.ffn.gate.weight", HF, true},
    {"model.layers.2.mlp.experts.59.up_proj.weight", "layers.2.experts.59.ffn.up.weight", HF, true},
    {"model.layers.2.mlp.experts.10.down_proj.weight", "layers.2.experts.10.ffn.down.weight", HF, true},
    {"model.layers.2.mlp.shared_expert.gate_proj.weight", "layers.2.shared_expert.ffn.gate.weight", HF, true},
    {"model.layers.2.mlp.shared_expert.up_proj.weight", "layers.2.shared_expert.ffn.up.weight", HF, true},
    {"model.layers.2.mlp.shared_expert.down_proj.weight", "layers.2.shared_expert.ffn.down.weight", HF, true},
    {"model.layers.2.mlp.shared_expert_gate.weight", "layers.2.shared_expert.router.weight", HF, true},
    {"model.layers.2.mlp.shared_experts.gate_proj.weight", "layers.2.shared_expert.ffn.gate.weight", HF, false},
    {"model.layers.2.mlp.shared_experts.up_proj.weight", "layers.2.shared_expert.ffn.up.weight", HF, false},
    {"model.layers.2.mlp.shared_experts.down_proj.weight", "layers.2.shared_expert.ffn.down.weight", HF, false},
    // GGUF MoE: router, stacked experts, shared experts.
    {"blk.2.ffn_gate_inp.weight", "layers.2.router.weight", GG, true},
    {"blk.2.ffn_gate_exps.weight", "layers.2.experts.ffn.gate.weight", GG, true},
    {"blk.2.ffn_up_exps.weight", "layers.2.experts.ffn.up.weight", GG, true},
    {"blk.2.ffn_down_exps.weight", "layers.2.experts.ffn.down.weight", GG, true},
    {"blk.2.ffn_gate_shexp.weight", "layers.2.shared_expert.ffn.gate.weight", GG, true},
    {"blk.2.ffn_up_shexp.weight", "layers.2.shared_expert.ffn.up.weight", GG, true},
    {"blk.2.ffn_down_shexp.weight", "layers.2.shared_expert.ffn.down.weight", GG, true},
    {"blk.2.ffn_gate_inp_shexp.weight", "layers.2.shared_expert.router.weight", GG, true},
    // MLX quantization companions carry over.
    {"model.layers.0.self_attn.q_proj.scales", "layers.0.attention.q.scales", HF, true},
    {"model.layers.0.self_attn.q_proj.biases", "layers.0.attention.q.biases", HF, true},
    {"model.embed_tokens.scales", "embedding.scales", HF, true},
    {"lm_head.biases", "output.biases", HF, true},
    // Multimodal layouts of the language model.
    {"language_model.model.layers.6.mlp.down_proj.weight", "layers.6.ffn.down.weight", HF, false},
    {"model.language_model.layers.6.self_attn.o_proj.weight", "layers.6.attention.o.weight", HF, false},
    {"language_model.lm_head.weight", "output.weight", HF, false},
    {"model.language_model.embed_tokens.weight", "embedding.weight", HF, false},
    // Passthrough: unknown tensors, unknown suffixes, malformed layer numbers, vision towers.
    {"vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight",
     "vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight", NO, true},
    {"model.layers.0.self_attn.rotary_emb.inv_freq", "model.layers.0.self_attn.rotary_emb.inv_freq", NO, true},
    {"model.layers.0.self_attn.q_proj.weight.format", "model.layers.0.self_attn.q_proj.weight.format", NO, true},
    {"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.q_proj", NO, true},
    {"model.layers.x.self_attn.q_proj.weight", "model.layers.x.self_attn.q_proj.weight", NO, true},
    {"model.layers.01.self_attn.q_proj.weight", "model.layers.01.self_attn.q_proj.weight", NO, true},
    {"model.layers.1234567890.mlp.up_proj.weight", "model.layers.1234567890.mlp.up_proj.weight", NO, true},
    {"blk.0.attn_q.weight.extra", "blk.0.attn_q.weight.extra", NO, true},
    {"blk..attn_q.weight", "blk..attn_q.weight", NO, true},
    {"layers.0.attention.q.weight", "layers.0.attention.q.weight", NO, true},  // already canonical
    {"weight", "weight", NO, true},
    {".weight", ".weight", NO, true},
    {"", "", NO, true},
    {"model.layers.123456789.mlp.up_proj.weight", "layers.123456789.ffn.up.weight", HF, true},
};

TEST(CanonicalNames, EveryCaseForward) {
  size_t mapped = 0;
  for (const Case& c : kCases) {
    NameFamily f = NameFamily::Unmapped;
    EXPECT_EQ(canon(c.source, &f), c.canonical) << c.source;
    EXPECT_EQ(f, c.family) << c.source;
    mapped += f != NameFamily::Unmapped;
  }
  EXPECT_EQ(sizeof kCases / sizeof *kCases, 85u);
  EXPECT_EQ(mapped, 72u);  // 13 pass through
}

TEST(CanonicalNames, EveryCaseBack) {
  for (const Case& c : kCases) {
    if (c.family == NameFamily::Unmapped || !c.reverse_exact) continue;
    bool mapped = false;
    EXPECT_EQ(back(c.canonical, c.family, &mapped), c.source) << c.canonical;
    EXPECT_TRUE(mapped) << c.canonical;
  }
}

TEST(CanonicalNames, ReverseChoosesTheFirstSpelling) {
  // Mixtral and DeepSeek spellings come back as the Llama/Qwen ones.
  EXPECT_EQ(back("layers.1.experts.0.ffn.gate.weight", HF), "model.layers.1.mlp.experts.0.gate_proj.weight");
  EXPECT_EQ(back("layers.1.router.weight", HF), "model.layers.1.mlp.gate.weight");
  EXPECT_EQ(back("layers.2.shared_expert.ffn.down.weight", HF),
            "model.layers.2.mlp.shared_expert.down_proj.weight");
  EXPECT_EQ(back("layers.4.ffn_norm.weight", HF), "model.layers.4.post_attention_layernorm.weight");
}

TEST(CanonicalNames, ReverseWithoutCounterpartIsUnchanged) {
  bool mapped = true;
  // Per-expert tensors have no GGUF name (GGUF stacks them), stacked ones no HF name.
  EXPECT_EQ(back("layers.1.experts.3.ffn.up.weight", GG, &mapped), "layers.1.experts.3.ffn.up.weight");
  EXPECT_FALSE(mapped);
  mapped = true;
  EXPECT_EQ(back("layers.1.experts.ffn.up.weight", HF, &mapped), "layers.1.experts.ffn.up.weight");
  EXPECT_FALSE(mapped);
  mapped = true;
  EXPECT_EQ(back("rope.freqs.weight", HF, &mapped), "rope.freqs.weight");
  EXPECT_FALSE(mapped);
  mapped = true;
  EXPECT_EQ(back("layers.9.ffn.gate_up.weight", GG, &mapped), "layers.9.ffn.gate_up.weight");
  EXPECT_FALSE(mapped);
  mapped = true;
  EXPECT_EQ(back("layers.0.attention.q.weight", NameFamily::Unmapped, &mapped), "layers.0.attention.q.weight");
  EXPECT_FALSE(mapped);
  EXPECT_EQ(back("something.else", GG, &mapped), "something.else");
  EXPECT_FALSE(mapped);
}

TEST(CanonicalNames, GemmaSandwichNorms) {
  ws::NameOptions gemma = ws::name_options_for_architecture("gemma2", 6);
  EXPECT_TRUE(gemma.sandwich_norms);
  EXPECT_TRUE(ws::name_options_for_architecture("gemma3", 6).sandwich_norms);
  EXPECT_TRUE(ws::name_options_for_architecture("gemma3_text", 11).sandwich_norms);
  EXPECT_FALSE(ws::name_options_for_architecture("gemma", 5).sandwich_norms);
  EXPECT_FALSE(ws::name_options_for_architecture("llama", 5).sandwich_norms);
  NameFamily f;
  EXPECT_EQ(canon("model.layers.4.post_attention_layernorm.weight", &f, gemma),
            "layers.4.attention.post_norm.weight");
  EXPECT_EQ(f, HF);
  EXPECT_EQ(canon("model.layers.4.pre_feedforward_layernorm.weight", &f, gemma), "layers.4.ffn_norm.weight");
  EXPECT_EQ(canon("model.layers.4.post_feedforward_layernorm.weight", &f, gemma),
            "layers.4.ffn.post_norm.weight");
  EXPECT_EQ(canon("model.layers.4.input_layernorm.weight", &f, gemma), "layers.4.attention_norm.weight");
  // The GGUF names do not depend on the option.
  EXPECT_EQ(canon("blk.4.post_attention_norm.weight", &f, gemma), "layers.4.attention.post_norm.weight");
  EXPECT_EQ(canon("blk.4.ffn_norm.weight", &f, gemma), "layers.4.ffn_norm.weight");
  // And back, both families.
  EXPECT_EQ(back("layers.4.attention.post_norm.weight", HF, nullptr, gemma),
            "model.layers.4.post_attention_layernorm.weight");
  EXPECT_EQ(back("layers.4.ffn_norm.weight", HF, nullptr, gemma),
            "model.layers.4.pre_feedforward_layernorm.weight");
  EXPECT_EQ(back("layers.4.ffn.post_norm.weight", HF, nullptr, gemma),
            "model.layers.4.post_feedforward_layernorm.weight");
  EXPECT_EQ(back("layers.4.attention.post_norm.weight", GG, nullptr, gemma), "blk.4.post_attention_norm.weight");
  // Without the option, attention.post_norm has no HF name (Llama has no such norm).
  bool mapped = true;
  EXPECT_EQ(back("layers.4.attention.post_norm.weight", HF, &mapped), "layers.4.attention.post_norm.weight");
  EXPECT_FALSE(mapped);
}

TEST(CanonicalNames, GgufAndHfAgreeOnEveryGgufRow) {
  // Every GGUF name with an HF counterpart: GGUF -> canonical -> HF -> canonical is stable.
  for (const Case& c : kCases) {
    if (c.family != GG) continue;
    std::string cn = canon(c.source);
    bool mapped = false;
    std::string hf = back(cn, HF, &mapped);
    if (!mapped) continue;
    EXPECT_EQ(canon(hf), cn) << c.source;
  }
}

TEST(CanonicalNames, BufferTooSmall) {
  const char* name = "blk.3.ffn_gate_exps.weight";
  const size_t n = strlen(name);
  char out[64];
  memset(out, 'x', sizeof out);
  // "layers.3.experts.ffn.gate.weight" is 32 bytes: 31 is too small, 32 fits without the NUL.
  EXPECT_EQ(ws::canonical_name(name, n, out, 31), ws::kNameTooSmall);
  EXPECT_EQ(ws::canonical_name(name, n, out, 32), 32u);
  EXPECT_EQ(std::string(out, 32), "layers.3.experts.ffn.gate.weight");
  EXPECT_EQ(out[32], 'x');  // not written: no room was given for it
  EXPECT_EQ(ws::canonical_name(name, n, out, 33), 32u);
  EXPECT_EQ(out[32], '\0');
  EXPECT_EQ(ws::canonical_name(name, n, nullptr, 0), ws::kNameTooSmall);
  // Passthrough needs the name's own length.
  EXPECT_EQ(ws::canonical_name("abc.def", 7, out, 6), ws::kNameTooSmall);
  EXPECT_EQ(ws::canonical_name("abc.def", 7, out, 7), 7u);
  // Reverse.
  const char* c = "layers.3.experts.ffn.gate.weight";
  EXPECT_EQ(ws::name_from_canonical(c, strlen(c), GG, out, 25), ws::kNameTooSmall);
  EXPECT_EQ(ws::name_from_canonical(c, strlen(c), GG, out, 26), 26u);
  EXPECT_EQ(std::string(out, 26), name);
  // Empty name, empty buffer.
  EXPECT_EQ(ws::canonical_name("", 0, nullptr, 0), 0u);
}

TEST(CanonicalNames, NamesAreNotNulTerminatedInput) {
  // The length is what counts: a name inside a larger buffer (a tensor table view).
  const char buf[] = "blk.0.attn_q.weightGARBAGE";
  char out[64];
  size_t n = ws::canonical_name(buf, 19, out, sizeof out);
  EXPECT_EQ(std::string(out, n), "layers.0.attention.q.weight");
}

}  // namespace
