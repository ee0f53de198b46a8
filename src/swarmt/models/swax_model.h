// SWAX hybrid causal LM and its baselines, built from a SwaxConfig (specs/swax.md §1.4):
//   x = Embedding(tokens)
//   for each block (letter of layer_pattern): x = x + mixer(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
//   logits = softcap_30(W_lm RMSNorm(x))
// The letters name mixers of the table in models/swax_mixers.h.
#pragma once

#include "swarmt/models/decoder_lm.h"
#include "swarmt/models/swax_config.h"
#include "swarmt/nn/hybrid_block.h"

namespace swarmt::models {

class SwaxForCausalLM : public DecoderLM {
 public:
  explicit SwaxForCausalLM(const SwaxConfig& config);

  std::string model_type() const override { return "swax"; }
  // The config, with the inference window set by set_inference_window (e.g. w_long after stochastic
  // training).
  Json config_json() const override { return config_.to_json(); }
  std::vector<int64_t> eos_token_ids() const override;
  // Sets the window of the sliding-window blocks and records it as the config's sliding_window.
  void set_inference_window(int64_t window) override;

  // Re-initialises every weight as specs/swax.md §2.5 / §3.4 prescribe.
  void reset_parameters();
  const SwaxConfig& config() const { return config_; }

 private:
  SwaxConfig config_;
};

}  // namespace swarmt::models
