// A causal LM that is a stack of decoder layers between a token embedding and a head: Llama, Gemma-3 and
// SWAX differ only in their layers and in the options below.
//
//   x = embed_tokens[ids] · s                  s: embedding_scale, rounded to the weights' dtype (Gemma-3)
//   x = layer_{L-1}( ... layer_0(x) )
//   logits = c · tanh( W norm(x) / c )        W = lm_head, or embed_tokens when tied; c: soft-cap (0: off)
//
// Logits are fp32 (fp64 when the hidden states are fp64, for reference tests). Tensor names follow
// Hugging Face: model.embed_tokens, model.layers.<i>.*, model.norm, lm_head (absent when tied).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "swarmt/models/causal_lm.h"
#include "swarmt/models/decoder_stack.h"

namespace swarmt::models {

struct DecoderLMOptions {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  double norm_eps = 1e-6;
  bool norm_cast_before_weight = true;    // the final norm; false: Gemma-3 (see nn/norms.h)
  bool tie_word_embeddings = false;
  std::optional<double> embedding_scale;  // Gemma-3: sqrt(hidden_size)
  double final_logit_softcap = 0;         // 0: off
};

class DecoderLM : public CausalLM {
 public:
  // make_layer(i) builds layer i; the modules are made in Hugging Face's order (embedding, layers, norm,
  // lm_head), so default initialisations draw their random numbers in a fixed order: `model init`
  // gives the same weights for the same seed.
  using LayerFactory = std::function<std::shared_ptr<nn::DecoderLayer>(int64_t index)>;
  DecoderLM(const DecoderLMOptions& options, int64_t num_layers, const LayerFactory& make_layer);

  at::Tensor embed(const at::Tensor& tokens) override;
  at::Tensor head(const at::Tensor& hidden) override;
  int64_t num_layers() const override { return model->num_layers(); }
  nn::DecoderLayer& layer(int64_t index) override { return *model->decoder_layers.at(index); }
  int64_t vocab_size() const override { return options_.vocab_size; }
  int64_t hidden_size() const override { return options_.hidden_size; }

  DecoderStack model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // absent when tied

 private:
  DecoderLMOptions options_;
};

}  // namespace swarmt::models
