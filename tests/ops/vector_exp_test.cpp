// The softmax pieces of a row (ops/vector_exp.h) on every kernel level: e^x within 2.5 ulp of std::exp
// over the whole fp32 range (the clamp edges, subnormal results, −inf), e^(x − shift) with its sum, and
// the maximum, at every length around the 8- and 16-lane vectors so that each masked tail is covered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/kernel_levels.h"
#include "swarmt/ops/vector_exp.h"

namespace swarmt::ops {
namespace {

void expect_exp(float x, float got) {
  const float expected = std::exp(x);
  if (expected < std::numeric_limits<float>::min()) {  // subnormal results: absolute, not relative
    EXPECT_LE(std::abs(got), 1e-37f) << "x = " << x;
    return;
  }
  EXPECT_LE(std::abs(got - expected), 2.5f * std::numeric_limits<float>::epsilon() * expected) << "x = " << x;
}

TEST(VectorExp, exp_is_within_two_ulp_of_std_exp_and_zero_at_minus_infinity) {
  for_each_kernel_level([] {
    std::vector<float> x;
    for (float v = -110.0f; v <= 88.0f; v += 0.37f) x.push_back(v);
    for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 0.6931472f, -87.3f, -87.4f, -88.0f, -103.9f, -104.5f, 88.5f, 88.69f})
      x.push_back(v);
    x.push_back(-std::numeric_limits<float>::infinity());
    std::vector<float> y = x;
    exp_inplace(y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) expect_exp(x[i], y[i]);
    EXPECT_EQ(y.back(), 0.0f);  // masked attention slots weigh exactly nothing
  });
}

// Rows of every length from 0 to 40, all negative (a tail read as zeros would win the maximum), with a −inf
// (a masked key) in each: the maximum, e^(x − max) in place, their sum, and nothing past the row written.
TEST(VectorExp, softmax_pieces_equal_the_definition_at_every_tail_length) {
  for_each_kernel_level([] {
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<float> row(static_cast<size_t>(n) + 1);
      for (int64_t i = 0; i < n; ++i) row[static_cast<size_t>(i)] = -1.0f - 0.37f * static_cast<float>((i * 7) % 11);
      if (n > 2) row[1] = -std::numeric_limits<float>::infinity();
      row[static_cast<size_t>(n)] = 123.0f;  // past the row: never read into the max, never written
      float want_max = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < n; ++i) want_max = std::max(want_max, row[static_cast<size_t>(i)]);
      EXPECT_EQ(max_of(row.data(), n), want_max) << "n = " << n;
      if (n == 0) continue;
      const std::vector<float> before = row;
      const float sum = exp_shifted_sum(row.data(), n, want_max);
      double want_sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        expect_exp(before[static_cast<size_t>(i)] - want_max, row[static_cast<size_t>(i)]);
        want_sum += std::exp(static_cast<double>(before[static_cast<size_t>(i)]) - want_max);
      }
      EXPECT_NEAR(sum, want_sum, 1e-5 * want_sum) << "n = " << n;
      EXPECT_EQ(row[static_cast<size_t>(n)], 123.0f) << "wrote past the row, n = " << n;
    }
  });
}

}  // namespace
}  // namespace swarmt::ops
