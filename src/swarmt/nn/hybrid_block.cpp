#include "swarmt/nn/hybrid_block.h"

#include "swarmt/nn/init.h"

namespace swarmt::nn {
namespace {

ResidualBlockOptions swiglu_pre_norm(ResidualBlockOptions options) {
  options.activation = Activation::SiLU;
  options.mlp_bias = false;
  options.norm_cast_before_weight = true;
  options.sandwich_norms = false;
  return options;
}

}  // namespace

HybridBlock::HybridBlock(char kind, std::shared_ptr<Mixer> mixer, ResidualBlockOptions options)
    : ResidualBlock(std::move(mixer), swiglu_pre_norm(std::move(options))), kind_(kind) {}

void HybridBlock::reset_parameters(int64_t num_blocks) {
  at::NoGradGuard no_grad;
  const int64_t d = options().hidden_size;
  mixer->reset_parameters(num_blocks);
  small_init_(mlp->gate_proj->weight, d);
  small_init_(mlp->up_proj->weight, d);
  wang_init_(mlp->down_proj->weight, options().intermediate_size, num_blocks);
  input_layernorm->weight.fill_(1.0);
  mlp_input_norm->weight.fill_(1.0);
}

}  // namespace swarmt::nn
