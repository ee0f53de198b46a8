#include "swarmt/infer/sampler.h"

#include "swarmt/core/error.h"
#include "swarmt/core/random.h"

namespace swarmt::infer {

Sampler::Sampler(SamplingOptions options) : options_(options) {
  SWARMT_CHECK_INPUT(options_.temperature >= 0, "--temperature must be >= 0 (0 = greedy)");
  SWARMT_CHECK_INPUT(options_.top_k >= 0, "--top-k must be >= 0 (0 = off)");
  SWARMT_CHECK_INPUT(options_.top_p > 0 && options_.top_p <= 1, "--top-p must be in (0, 1]");
}

int64_t Sampler::sample(const at::Tensor& logits) {
  auto l = logits.detach().to(at::kCPU).to(at::kDouble).reshape({-1});
  if (options_.temperature <= 0) return l.argmax().item<int64_t>();
  // Sort once; apply top-k and top-p on the sorted probabilities; inverse-CDF draw.
  auto sorted = (l / options_.temperature).sort(/*dim=*/0, /*descending=*/true);
  auto values = std::get<0>(sorted);
  auto indices = std::get<1>(sorted);
  int64_t keep = values.size(0);
  if (options_.top_k > 0) keep = std::min<int64_t>(keep, options_.top_k);
  auto probs = at::softmax(values.narrow(0, 0, keep), 0);
  if (options_.top_p < 1.0) {
    auto cumulative = probs.cumsum(0);
    // Smallest prefix whose mass reaches top_p (at least one token).
    int64_t n = (cumulative < options_.top_p).sum().item<int64_t>() + 1;
    keep = std::min<int64_t>(keep, n);
    probs = probs.narrow(0, 0, keep);
    probs = probs / probs.sum();
  }
  const double u = uniform_from_key(mix_key(options_.seed, draws_++));
  const double* p = probs.data_ptr<double>();
  double acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += p[i];
    if (u < acc) return indices[i].item<int64_t>();
  }
  return indices[keep - 1].item<int64_t>();
}

}  // namespace swarmt::infer
