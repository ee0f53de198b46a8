// Applying an nn.Linear through swarmt's kernels: at::linear, or the matvec kernel when only a few rows
// are multiplied without autograd (decoding; ops/matvec.h says why that is faster).
#pragma once

#include <torch/nn/modules/linear.h>

#include <vector>

#include "swarmt/ops/matvec.h"

namespace swarmt::nn {

inline at::Tensor linear(const torch::nn::Linear& layer, const at::Tensor& x) {
  return ops::linear(x, layer->weight, layer->bias);
}

// The layers applied to the same x, in one parallel pass when the matvec path applies to all
// (ops::linear_group): {linear(a, x), linear(b, x), ...}.
template <typename... Layers>
std::vector<at::Tensor> linear_group(const at::Tensor& x, const Layers&... layers) {
  return ops::linear_group(x, {layers->weight...}, {layers->bias...});
}

}  // namespace swarmt::nn
