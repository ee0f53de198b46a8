// LlamaForCausalLM (SmolLM2 and every Llama-architecture checkpoint), specs/hf-formats.md §2.1-2.2:
//   x = embed_tokens[ids]
//   each layer: x = x + o_proj(Attn(RoPE(q_proj h), RoPE(k_proj h), v_proj h)),  h = RMSNorm(x)
//               x = x + down_proj(silu(gate_proj h) * up_proj h),                  h = RMSNorm(x)
//   logits = lm_head(RMSNorm(x))   (lm_head tied to embed_tokens when tie_word_embeddings)
#pragma once

#include "swarmt/models/causal_lm.h"
#include "swarmt/models/decoder_stack.h"
#include "swarmt/models/hf_config.h"
#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/gated_mlp.h"

namespace swarmt::models {

class LlamaDecoderLayer : public nn::DecoderLayer {
 public:
  LlamaDecoderLayer(const LlamaConfig& config);
  at::Tensor forward(const at::Tensor& x, const nn::LayerContext& ctx) override;
  at::Tensor forward_stateful(const at::Tensor& x, nn::LayerState& state) override;
  std::unique_ptr<nn::LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override;

  nn::RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  nn::AttentionLayer self_attn{nullptr};
  nn::GatedMLP mlp{nullptr};
};

class LlamaForCausalLM : public CausalLM {
 public:
  explicit LlamaForCausalLM(const LlamaConfig& config);

  at::Tensor embed(const at::Tensor& tokens) override;
  at::Tensor head(const at::Tensor& hidden) override;
  int64_t num_layers() const override { return model->num_layers(); }
  nn::DecoderLayer& layer(int64_t index) override { return *model->decoder_layers.at(index); }
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t hidden_size() const override { return config_.hidden_size; }
  std::string model_type() const override { return "llama"; }
  Json config_json() const override;
  std::vector<int64_t> eos_token_ids() const override { return config_.eos_token_ids; }

  const LlamaConfig& config() const { return config_; }
  DecoderStack model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // absent when tied

 private:
  LlamaConfig config_;
};

}  // namespace swarmt::models
