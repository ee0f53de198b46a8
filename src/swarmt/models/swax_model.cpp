#include "swarmt/models/swax_model.h"

#include "swarmt/nn/init.h"

namespace swarmt::models {

nn::HybridBlockOptions swax_block_options(const SwaxConfig& c, char kind) {
  nn::HybridBlockOptions o;
  o.kind = kind;
  o.hidden_size = c.hidden_size;
  o.intermediate_size = c.resolved_intermediate_size();
  o.norm_eps = c.rms_norm_eps;

  o.attention.hidden_size = c.hidden_size;
  o.attention.num_heads = c.num_attention_heads;
  o.attention.num_kv_heads = c.num_key_value_heads;
  o.attention.head_dim = c.head_dim;
  o.attention.rope_theta = c.rope_theta;
  o.attention.window = kind == 'S' ? c.sliding_window : 0;

  o.mlstm.hidden_size = c.hidden_size;
  o.mlstm.num_heads = c.mlstm_num_heads;
  o.mlstm.qk_head_dim = c.mlstm_qk_head_dim;
  o.mlstm.v_head_dim = c.mlstm_v_head_dim;
  o.mlstm.gate_soft_cap = c.mlstm_gate_soft_cap;
  o.mlstm.chunk_size = c.mlstm_chunk_size;
  o.mlstm.eps = c.mlstm_eps;
  o.mlstm.norm_eps = c.mlstm_norm_eps;
  o.mlstm.conv_size = c.mlstm_conv_size;

  o.gdn.hidden_size = c.hidden_size;
  o.gdn.num_heads = c.gdn_num_heads;
  o.gdn.head_dim = c.gdn_head_dim;
  o.gdn.v_head_dim = c.gdn_v_head_dim;
  o.gdn.conv_size = c.gdn_conv_size;
  o.gdn.allow_neg_eigval = c.gdn_allow_neg_eigval;
  o.gdn.chunk_size = c.gdn_chunk_size;
  o.gdn.norm_eps = c.gdn_norm_eps;
  return o;
}

SwaxForCausalLM::SwaxForCausalLM(const SwaxConfig& config) : config_(config) {
  model = register_module("model", DecoderStack(config.vocab_size, config.hidden_size, config.rms_norm_eps));
  for (char kind : config.layer_pattern)
    model->add_layer(std::make_shared<nn::HybridBlock>(swax_block_options(config, kind)));
  if (!config.tie_word_embeddings)
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.hidden_size, config.vocab_size).bias(false)));
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

at::Tensor SwaxForCausalLM::embed(const at::Tensor& tokens) { return model->embed_tokens->forward(tokens); }

at::Tensor SwaxForCausalLM::head(const at::Tensor& hidden) {
  auto h = model->norm->forward(hidden);
  auto logits = lm_head ? lm_head->forward(h) : at::matmul(h, model->embed_tokens->weight.t());
  logits = logits.to(hidden.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  if (config_.logit_soft_cap > 0) logits = config_.logit_soft_cap * at::tanh(logits / config_.logit_soft_cap);
  return logits;
}

Json SwaxForCausalLM::config_json() const {
  // The sliding window may have been changed for inference (e.g. w_long after stochastic training).
  SwaxConfig current = config_;
  for (const auto& layer : model->decoder_layers)
    if (layer->window() > 0) current.sliding_window = layer->window();
  return current.to_json();
}

std::vector<int64_t> SwaxForCausalLM::eos_token_ids() const {
  if (config_.eos_token_id >= 0) return {config_.eos_token_id};
  return {};
}

}  // namespace swarmt::models
