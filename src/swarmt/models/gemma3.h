// Gemma3ForCausalLM text models (Gemma-3-1B-IT and the text part of larger ones), specs/hf-formats.md
// §2.3-2.4:
//   x = embed_tokens[ids] · sqrt(d)            (the scale rounded to the weights' dtype, as HF does)
//   each layer: x = x + post_attention_layernorm(Attn(input_layernorm(x)))
//               x = x + post_feedforward_layernorm(MLP_geglu(pre_feedforward_layernorm(x)))
//   Attn: q_norm / k_norm per head before RoPE; scale query_pre_attn_scalar^-1/2; sliding-window
//   layers use the local RoPE base and a window, full layers the global base (and rope_scaling)
//   logits = RMSNorm(x) · embed_tokensᵀ  (tied), optional final soft-cap
// Each layer is nn::ResidualBlock with its sandwich norms. Every RMSNorm is Gemma's x̂ · (1 + w): the 1 + w
// is folded into the weights at load (kept in fp32) and unfolded at save, so the hot path is a plain
// RMSNorm and checkpoints keep HF's values.
#pragma once

#include "swarmt/models/decoder_lm.h"
#include "swarmt/models/hf_config.h"

namespace swarmt::models {

class Gemma3ForCausalLM : public DecoderLM {
 public:
  explicit Gemma3ForCausalLM(const Gemma3Config& config);

  std::string model_type() const override { return "gemma3_text"; }
  Json config_json() const override { return config_.original; }
  std::vector<int64_t> eos_token_ids() const override { return config_.eos_token_ids; }

  const Gemma3Config& config() const { return config_; }

 protected:
  // Unfolds (w - 1) the norm weights, in the dtype of the other weights; other tensors as they are.
  at::Tensor to_checkpoint(const std::string& name, const at::Tensor& parameter) const override;
  // Folds 1 + w into the norm weights and keeps them in fp32.
  void load_tensor(const std::string& name, const at::Tensor& stored, at::Tensor& parameter) override;

 private:
  Gemma3Config config_;
};

// True for the parameters that are Gemma RMSNorm weights (stored as w, used as 1 + w).
bool is_gemma_norm_weight(const std::string& name);

}  // namespace swarmt::models
