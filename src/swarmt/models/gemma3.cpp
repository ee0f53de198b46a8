#include "swarmt/models/gemma3.h"

#include <cmath>

#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/init.h"
#include "swarmt/nn/residual_block.h"

namespace swarmt::models {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::shared_ptr<nn::DecoderLayer> make_gemma3_layer(const Gemma3Config& c, int64_t index) {
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
  a.qk_norm = true;  // q_norm / k_norm multiply in fp32 too (AttentionLayer: cast_before_weight = false)
  a.qk_norm_eps = c.rms_norm_eps;
  nn::ResidualBlockOptions o;
  o.mixer_name = "self_attn";
  o.hidden_size = c.hidden_size;
  o.intermediate_size = c.intermediate_size;
  o.activation = nn::activation_from_name(c.hidden_activation, "config.json: field 'hidden_activation'");
  o.norm_eps = c.rms_norm_eps;
  o.norm_cast_before_weight = false;
  o.sandwich_norms = true;
  return std::make_shared<nn::ResidualBlock>(nn::AttentionLayer(a).ptr(), o);
}

DecoderLMOptions gemma3_decoder_options(const Gemma3Config& c) {
  DecoderLMOptions o;
  o.vocab_size = c.vocab_size;
  o.hidden_size = c.hidden_size;
  o.norm_eps = c.rms_norm_eps;
  o.norm_cast_before_weight = false;
  o.tie_word_embeddings = c.tie_word_embeddings;
  o.embedding_scale = std::sqrt(static_cast<double>(c.hidden_size));
  o.final_logit_softcap = c.final_logit_softcapping;
  return o;
}

}  // namespace

bool is_gemma_norm_weight(const std::string& name) { return ends_with(name, "norm.weight"); }

Gemma3ForCausalLM::Gemma3ForCausalLM(const Gemma3Config& config)
    : DecoderLM(gemma3_decoder_options(config), config.num_hidden_layers,
                [&config](int64_t i) { return make_gemma3_layer(config, i); }),
      config_(config) {
  at::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    if (is_gemma_norm_weight(item.key())) item.value().fill_(1.0);  // folded 1 + w with w = 0 (HF init)
    else if (item.value().dim() >= 2 && !nn::random_init_skipped()) item.value().normal_(0.0, 0.02);
  }
}

at::Tensor Gemma3ForCausalLM::to_checkpoint(const std::string& name, const at::Tensor& parameter) const {
  if (!is_gemma_norm_weight(name)) return parameter;
  // The norms are kept in fp32 (or fp64); the checkpoint stores them like the other weights, whose dtype
  // the embedding (the first parameter) carries.
  return (parameter.detach() - 1.0).to(model->embed_tokens->weight.scalar_type());
}

void Gemma3ForCausalLM::load_tensor(const std::string& name, const at::Tensor& stored, at::Tensor& parameter) {
  if (!is_gemma_norm_weight(name)) {
    parameter.copy_(stored);
    return;
  }
  // Fold HF's (1 + w) in fp32, as HF computes it, and keep the result in fp32.
  auto precision = parameter.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  parameter.set_data(stored.to(precision) + 1.0);
}

}  // namespace swarmt::models
