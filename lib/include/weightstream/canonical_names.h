// weightstream — canonical tensor names: one scheme for HF/MLX safetensors and GGUF.
//
// An engine that loads both formats wants one name per role. This maps the common
// Llama/Qwen/Mistral/Mixtral/Gemma/Phi/DeepSeek tensors onto that scheme through a pattern table
// (literal text with {n} = layer and {e} = expert captures, decimal digits); no regex, no
// allocation, no recursion. The last dot-component — .weight, .bias, .scales or .biases (MLX
// companions) — carries over unchanged. Names the table does not know pass through unchanged.
//
// The scheme ({n} layer, {e} expert; HF/MLX names may sit under "model.", and multimodal ones
// under "language_model.model." or "model.language_model."):
//
//   canonical                          HF / MLX                                GGUF
//   embedding                          model.embed_tokens                      token_embd
//   norm                               model.norm                              output_norm
//   output                             lm_head                                 output
//   rope.freqs                         -                                       rope_freqs
//   layers.{n}.attention_norm          model.layers.{n}.input_layernorm        blk.{n}.attn_norm
//   layers.{n}.attention.q|k|v|o       ...self_attn.q_proj|k_proj|v_proj|o_proj ...attn_q|attn_k|attn_v|attn_output
//   layers.{n}.attention.qkv           ...self_attn.qkv_proj (Phi-3)           ...attn_qkv
//   layers.{n}.attention.q_norm|k_norm ...self_attn.q_norm|k_norm (Qwen3)      ...attn_q_norm|attn_k_norm
//   layers.{n}.attention.post_norm     ...post_attention_layernorm (*)         ...post_attention_norm
//   layers.{n}.ffn_norm                ...post_attention_layernorm (*),
//                                      ...pre_feedforward_layernorm            ...ffn_norm
//   layers.{n}.ffn.post_norm           ...post_feedforward_layernorm           ...post_ffw_norm
//   layers.{n}.ffn.gate|up|down        ...mlp.gate_proj|up_proj|down_proj      ...ffn_gate|ffn_up|ffn_down
//   layers.{n}.ffn.gate_up             ...mlp.gate_up_proj (Phi-3)             -
//   layers.{n}.router                  ...block_sparse_moe.gate, ...mlp.gate   ...ffn_gate_inp
//   layers.{n}.experts.{e}.ffn.gate|up|down
//                                      ...block_sparse_moe.experts.{e}.w1|w3|w2,
//                                      ...mlp.experts.{e}.gate_proj|up_proj|down_proj   -
//   layers.{n}.experts.ffn.gate|up|down (all experts stacked)    -            ...ffn_gate_exps|ffn_up_exps|ffn_down_exps
//   layers.{n}.shared_expert.ffn.gate|up|down
//                                      ...mlp.shared_expert.gate_proj|... (Qwen2-MoE),
//                                      ...mlp.shared_experts.gate_proj|... (DeepSeek)   ...ffn_gate_shexp|ffn_up_shexp|ffn_down_shexp
//   layers.{n}.shared_expert.router    ...mlp.shared_expert_gate               ...ffn_gate_inp_shexp
//
// (*) HF's post_attention_layernorm is the pre-FFN norm in Llama-style models but a norm on the
// attention output in Gemma-2/3 ("sandwich" norms, which add pre/post_feedforward_layernorm).
// The name alone cannot tell: NameOptions::sandwich_norms picks the Gemma meaning
// (name_options_for_architecture() sets it from model_type or general.architecture).
//
//   char out[128];
//   size_t n = ws::canonical_name("blk.3.ffn_gate_exps.weight", 26, out, sizeof out);
//   // n == 32, out == "layers.3.experts.ffn.gate.weight"; kNameTooSmall if out were too short
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {

// Returned instead of a length when the output buffer cannot hold the result.
constexpr size_t kNameTooSmall = ~size_t(0);

enum class NameFamily : uint8_t { Unmapped, HuggingFace, Gguf };

struct NameOptions {
  bool sandwich_norms = false;  // Gemma-2/3: post_attention_layernorm is attention.post_norm
};

// Options for an architecture name (config.json model_type or GGUF general.architecture):
// sandwich_norms for gemma2, gemma3, gemma3_text.
NameOptions name_options_for_architecture(const char* arch, size_t arch_size);

// Writes the canonical name of `name` into out (no terminator is counted; a NUL follows when
// out has room for it) and returns its length, or kNameTooSmall (out is then left unspecified).
// Unmapped names are copied unchanged. `family`, when given, receives which scheme matched.
size_t canonical_name(const char* name, size_t name_size, char* out, size_t out_size,
                      const NameOptions& options = NameOptions(), NameFamily* family = nullptr);

// The reverse: the HF/MLX ("model."-prefixed) or GGUF name of a canonical name. Where several
// source names share a canonical name the first row of the table wins (Llama/Qwen spellings:
// mlp.experts.{e}.gate_proj, not Mixtral's w1). Canonical names without a counterpart in the
// target family (per-expert tensors in GGUF, stacked experts in HF) are copied unchanged and
// `mapped`, when given, is set false.
size_t name_from_canonical(const char* canonical, size_t canonical_size, NameFamily target,
                           char* out, size_t out_size, const NameOptions& options = NameOptions(),
                           bool* mapped = nullptr);

}  // namespace ws
