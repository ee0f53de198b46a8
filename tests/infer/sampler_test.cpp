#include "swarmt/infer/sampler.h"

#include <gtest/gtest.h>

#include <map>

namespace swarmt::infer {
namespace {

TEST(Sampler, greedy_takes_the_argmax) {
  Sampler s(SamplingOptions{});
  EXPECT_EQ(s.sample(at::tensor({0.1, 3.0, -1.0, 2.9})), 1);
}

TEST(Sampler, top_k_one_is_greedy_at_any_temperature) {
  SamplingOptions o;
  o.temperature = 5.0;
  o.top_k = 1;
  Sampler s(o);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(at::tensor({0.1, 3.0, -1.0, 2.9})), 1);
}

// Frequencies follow softmax(logits / T) restricted to the nucleus.
TEST(Sampler, frequencies_follow_the_tempered_distribution) {
  SamplingOptions o;
  o.temperature = 1.0;
  o.seed = 11;
  Sampler s(o);
  auto logits = at::log(at::tensor({0.5, 0.3, 0.2}, at::kDouble));
  std::map<int64_t, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) counts[s.sample(logits)]++;
  EXPECT_NEAR(counts[0] / double(n), 0.5, 0.015);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.015);
  EXPECT_NEAR(counts[2] / double(n), 0.2, 0.015);
}

TEST(Sampler, top_p_excludes_the_tail) {
  SamplingOptions o;
  o.temperature = 1.0;
  o.top_p = 0.75;
  o.seed = 5;
  Sampler s(o);
  auto logits = at::log(at::tensor({0.5, 0.3, 0.2}, at::kDouble));
  for (int i = 0; i < 2000; ++i) EXPECT_NE(s.sample(logits), 2);
}

TEST(Sampler, same_seed_same_draws) {
  SamplingOptions o;
  o.temperature = 1.0;
  o.seed = 9;
  Sampler a(o), b(o);
  auto logits = at::randn({50});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.sample(logits), b.sample(logits));
}

}  // namespace
}  // namespace swarmt::infer
