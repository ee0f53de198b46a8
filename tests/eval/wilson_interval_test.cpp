#include "swarmt/eval/wilson_interval.h"

#include <gtest/gtest.h>

#include "swarmt/core/error.h"

namespace swarmt::eval {
namespace {

// Known values of the 95 % Wilson interval (z = 1.96).
TEST(WilsonInterval, matches_known_values) {
  const Interval a = wilson_interval(40, 50);  // specs/experiments.md: 40/50 -> [0.67, 0.89]
  EXPECT_NEAR(a.low, 0.6696, 1e-4);
  EXPECT_NEAR(a.high, 0.8875, 1e-4);
  const Interval b = wilson_interval(5, 10);
  EXPECT_NEAR(b.low, 0.2366, 1e-4);
  EXPECT_NEAR(b.high, 0.7634, 1e-4);
}

TEST(WilsonInterval, stays_inside_zero_one_at_the_extremes) {
  const Interval none = wilson_interval(0, 10);  // upper bound z² / (n + z²)
  EXPECT_DOUBLE_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 3.8415 / 13.8415, 1e-4);
  const Interval all = wilson_interval(10, 10);
  EXPECT_NEAR(all.low, 10.0 / 13.8415, 1e-4);
  EXPECT_DOUBLE_EQ(all.high, 1.0);
}

TEST(WilsonInterval, narrows_with_more_trials_and_knows_nothing_at_zero) {
  const Interval small = wilson_interval(8, 10), large = wilson_interval(800, 1000);
  EXPECT_LT(large.high - large.low, (small.high - small.low) / 5);
  EXPECT_LT(large.low, 0.8);
  EXPECT_GT(large.high, 0.8);
  const Interval empty = wilson_interval(0, 0);
  EXPECT_EQ(empty.low, 0.0);
  EXPECT_EQ(empty.high, 1.0);
}

TEST(WilsonInterval, impossible_counts_are_an_internal_error) {
  EXPECT_THROW(wilson_interval(11, 10), Error);
  EXPECT_THROW(wilson_interval(-1, 10), Error);
}

}  // namespace
}  // namespace swarmt::eval
