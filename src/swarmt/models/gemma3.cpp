#include "swarmt/models/gemma3.h"

#include <cmath>

#include "swarmt/core/error.h"

namespace swarmt::models {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

nn::RMSNorm gemma_norm(int64_t dim, double eps) { return nn::RMSNorm(dim, eps, /*cast_before_weight=*/false); }

}  // namespace

bool is_gemma_norm_weight(const std::string& name) { return ends_with(name, "norm.weight"); }

Gemma3DecoderLayer::Gemma3DecoderLayer(const Gemma3Config& c, int64_t index) {
  const bool sliding = c.sliding.at(index);
  nn::AttentionLayerOptions a;
  a.hidden_size = c.hidden_size;
  a.num_heads = c.num_attention_heads;
  a.num_kv_heads = c.num_key_value_heads;
  a.head_dim = c.head_dim;
  a.rope_theta = sliding ? c.rope_theta_local : c.rope_theta_global;
  if (!sliding) a.rope_scaling = c.rope_scaling;
  a.window = sliding ? c.sliding_window : 0;
  a.scale = 1.0 / std::sqrt(c.query_pre_attn_scalar);
  a.softcap = c.attn_logit_softcapping;
  a.qk_norm = true;
  a.qk_norm_eps = c.rms_norm_eps;
  input_layernorm = register_module("input_layernorm", gemma_norm(c.hidden_size, c.rms_norm_eps));
  self_attn = register_module("self_attn", nn::AttentionLayer(a));
  post_attention_layernorm = register_module("post_attention_layernorm", gemma_norm(c.hidden_size, c.rms_norm_eps));
  pre_feedforward_layernorm = register_module("pre_feedforward_layernorm", gemma_norm(c.hidden_size, c.rms_norm_eps));
  mlp = register_module("mlp", nn::GatedMLP(c.hidden_size, c.intermediate_size,
                                            nn::activation_from_name(c.hidden_activation, "config.json: field 'hidden_activation'")));
  post_feedforward_layernorm = register_module("post_feedforward_layernorm", gemma_norm(c.hidden_size, c.rms_norm_eps));
  // q_norm / k_norm come from AttentionLayer with cast_before_weight = false as well.
}

at::Tensor Gemma3DecoderLayer::forward(const at::Tensor& x, const nn::LayerContext& ctx) {
  auto h = x + post_attention_layernorm->forward(self_attn->forward(input_layernorm->forward(x), ctx));
  return h + post_feedforward_layernorm->forward(mlp->forward(pre_feedforward_layernorm->forward(h)));
}

at::Tensor Gemma3DecoderLayer::forward_stateful(const at::Tensor& x, nn::LayerState& state) {
  auto h = x + post_attention_layernorm->forward(self_attn->forward_stateful(input_layernorm->forward(x), state));
  return h + post_feedforward_layernorm->forward(mlp->forward(pre_feedforward_layernorm->forward(h)));
}

std::unique_ptr<nn::LayerState> Gemma3DecoderLayer::new_state(int64_t batch, at::ScalarType dtype, at::Device device) const {
  return self_attn->new_state(batch, dtype, device);
}

Gemma3ForCausalLM::Gemma3ForCausalLM(const Gemma3Config& config) : config_(config) {
  model = register_module("model", DecoderStack(config.vocab_size, config.hidden_size, config.rms_norm_eps,
                                                /*norm_cast_before_weight=*/false));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) model->add_layer(std::make_shared<Gemma3DecoderLayer>(config, i));
  if (!config.tie_word_embeddings)
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.hidden_size, config.vocab_size).bias(false)));
  at::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    if (is_gemma_norm_weight(item.key())) item.value().fill_(1.0);  // folded 1 + w with w = 0 (HF init)
    else if (item.value().dim() >= 2) item.value().normal_(0.0, 0.02);
  }
}

at::Tensor Gemma3ForCausalLM::embed(const at::Tensor& tokens) {
  const auto& weight = model->embed_tokens->weight;
  // HF keeps embed_scale as a tensor and casts it to the weights' dtype: sqrt(1152) = 33.94 becomes 34.0
  // in bf16.
  auto scale = at::scalar_tensor(std::sqrt(static_cast<double>(config_.hidden_size)), at::kFloat).to(weight.scalar_type());
  return model->embed_tokens->forward(tokens) * scale.to(weight.device());
}

at::Tensor Gemma3ForCausalLM::head(const at::Tensor& hidden) {
  auto h = model->norm->forward(hidden);
  auto logits = lm_head ? lm_head->forward(h) : at::matmul(h, model->embed_tokens->weight.t());
  logits = logits.to(hidden.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  if (config_.final_logit_softcapping > 0)
    logits = config_.final_logit_softcapping * at::tanh(logits / config_.final_logit_softcapping);
  return logits;
}

std::vector<std::pair<std::string, at::Tensor>> Gemma3ForCausalLM::checkpoint_tensors() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  at::ScalarType stored = at::kFloat;
  for (const auto& item : named_parameters())
    if (!is_gemma_norm_weight(item.key())) {
      stored = item.value().scalar_type();
      break;
    }
  for (const auto& item : named_parameters()) {
    if (is_gemma_norm_weight(item.key())) out.emplace_back(item.key(), (item.value().detach() - 1.0).to(stored));
    else out.emplace_back(item.key(), item.value());
  }
  return out;
}

void Gemma3ForCausalLM::load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                                const std::string& source) {
  at::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    at::Tensor stored = lookup(item.key());
    SWARMT_CHECK_INPUT(stored.defined(), source, ": tensor '", item.key(), "' is missing");
    SWARMT_CHECK_INPUT(stored.sizes() == item.value().sizes(), source, ": tensor '", item.key(), "' has shape ",
                       stored.sizes(), ", expected ", item.value().sizes());
    if (is_gemma_norm_weight(item.key())) {
      // Fold HF's (1 + w) in fp32, as HF computes it, and keep the result in fp32.
      auto precision = item.value().scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
      item.value().set_data(stored.to(precision) + 1.0);
    } else {
      item.value().copy_(stored);
    }
  }
}

}  // namespace swarmt::models
