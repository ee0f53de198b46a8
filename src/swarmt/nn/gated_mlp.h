// Gated feed-forward block: down( act(gate(x)) ⊙ up(x) ). act = SiLU gives SwiGLU (SWAX, Llama); GELU-tanh
// gives GeGLU (Gemma-3). Tensor names follow HF: gate_proj, up_proj, down_proj.
#pragma once

#include <torch/torch.h>

#include <string>

namespace swarmt::nn {

enum class Activation { SiLU, GeluTanh };

// "silu" / "gelu_pytorch_tanh" / "gelu_tanh" (HF hidden_act names) -> Activation; throws naming `field`.
Activation activation_from_name(const std::string& name, const std::string& field);

at::Tensor apply_activation(const at::Tensor& x, Activation act);

// act(g) ⊙ u from the unrounded fp32 products [g | u] of `rows` rows (rows, 2I), rounded as the unfused
// ops round in T (float or bf16): g and u to T (as at::linear returns them), act(g) to T, the product to T.
template <typename T>
void gated_product_rows(const float* gu, int64_t rows, int64_t intermediate, Activation act, T* out);

class GatedMLPImpl : public torch::nn::Module {
 public:
  GatedMLPImpl(int64_t hidden_size, int64_t intermediate_size, Activation act, bool bias = false);
  at::Tensor forward(const at::Tensor& x);  // (..., hidden) -> (..., hidden)
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
  Activation activation;
};
TORCH_MODULE(GatedMLP);

}  // namespace swarmt::nn
