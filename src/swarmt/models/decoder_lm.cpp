#include "swarmt/models/decoder_lm.h"

#include "swarmt/nn/linear.h"
#include "swarmt/ops/matvec.h"

namespace swarmt::models {

DecoderLM::DecoderLM(const DecoderLMOptions& o, int64_t num_layers, const LayerFactory& make_layer) : options_(o) {
  model = register_module("model", DecoderStack(o.vocab_size, o.hidden_size, o.norm_eps, o.norm_cast_before_weight));
  for (int64_t i = 0; i < num_layers; ++i) model->add_layer(make_layer(i));
  if (!o.tie_word_embeddings)
    lm_head = register_module("lm_head",
                              nn::linear_layer(o.hidden_size, o.vocab_size, false));
}

at::Tensor DecoderLM::embed(const at::Tensor& tokens) {
  auto x = model->embed_tokens->forward(tokens);
  if (!options_.embedding_scale) return x;
  // HF keeps Gemma's embed_scale as a tensor and casts it to the weights' dtype: sqrt(1152) = 33.94
  // becomes 34.0 in bf16.
  const auto& weight = model->embed_tokens->weight;
  auto scale = at::scalar_tensor(*options_.embedding_scale, at::kFloat).to(weight.scalar_type());
  return x * scale.to(weight.device());
}

at::Tensor DecoderLM::head(const at::Tensor& hidden) {
  auto h = model->norm->forward(hidden);
  auto logits = ops::linear(h, lm_head ? lm_head->weight : model->embed_tokens->weight);
  logits = logits.to(hidden.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  const double cap = options_.final_logit_softcap;
  if (cap > 0) logits = cap * at::tanh(logits / cap);
  return logits;
}

}  // namespace swarmt::models
