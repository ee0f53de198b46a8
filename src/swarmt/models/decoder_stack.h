// The "model" submodule shared by our architectures: token embedding, the decoder layers and the final
// norm, registered under Hugging Face's names (model.embed_tokens, model.layers.<i>, model.norm).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "swarmt/nn/decoder_layer.h"
#include "swarmt/nn/norms.h"

namespace swarmt::models {

class DecoderStackImpl : public torch::nn::Module {
 public:
  DecoderStackImpl(int64_t vocab_size, int64_t hidden_size, double norm_eps, bool norm_cast_before_weight = true);

  void add_layer(std::shared_ptr<nn::DecoderLayer> layer);
  int64_t num_layers() const { return static_cast<int64_t>(decoder_layers.size()); }

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  nn::RMSNorm norm{nullptr};
  std::vector<std::shared_ptr<nn::DecoderLayer>> decoder_layers;  // the same modules, typed
};
TORCH_MODULE(DecoderStack);

}  // namespace swarmt::models
