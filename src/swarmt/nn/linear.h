// Applying an nn.Linear through swarmt's kernels: at::linear, or the matvec kernel when only a few rows
// are multiplied without autograd (decoding; ops/matvec.h says why that is faster).
#pragma once

#include <torch/nn/modules/linear.h>

#include "swarmt/ops/matvec.h"

namespace swarmt::nn {

inline at::Tensor linear(const torch::nn::Linear& layer, const at::Tensor& x) {
  return ops::linear(x, layer->weight, layer->bias);
}

}  // namespace swarmt::nn
