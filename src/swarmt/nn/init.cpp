#include "swarmt/nn/init.h"

#include <cmath>

namespace swarmt::nn {

void small_init_(at::Tensor weight, int64_t dim) {
  at::NoGradGuard no_grad;
  weight.normal_(0.0, std::sqrt(2.0 / (5.0 * static_cast<double>(dim))));
}

void wang_init_(at::Tensor weight, int64_t dim, int64_t num_blocks) {
  at::NoGradGuard no_grad;
  weight.normal_(0.0, 2.0 / (static_cast<double>(num_blocks) * std::sqrt(static_cast<double>(dim))));
}

void normal_init_(at::Tensor weight, double std) {
  at::NoGradGuard no_grad;
  weight.normal_(0.0, std);
}

}  // namespace swarmt::nn
