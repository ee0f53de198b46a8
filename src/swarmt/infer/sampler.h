// Next-token sampling: greedy (temperature 0), or temperature + top-k + top-p (nucleus), reproducible
// from a seed (the draw is a keyed hash of (seed, step), not a global generator).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace swarmt::infer {

struct SamplingOptions {
  double temperature = 0.0;  // 0: greedy (argmax)
  int64_t top_k = 0;         // 0: no top-k cut
  double top_p = 1.0;        // 1: no nucleus cut
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(SamplingOptions options);
  // logits: (V) for one position. Returns the chosen id.
  int64_t sample(const at::Tensor& logits);

 private:
  SamplingOptions options_;
  uint64_t draws_ = 0;
};

}  // namespace swarmt::infer
