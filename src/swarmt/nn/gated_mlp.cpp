#include "swarmt/nn/gated_mlp.h"

#include <cmath>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/nn/gated_product_cpu.h"
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
  gate_proj = register_module("gate_proj", linear_layer(hidden, intermediate, bias));
  up_proj = register_module("up_proj", linear_layer(hidden, intermediate, bias));
  down_proj = register_module("down_proj", linear_layer(intermediate, hidden, bias));
}

namespace {

float activate(float g, Activation act) {
  if (act == Activation::SiLU) return g / (1.0f + std::exp(-g));
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * g * (1.0f + std::tanh(k * (g + 0.044715f * g * g * g)));
}

}  // namespace

template <typename T>
void gated_product_rows(const float* gu, int64_t rows, int64_t intermediate, Activation act, T* out) {
  auto round = [](float v) { return static_cast<float>(static_cast<T>(v)); };
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gu + r * 2 * intermediate;
    const float* u = g + intermediate;
    for (int64_t i = 0; i < intermediate; ++i)
      out[r * intermediate + i] = static_cast<T>(round(activate(round(g[i]), act)) * round(u[i]));
  }
}
template void gated_product_rows<float>(const float*, int64_t, int64_t, Activation, float*);
template void gated_product_rows<at::BFloat16>(const float*, int64_t, int64_t, Activation, at::BFloat16*);

namespace {

template <typename T>
at::Tensor gated_product(const at::Tensor& gu, int64_t intermediate, Activation act) {
  at::Tensor h = at::empty({gu.size(0), intermediate}, gu.options().dtype(c10::CppTypeToScalarType<T>::value));
  gated_product_rows(gu.data_ptr<float>(), gu.size(0), intermediate, act, h.data_ptr<T>());
  return h;
}

}  // namespace

at::Tensor GatedMLPImpl::forward(const at::Tensor& x) {
  const bool no_bias = !gate_proj->bias.defined() && !up_proj->bias.defined();
  const bool graph = at::GradMode::is_enabled() &&
                     (x.requires_grad() || gate_proj->weight.requires_grad() || up_proj->weight.requires_grad());
  if (graph && no_bias && x.device().is_cpu()) {
    // Training: gate and up as one GEMM; in fp32 (not under bf16 autocast) the activation and product
    // fused forward and backward.
    const at::Tensor gu = ops::linear(x, at::cat({gate_proj->weight, up_proj->weight}, 0));
    const int64_t intermediate = gate_proj->weight.size(0);
    if (gated_product_cpu_applies(gu)) return linear(down_proj, gated_product_cpu(gu, activation));
    return linear(down_proj, apply_activation(gu.narrow(-1, 0, intermediate), activation) *
                                 gu.narrow(-1, intermediate, intermediate));
  }
  const bool fused = no_bias && ops::matvec_applies(x, gate_proj->weight, {}) && ops::matvec_applies(x, up_proj->weight, {});
  if (!fused) return linear(down_proj, apply_activation(linear(gate_proj, x), activation) * linear(up_proj, x));
  // Decoding: gate and up in one pass over both weights, the activation and product in one loop.
  const int64_t intermediate = gate_proj->weight.size(0);
  const at::Tensor gu = ops::matvec_group_fp32(x, {gate_proj->weight, up_proj->weight});
  at::Tensor h = x.scalar_type() == at::kFloat ? gated_product<float>(gu, intermediate, activation)
                                                : gated_product<at::BFloat16>(gu, intermediate, activation);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = intermediate;
  return linear(down_proj, h.view(shape));
}

}  // namespace swarmt::nn
