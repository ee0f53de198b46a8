#include "swarmt/models/decoder_stack.h"

#include "swarmt/nn/linear.h"

namespace swarmt::models {

DecoderStackImpl::DecoderStackImpl(int64_t vocab_size, int64_t hidden_size, double norm_eps,
                                   bool norm_cast_before_weight) {
  embed_tokens = register_module("embed_tokens", nn::embedding_layer(vocab_size, hidden_size));
  layers = register_module("layers", torch::nn::ModuleList());
  norm = register_module("norm", nn::RMSNorm(hidden_size, norm_eps, norm_cast_before_weight));
}

void DecoderStackImpl::add_layer(std::shared_ptr<nn::DecoderLayer> layer) {
  layers->push_back(layer);
  decoder_layers.push_back(std::move(layer));
}

}  // namespace swarmt::models
