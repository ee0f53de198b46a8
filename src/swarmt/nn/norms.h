// Normalisation modules: RMSNorm (block norms, Llama, Gemma with folded 1 + w) and the head-wise
// LayerNorm of the mLSTM layer.
#pragma once

#include <torch/torch.h>

namespace swarmt::nn {

class RMSNormImpl : public torch::nn::Module {
 public:
  // cast_before_weight: HF Llama casts the normalised value to the activation dtype before the weight
  // multiply; Gemma-3 multiplies in fp32 (its weights hold 1 + w after loading).
  RMSNormImpl(int64_t dim, double eps, bool cast_before_weight = true);
  at::Tensor forward(const at::Tensor& x);  // x: (..., dim)
  at::Tensor weight;
  double eps;
  bool cast_before_weight;
};
TORCH_MODULE(RMSNorm);

// LayerNorm over the last dimension of (B, H, N, Dh), one weight vector (H·Dh) covering all heads, no bias
// (xLSTM-7B "headwise norm").
class HeadwiseLayerNormImpl : public torch::nn::Module {
 public:
  HeadwiseLayerNormImpl(int64_t heads, int64_t head_dim, double eps);
  at::Tensor forward(const at::Tensor& x);  // (B, H, N, Dh) -> (B, H, N, Dh)
  at::Tensor weight;                         // (H * Dh)
  int64_t heads, head_dim;
  double eps;
};
TORCH_MODULE(HeadwiseLayerNorm);

}  // namespace swarmt::nn
