// RoPE for training on CPU: the rotation forward and backward each one pass, reading x through its
// strides (the (B, H, N, D) view of a projection laid out (B, N, H, D)) and writing a contiguous
// result, in place of the narrows, four products, two sums and a concatenation (and the copy that
// made the view contiguous) as ATen ops.
#pragma once

#include <ATen/ATen.h>

namespace swarmt::ops {

// Whether apply_rope_cpu takes these: fp32 x (B, H, N, D) with unit stride in D on the CPU, fp32
// tables (N, h) or (B, N, h) with 2h <= D.
bool apply_rope_cpu_applies(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// apply_rope's rotation, contiguous (B, H, N, D); differentiable in x. The rotation R is orthogonal, so
// the gradient is the inverse rotation: dx1 = g1 c + g2 s, dx2 = g2 c − g1 s; dimensions past 2h pass.
at::Tensor apply_rope_cpu(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace swarmt::ops
