#include "swarmt/models/llama.h"

#include "swarmt/core/error.h"

namespace swarmt::models {
namespace {

nn::AttentionLayerOptions attention_options(const LlamaConfig& c) {
  nn::AttentionLayerOptions o;
  o.hidden_size = c.hidden_size;
  o.num_heads = c.num_attention_heads;
  o.num_kv_heads = c.num_key_value_heads;
  o.head_dim = c.head_dim;
  o.rope_theta = c.rope_theta;
  o.rope_scaling = c.rope_scaling;
  o.qkv_bias = c.attention_bias;
  o.o_bias = c.attention_bias;
  return o;
}

}  // namespace

LlamaDecoderLayer::LlamaDecoderLayer(const LlamaConfig& c) {
  input_layernorm = register_module("input_layernorm", nn::RMSNorm(c.hidden_size, c.rms_norm_eps));
  self_attn = register_module("self_attn", nn::AttentionLayer(attention_options(c)));
  post_attention_layernorm = register_module("post_attention_layernorm", nn::RMSNorm(c.hidden_size, c.rms_norm_eps));
  mlp = register_module("mlp", nn::GatedMLP(c.hidden_size, c.intermediate_size,
                                            nn::activation_from_name(c.hidden_act, "config.json: field 'hidden_act'"),
                                            c.mlp_bias));
}

at::Tensor LlamaDecoderLayer::forward(const at::Tensor& x, const nn::LayerContext& ctx) {
  auto h = x + self_attn->forward(input_layernorm->forward(x), ctx);
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

at::Tensor LlamaDecoderLayer::forward_stateful(const at::Tensor& x, nn::LayerState& state) {
  auto h = x + self_attn->forward_stateful(input_layernorm->forward(x), state);
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

std::unique_ptr<nn::LayerState> LlamaDecoderLayer::new_state(int64_t batch, at::ScalarType dtype, at::Device device) const {
  return self_attn->new_state(batch, dtype, device);
}

LlamaForCausalLM::LlamaForCausalLM(const LlamaConfig& config) : config_(config) {
  model = register_module("model", DecoderStack(config.vocab_size, config.hidden_size, config.rms_norm_eps));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) model->add_layer(std::make_shared<LlamaDecoderLayer>(config));
  if (!config.tie_word_embeddings)
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.hidden_size, config.vocab_size).bias(false)));
  // HF initialisation (initializer_range 0.02); real use loads pretrained weights.
  at::NoGradGuard no_grad;
  for (auto& p : parameters())
    if (p.dim() >= 2) p.normal_(0.0, 0.02);
}

at::Tensor LlamaForCausalLM::embed(const at::Tensor& tokens) { return model->embed_tokens->forward(tokens); }

at::Tensor LlamaForCausalLM::head(const at::Tensor& hidden) {
  auto h = model->norm->forward(hidden);
  auto logits = lm_head ? lm_head->forward(h) : at::matmul(h, model->embed_tokens->weight.t());
  return logits.to(hidden.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
}

Json LlamaForCausalLM::config_json() const { return config_.original; }

}  // namespace swarmt::models
