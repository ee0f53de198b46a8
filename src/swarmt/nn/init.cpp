#include "swarmt/nn/init.h"

#include <cmath>

namespace swarmt::nn {
namespace {
thread_local bool skip_random_init = false;
}  // namespace

SkipRandomInit::SkipRandomInit() : previous_(skip_random_init) { skip_random_init = true; }
SkipRandomInit::~SkipRandomInit() { skip_random_init = previous_; }
bool random_init_skipped() { return skip_random_init; }

void small_init_(at::Tensor weight, int64_t dim) {
  if (skip_random_init) return;
  at::NoGradGuard no_grad;
  weight.normal_(0.0, std::sqrt(2.0 / (5.0 * static_cast<double>(dim))));
}

void wang_init_(at::Tensor weight, int64_t dim, int64_t num_blocks) {
  if (skip_random_init) return;
  at::NoGradGuard no_grad;
  weight.normal_(0.0, 2.0 / (static_cast<double>(num_blocks) * std::sqrt(static_cast<double>(dim))));
}

void normal_init_(at::Tensor weight, double std) {
  if (skip_random_init) return;
  at::NoGradGuard no_grad;
  weight.normal_(0.0, std);
}

}  // namespace swarmt::nn
