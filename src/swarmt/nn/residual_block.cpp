#include "swarmt/nn/residual_block.h"

namespace swarmt::nn {

ResidualBlock::ResidualBlock(std::shared_ptr<Mixer> mixer_module, const ResidualBlockOptions& o) : options_(o) {
  SWARMT_CHECK(mixer_module != nullptr, "a block needs a mixer");
  auto norm = [&o] { return RMSNorm(o.hidden_size, o.norm_eps, o.norm_cast_before_weight); };
  // Registration order is the order of the checkpoint tensors: Hugging Face's order of each layout.
  input_layernorm = register_module("input_layernorm", norm());
  mixer = register_module(o.mixer_name, std::move(mixer_module));
  if (o.sandwich_norms) {
    mixer_output_norm = register_module("post_attention_layernorm", norm());
    mlp_input_norm = register_module("pre_feedforward_layernorm", norm());
  } else {
    mlp_input_norm = register_module("post_attention_layernorm", norm());
  }
  mlp = register_module("mlp", GatedMLP(o.hidden_size, o.intermediate_size, o.activation, o.mlp_bias));
  if (o.sandwich_norms) mlp_output_norm = register_module("post_feedforward_layernorm", norm());
}

at::Tensor ResidualBlock::add_mixer_output(const at::Tensor& x, const at::Tensor& mixed) {
  return x + (mixer_output_norm ? mixer_output_norm->forward(mixed) : mixed);
}

at::Tensor ResidualBlock::add_feed_forward(const at::Tensor& h) {
  auto y = mlp->forward(mlp_input_norm->forward(h));
  return h + (mlp_output_norm ? mlp_output_norm->forward(y) : y);
}

at::Tensor ResidualBlock::forward(const at::Tensor& x, const LayerContext& ctx) {
  return add_feed_forward(add_mixer_output(x, mixer->forward(input_layernorm->forward(x), ctx)));
}

at::Tensor ResidualBlock::forward_stateful(const at::Tensor& x, LayerState& state) {
  if (at::Tensor y = decode_token(x, state); y.defined()) return y;
  return add_feed_forward(add_mixer_output(x, mixer->forward_stateful(input_layernorm->forward(x), state)));
}

}  // namespace swarmt::nn
