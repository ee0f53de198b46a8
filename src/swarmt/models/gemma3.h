// Gemma3ForCausalLM text models (Gemma-3-1B-IT and the text part of larger ones), specs/hf-formats.md
// §2.3-2.4:
//   x = embed_tokens[ids] · sqrt(d)            (the scale rounded to the weights' dtype, as HF does)
//   each layer: x = x + post_attention_layernorm(Attn(input_layernorm(x)))
//               x = x + post_feedforward_layernorm(MLP_geglu(pre_feedforward_layernorm(x)))
//   Attn: q_norm / k_norm per head before RoPE; scale query_pre_attn_scalar^-1/2; sliding-window
//   layers use the local RoPE base and a window, full layers the global base (and rope_scaling)
//   logits = RMSNorm(x) · embed_tokensᵀ  (tied), optional final soft-cap
// Every RMSNorm is Gemma's x̂ · (1 + w): the 1 + w is folded into the weights at load (kept in fp32) and
// unfolded at save, so the hot path is a plain RMSNorm and checkpoints keep HF's values.
#pragma once

#include "swarmt/models/causal_lm.h"
#include "swarmt/models/decoder_stack.h"
#include "swarmt/models/hf_config.h"
#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/gated_mlp.h"

namespace swarmt::models {

class Gemma3DecoderLayer : public nn::DecoderLayer {
 public:
  Gemma3DecoderLayer(const Gemma3Config& config, int64_t index);
  at::Tensor forward(const at::Tensor& x, const nn::LayerContext& ctx) override;
  at::Tensor forward_stateful(const at::Tensor& x, nn::LayerState& state) override;
  std::unique_ptr<nn::LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override;
  int64_t window() const override { return self_attn->window(); }
  void set_window(int64_t w) override {
    if (self_attn->is_sliding()) self_attn->set_window(w);
  }

  nn::RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  nn::RMSNorm pre_feedforward_layernorm{nullptr}, post_feedforward_layernorm{nullptr};
  nn::AttentionLayer self_attn{nullptr};
  nn::GatedMLP mlp{nullptr};
};

class Gemma3ForCausalLM : public CausalLM {
 public:
  explicit Gemma3ForCausalLM(const Gemma3Config& config);

  at::Tensor embed(const at::Tensor& tokens) override;
  at::Tensor head(const at::Tensor& hidden) override;
  int64_t num_layers() const override { return model->num_layers(); }
  nn::DecoderLayer& layer(int64_t index) override { return *model->decoder_layers.at(index); }
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t hidden_size() const override { return config_.hidden_size; }
  std::string model_type() const override { return "gemma3_text"; }
  Json config_json() const override { return config_.original; }
  std::vector<int64_t> eos_token_ids() const override { return config_.eos_token_ids; }

  // Unfolds (w - 1) the norm weights; other tensors as they are.
  std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() const override;
  // Folds 1 + w into the norm weights and keeps them in fp32.
  void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                               const std::string& source) override;

  const Gemma3Config& config() const { return config_; }
  DecoderStack model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // absent when tied (the default)

 private:
  Gemma3Config config_;
};

// True for the parameters that are Gemma RMSNorm weights (stored as w, used as 1 + w).
bool is_gemma_norm_weight(const std::string& name);

}  // namespace swarmt::models
