// Sums the gradients of the trainable parameters over all ranks, overlapped with backward.
//
// As PyTorch's DistributedDataParallel: parameters are grouped into buckets of about `bucket_bytes`
// (in reverse registration order, the order backward produces their gradients), and a bucket's
// all-reduce is launched as soon as its last gradient has been accumulated, while backward computes the
// gradients of earlier layers. A post-hook on each parameter's gradient accumulator reports that moment.
// Buckets are always launched in index order, so every rank issues the same sequence of collectives.
//
// Backward passes that accumulate into a parameter more than once (ARMT's segment checkpointing runs
// a nested backward per segment) are detected: the early all-reduces are discarded and every bucket is
// reduced again after backward, from the complete gradients. The result is the same, without overlap.
//
// Use per optimizer step:   prepare_for_backward(); loss.backward(); finish();
// (with gradient accumulation, only around the last micro-batch's backward).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "swarmt/train/distributed/process_group.h"

namespace swarmt::train::distributed {

class GradientReducer {
 public:
  static constexpr int64_t kDefaultBucketBytes = int64_t{25} << 20;  // PyTorch DDP's default

  GradientReducer(ProcessGroup& group, std::vector<at::Tensor> parameters, int64_t bucket_bytes = kDefaultBucketBytes);
  ~GradientReducer();  // removes the hooks
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  void prepare_for_backward();
  // Launches the buckets backward did not complete (parameters without a gradient count as zeros),
  // waits for every all-reduce and writes the sums into the parameters' .grad.
  void finish();

  int64_t num_buckets() const;
  // Buckets whose all-reduce started during the last backward (for tests and logs).
  int64_t buckets_overlapped() const;
  bool last_backward_was_reentrant() const;

  struct State;  // shared with the autograd hooks, which hold it weakly

 private:
  std::shared_ptr<State> state_;
};

}  // namespace swarmt::train::distributed
