#include "swarmt/eval/wilson_interval.h"

#include <algorithm>
#include <cmath>

#include "swarmt/core/error.h"

namespace swarmt::eval {

Interval wilson_interval(int64_t successes, int64_t n, double z) {
  SWARMT_CHECK(successes >= 0 && successes <= n && z > 0, "wilson_interval: ", successes, " of ", n);
  if (n == 0) return {0.0, 1.0};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(successes) / nn;
  const double z2 = z * z;
  const double centre = p + z2 / (2 * nn);
  const double spread = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  const double denominator = 1 + z2 / nn;
  return {std::max(0.0, (centre - spread) / denominator), std::min(1.0, (centre + spread) / denominator)};
}

}  // namespace swarmt::eval
