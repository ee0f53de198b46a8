// The gated MLP's act(g) ⊙ u for training on CPU: one pass forward and one backward over the fused
// [g | u] product, in place of the activation, product and their backward as separate ATen ops.
#pragma once

#include <ATen/ATen.h>

#include "swarmt/nn/gated_mlp.h"

namespace swarmt::nn {

// Whether gated_product_cpu takes tensors like gu (or the x it is computed from): fp32, on the CPU.
bool gated_product_cpu_applies(const at::Tensor& gu);

// gu: (..., 2I), g = gu[..., :I], u = gu[..., I:] -> act(g) ⊙ u, (..., I). Differentiable in gu:
//   dg = dh ⊙ u ⊙ act'(g),  du = dh ⊙ act(g)
// with SiLU act(g) = g σ(g), act' = σ (1 + g (1 − σ)); GELU-tanh act(g) = ½ g (1 + t),
// t = tanh(√(2/π) (g + 0.044715 g³)), act' = ½ (1 + t) + ½ g (1 − t²) √(2/π) (1 + 3 · 0.044715 g²).
at::Tensor gated_product_cpu(const at::Tensor& gu, Activation act);

}  // namespace swarmt::nn
