// The dtype recurrent states run in (mLSTM and Gated DeltaNet cells, ARMT memories): fp32 whatever the
// activation dtype, so bf16 training does not accumulate state in bf16; fp64 for fp64 models (the
// tests' reference precision).
#pragma once

#include <ATen/ATen.h>

namespace swarmt::nn {

inline at::ScalarType recurrent_state_dtype(at::ScalarType activations) {
  return activations == at::kDouble ? at::kDouble : at::kFloat;
}

}  // namespace swarmt::nn
