// LlamaForCausalLM (SmolLM2 and every Llama-architecture checkpoint), specs/hf-formats.md §2.1-2.2:
//   x = embed_tokens[ids]
//   each layer: x = x + o_proj(Attn(RoPE(q_proj h), RoPE(k_proj h), v_proj h)),  h = RMSNorm(x)
//               x = x + down_proj(silu(gate_proj h) * up_proj h),                  h = RMSNorm(x)
//   logits = lm_head(RMSNorm(x))   (lm_head tied to embed_tokens when tie_word_embeddings)
// Each layer is the pre-norm nn::ResidualBlock with an attention mixer named self_attn.
#pragma once

#include "swarmt/models/decoder_lm.h"
#include "swarmt/models/hf_config.h"

namespace swarmt::models {

class LlamaForCausalLM : public DecoderLM {
 public:
  explicit LlamaForCausalLM(const LlamaConfig& config);

  std::string model_type() const override { return "llama"; }
  Json config_json() const override { return config_.original; }
  std::vector<int64_t> eos_token_ids() const override { return config_.eos_token_ids; }

  const LlamaConfig& config() const { return config_; }

 private:
  LlamaConfig config_;
};

}  // namespace swarmt::models
