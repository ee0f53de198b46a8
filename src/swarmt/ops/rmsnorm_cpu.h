// RMSNorm for training on CPU: forward and backward each one pass over the rows, in place of the
// eight ATen ops of the forward and the dozen of their backward (every one a full pass over the
// activations, and a wake-up of the thread pool).
#pragma once

#include <ATen/ATen.h>

namespace swarmt::ops {

// Whether rms_norm_cpu takes these arguments: fp32 x on the CPU, a fp32 weight (D) or none.
bool rms_norm_cpu_applies(const at::Tensor& x, const at::Tensor& weight);

// y = x · r · w, r = 1 / sqrt(mean(x²) + eps) per row; differentiable in x and weight:
//   dx = r · (g ⊙ w) − x · r³ · Σ(g ⊙ w ⊙ x) / D,   dw = Σ_rows g ⊙ x · r.
// The mean of squares is summed in fp64, r rounded to fp32.
at::Tensor rms_norm_cpu(const at::Tensor& x, const at::Tensor& weight, double eps);

}  // namespace swarmt::ops
