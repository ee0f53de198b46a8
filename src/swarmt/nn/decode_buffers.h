// Helpers of the decode steps on raw buffers (Mixer::decode_token, ResidualBlock's one-token path):
// which tensors they can read, this thread's reusable buffers, and RMSNorm rows with a module's weight.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "swarmt/nn/norms.h"
#include "swarmt/ops/rmsnorm.h"

namespace swarmt::nn::decode {

// A CPU tensor a raw path can read as T: contiguous, of that dtype, with no gradient to record.
template <typename T>
bool readable_as(const at::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == c10::CppTypeToScalarType<T>::value &&
         t.is_contiguous() && !(at::GradMode::is_enabled() && t.requires_grad());
}

// A buffer with room for n values, reused from token to token (callers hold it thread_local).
template <typename V>
V* scratch(std::vector<V>& buffer, int64_t n) {
  if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
  return buffer.data();
}

// An RMSNorm whose weight a raw path can read (fp32 or bf16; the activations' dtype may differ).
inline bool norm_readable(const RMSNorm& norm) {
  return readable_as<float>(norm->weight) || readable_as<at::BFloat16>(norm->weight);
}

// The norm of each of `rows` rows of d values, from x to y (y may be x), rounded as RMSNorm rounds.
template <typename T>
void norm_rows(const RMSNorm& norm, const T* x, int64_t rows, int64_t d, T* y) {
  for (int64_t r = 0; r < rows; ++r) {
    if (norm->weight.scalar_type() == at::kBFloat16)
      ops::rms_norm_row(x + r * d, d, norm->weight.data_ptr<at::BFloat16>(), norm->eps, norm->cast_before_weight,
                        y + r * d);
    else
      ops::rms_norm_row(x + r * d, d, norm->weight.data_ptr<float>(), norm->eps, norm->cast_before_weight, y + r * d);
  }
}

}  // namespace swarmt::nn::decode
