#include "swarmt/models/swax_model.h"

#include "swarmt/models/swax_mixers.h"
#include "swarmt/nn/init.h"

namespace swarmt::models {
namespace {

DecoderLMOptions swax_decoder_options(const SwaxConfig& c) {
  DecoderLMOptions o;
  o.vocab_size = c.vocab_size;
  o.hidden_size = c.hidden_size;
  o.norm_eps = c.rms_norm_eps;
  o.tie_word_embeddings = c.tie_word_embeddings;
  o.final_logit_softcap = c.logit_soft_cap;
  return o;
}

}  // namespace

SwaxForCausalLM::SwaxForCausalLM(const SwaxConfig& config)
    : DecoderLM(swax_decoder_options(config), config.num_hidden_layers(),
                [&config](int64_t i) { return make_swax_block(config, config.layer_pattern.at(i)); }),
      config_(config) {
  reset_parameters();
}

void SwaxForCausalLM::reset_parameters() {
  at::NoGradGuard no_grad;
  nn::small_init_(model->embed_tokens->weight, config_.hidden_size);
  for (auto& layer : model->decoder_layers)
    std::static_pointer_cast<nn::HybridBlock>(layer)->reset_parameters(num_layers());
  model->norm->weight.fill_(1.0);
  if (lm_head) nn::small_init_(lm_head->weight, config_.hidden_size);
}

void SwaxForCausalLM::set_inference_window(int64_t window) {
  const bool has_sliding_blocks = inference_window() > 0;
  DecoderLM::set_inference_window(window);
  // A window of 0 turns the sliding blocks into full attention, which sliding_window cannot express; the
  // config then keeps the trained window.
  if (has_sliding_blocks && window > 0) config_.sliding_window = window;
}

std::vector<int64_t> SwaxForCausalLM::eos_token_ids() const {
  if (config_.eos_token_id >= 0) return {config_.eos_token_id};
  return {};
}

}  // namespace swarmt::models
