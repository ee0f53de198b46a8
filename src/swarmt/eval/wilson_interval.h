// Confidence intervals for accuracies: the Wilson score interval, which (unlike p ± z·sqrt(p(1-p)/n))
// stays inside [0, 1] and keeps its coverage at 0 % and 100 % and for small n:
//   bounds = (p + z²/(2n) ± z·sqrt(p(1-p)/n + z²/(4n²))) / (1 + z²/n),   p = successes / n
// (Wilson 1927; z = 1.96 for 95 %). Example: 40 of 50 -> [0.670, 0.888].
#pragma once

#include <cstdint>

namespace swarmt::eval {

struct Interval {
  double low = 0, high = 0;  // fractions in [0, 1]
};

// n = 0 gives [0, 1] (nothing is known).
Interval wilson_interval(int64_t successes, int64_t n, double z = 1.959963984540054);

}  // namespace swarmt::eval
