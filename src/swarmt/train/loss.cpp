#include "swarmt/train/loss.h"

#include "swarmt/data/batch.h"

namespace swarmt::train {

LossTerms cross_entropy_sum(const at::Tensor& logits, const at::Tensor& targets) {
  const int64_t V = logits.size(-1);
  auto flat_logits = logits.reshape({-1, V}).to(logits.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  auto flat_targets = targets.reshape({-1}).to(logits.device());
  LossTerms out;
  // reduction 2 = sum (at::Reduction::Sum), ignore_index -100.
  out.sum = at::cross_entropy_loss(flat_logits, flat_targets, /*weight=*/{}, at::Reduction::Sum, data::kIgnoreIndex);
  out.count = (flat_targets != data::kIgnoreIndex).sum().item<int64_t>();
  return out;
}

}  // namespace swarmt::train
