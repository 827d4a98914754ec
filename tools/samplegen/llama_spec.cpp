// ws-make-samples — llama tensor list (see llama_spec.h).
#include "llama_spec.h"

namespace samplegen {

std::vector<TensorSpec> llama_tensors(const LlamaConfig& c) {
  const uint64_t head_dim = c.hidden / c.heads;
  const uint64_t kv_dim = c.kv_heads * head_dim;
  std::vector<TensorSpec> out;
  out.push_back({"model.embed_tokens.weight", c.embed, {c.vocab, c.hidden}, Init::Linear, -1});
  for (uint32_t l = 0; l < c.layers; ++l) {
    const int layer = static_cast<int>(l);
    const std::string p = "model.layers." + std::to_string(l) + ".";
    out.push_back({p + "self_attn.q_proj.weight", c.attention, {c.hidden, c.hidden}, Init::Linear, layer});
    out.push_back({p + "self_attn.k_proj.weight", c.attention, {kv_dim, c.hidden}, Init::Linear, layer});
    out.push_back({p + "self_attn.v_proj.weight", c.attention, {kv_dim, c.hidden}, Init::Linear, layer});
    out.push_back({p + "self_attn.o_proj.weight", c.attention, {c.hidden, c.hidden}, Init::Linear, layer});
    out.push_back({p + "mlp.gate_proj.weight", c.mlp, {c.intermediate, c.hidden}, Init::Linear, layer});
    out.push_back({p + "mlp.up_proj.weight", c.mlp, {c.intermediate, c.hidden}, Init::Linear, layer});
    out.push_back({p + "mlp.down_proj.weight", c.mlp, {c.hidden, c.intermediate}, Init::Linear, layer});
    out.push_back({p + "input_layernorm.weight", c.norm, {c.hidden}, Init::Norm, layer});
    out.push_back({p + "post_attention_layernorm.weight", c.norm, {c.hidden}, Init::Norm, layer});
  }
  out.push_back({"model.norm.weight", c.norm, {c.hidden}, Init::Norm, -1});
  out.push_back({"lm_head.weight", c.lm_head, {c.vocab, c.hidden}, Init::Linear, -1});
  return out;
}

}  // namespace samplegen
