// SWAX hybrid causal LM and its baselines, built from a SwaxConfig (specs/swax.md §1.4):
//   x = Embedding(tokens)
//   for each block (letter of layer_pattern): x = x + mixer(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
//   logits = softcap_30(W_lm RMSNorm(x))
#pragma once

#include "swarmt/models/causal_lm.h"
#include "swarmt/models/decoder_stack.h"
#include "swarmt/models/swax_config.h"
#include "swarmt/nn/hybrid_block.h"

namespace swarmt::models {

class SwaxForCausalLM : public CausalLM {
 public:
  explicit SwaxForCausalLM(const SwaxConfig& config);

  at::Tensor embed(const at::Tensor& tokens) override;
  at::Tensor head(const at::Tensor& hidden) override;
  int64_t num_layers() const override { return model->num_layers(); }
  nn::DecoderLayer& layer(int64_t index) override { return *model->decoder_layers.at(index); }
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t hidden_size() const override { return config_.hidden_size; }
  std::string model_type() const override { return "swax"; }
  Json config_json() const override;
  std::vector<int64_t> eos_token_ids() const override;

  // Re-initialises every weight as specs/swax.md §2.5 / §3.4 prescribe.
  void reset_parameters();
  const SwaxConfig& config() const { return config_; }

  DecoderStack model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // absent when tie_word_embeddings

 private:
  SwaxConfig config_;
};

// Per-block options derived from the config (shared with tests).
nn::HybridBlockOptions swax_block_options(const SwaxConfig& config, char kind);

}  // namespace swarmt::models
