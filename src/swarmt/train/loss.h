// Next-token cross-entropy, summed (not averaged) so that micro-batches and ranks can be combined into
// an exact mean over all target tokens of an optimizer step.
#pragma once

#include <ATen/ATen.h>

namespace swarmt::train {

struct LossTerms {
  at::Tensor sum;       // scalar, sum of -log p(target) over counted tokens (keeps the graph)
  int64_t count = 0;    // number of counted target tokens
};

// logits: (B, N, V); targets: int64 (B, N) with -100 = ignored.
LossTerms cross_entropy_sum(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace swarmt::train
