#include "swarmt/models/llama.h"

#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/init.h"
#include "swarmt/nn/residual_block.h"

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

std::shared_ptr<nn::DecoderLayer> make_llama_layer(const LlamaConfig& c) {
  nn::ResidualBlockOptions o;
  o.mixer_name = "self_attn";
  o.hidden_size = c.hidden_size;
  o.intermediate_size = c.intermediate_size;
  o.activation = nn::activation_from_name(c.hidden_act, "config.json: field 'hidden_act'");
  o.mlp_bias = c.mlp_bias;
  o.norm_eps = c.rms_norm_eps;
  return std::make_shared<nn::ResidualBlock>(nn::AttentionLayer(attention_options(c)).ptr(), o);
}

DecoderLMOptions llama_decoder_options(const LlamaConfig& c) {
  DecoderLMOptions o;
  o.vocab_size = c.vocab_size;
  o.hidden_size = c.hidden_size;
  o.norm_eps = c.rms_norm_eps;
  o.tie_word_embeddings = c.tie_word_embeddings;
  return o;
}

}  // namespace

LlamaForCausalLM::LlamaForCausalLM(const LlamaConfig& config)
    : DecoderLM(llama_decoder_options(config), config.num_hidden_layers,
                [&config](int64_t) { return make_llama_layer(config); }),
      config_(config) {
  // HF initialisation (initializer_range 0.02); real use loads pretrained weights.
  if (nn::random_init_skipped()) return;
  at::NoGradGuard no_grad;
  for (auto& p : parameters())
    if (p.dim() >= 2) p.normal_(0.0, 0.02);
}

}  // namespace swarmt::models
