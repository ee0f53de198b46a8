// Applying an nn.Linear through swarmt's kernels: at::linear, or the matvec kernel when only a few rows
// are multiplied without autograd (decoding; ops/matvec.h says why that is faster).
#pragma once

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include "swarmt/ops/matvec.h"

namespace swarmt::nn {

// An nn.Linear (in -> out) and an nn.Embedding, initialised as torch initialises them, unless a
// SkipRandomInit (nn/init.h) lives on this thread: then their parameters are left as allocated, for a
// checkpoint to overwrite. torch's constructors always draw their initialisation, which costs seconds
// for a model of hundreds of millions of weights that loading replaces anyway.
torch::nn::Linear linear_layer(int64_t in, int64_t out, bool bias);
torch::nn::Embedding embedding_layer(int64_t count, int64_t dim);

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
