// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, reduced in fp32.
#pragma once

#include <ATen/ATen.h>

namespace swarmt::ops {

// x: (..., D); weight: (D) or undefined (no scale). The normalisation runs in fp32. With
// cast_before_weight (HF Llama) the normalised value is cast back to x's dtype before the weight
// multiply; without it (HF Gemma-3, whose (1 + w) weights are folded in at load) the multiply runs in
// fp32 and the result is cast at the end. Differentiable.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, bool cast_before_weight = true);

}  // namespace swarmt::ops
