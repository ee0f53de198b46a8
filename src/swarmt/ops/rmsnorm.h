// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, reduced in fp32.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>

namespace swarmt::ops {

// x: (..., D); weight: (D) or undefined (no scale). The normalisation runs in fp32. With
// cast_before_weight (HF Llama) the normalised value is cast back to x's dtype before the weight
// multiply; without it (HF Gemma-3, whose (1 + w) weights are folded in at load) the multiply runs in
// fp32 and the result is cast at the end. Differentiable.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, bool cast_before_weight = true);

// One row of d values on raw buffers (decode steps), rounded as rms_norm rounds: the mean of squares
// summed in fp64, the normalised value in fp32, then either cast to T and multiplied by the weight cast
// to T (rounded again), or multiplied by the weight in fp32 and cast once. w may be null (no scale);
// y may be x.
template <typename T, typename W>
void rms_norm_row(const T* x, int64_t d, const W* w, double eps, bool cast_before_weight, T* y) {
  double sum = 0;
  for (int64_t i = 0; i < d; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const float inv = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(d)) + static_cast<float>(eps));
  for (int64_t i = 0; i < d; ++i) {
    const float normed = static_cast<float>(x[i]) * inv;
    if (w == nullptr)
      y[i] = static_cast<T>(normed);
    else if (cast_before_weight)
      y[i] = static_cast<T>(static_cast<float>(static_cast<T>(normed)) * static_cast<float>(static_cast<T>(w[i])));
    else
      y[i] = static_cast<T>(normed * static_cast<float>(w[i]));
  }
}

}  // namespace swarmt::ops
