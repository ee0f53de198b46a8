#include "swarmt/nn/gated_mlp.h"

#include "swarmt/core/error.h"
#include "swarmt/nn/linear.h"

namespace swarmt::nn {

Activation activation_from_name(const std::string& name, const std::string& field) {
  if (name == "silu" || name == "swish") return Activation::SiLU;
  if (name == "gelu_pytorch_tanh" || name == "gelu_tanh" || name == "gelu_new") return Activation::GeluTanh;
  throw_input_error(field, ": activation '", name, "' is not supported (supported: silu, gelu_pytorch_tanh)");
}

at::Tensor apply_activation(const at::Tensor& x, Activation act) {
  if (act == Activation::SiLU) return at::silu(x);
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as HF gelu_pytorch_tanh.
  return at::gelu(x, "tanh");
}

GatedMLPImpl::GatedMLPImpl(int64_t hidden, int64_t intermediate, Activation act, bool bias) : activation(act) {
  gate_proj = register_module("gate_proj", torch::nn::Linear(torch::nn::LinearOptions(hidden, intermediate).bias(bias)));
  up_proj = register_module("up_proj", torch::nn::Linear(torch::nn::LinearOptions(hidden, intermediate).bias(bias)));
  down_proj = register_module("down_proj", torch::nn::Linear(torch::nn::LinearOptions(intermediate, hidden).bias(bias)));
}

at::Tensor GatedMLPImpl::forward(const at::Tensor& x) {
  return linear(down_proj, apply_activation(linear(gate_proj, x), activation) * linear(up_proj, x));
}

}  // namespace swarmt::nn
