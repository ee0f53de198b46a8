// The short convolution and its SiLU (the Gated DeltaNet's q | k | v, the mLSTM's q/k input) for
// training on CPU: one pass forward and one backward over (B, N, C), in place of the K shifted
// multiply-adds, masks and activation as ATen ops (some forty passes over the activations with their
// backward, per convolution).
#pragma once

#include <ATen/ATen.h>

namespace swarmt::ops {

// Whether short_conv_silu_cpu takes these: fp32 x (B, N, C) and weight (C, K) on the CPU.
bool short_conv_silu_cpu_applies(const at::Tensor& x, const at::Tensor& weight);

// silu(short_conv(x, weight, {}, resets).first): no cache (zeros before the sequence), document resets
// as short_conv takes them. Differentiable in x and weight; with y the convolution's output,
//   dy = dz ⊙ σ(y) (1 + y (1 − σ(y))),
//   dx[t − lag_j] += w_j ⊙ dy[t],  dw_j = Σ_{b,t} dy[t] ⊙ x[t − lag_j]   (lag_j = K − 1 − j, taps the
// reset mask keeps).
at::Tensor short_conv_silu_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& resets);

}  // namespace swarmt::ops
