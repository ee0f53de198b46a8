#include "swarmt/train/window_schedule.h"

#include <string>

#include "swarmt/core/error.h"

#include <gtest/gtest.h>

namespace swarmt::train {
namespace {

WindowSchedule stochastic(double p) {
  WindowSchedule s;
  s.type = "stochastic";
  s.short_window = 16;
  s.long_window = 256;
  s.p_short = p;
  s.anneal_fraction = 0.1;
  s.seed = 7;
  return s;
}

// Before annealing the short window is drawn with frequency ~p; after it, never.
TEST(WindowSchedule, short_window_fraction_is_near_p_before_annealing_and_zero_after) {
  for (double p : {0.5, 0.75}) {
    auto s = stochastic(p);
    const int64_t total = 20000, anneal = s.anneal_start(total);
    EXPECT_EQ(anneal, 18000);
    int64_t shorts = 0;
    for (int64_t step = 0; step < anneal; ++step) {
      int64_t w = s.window_at(step, total);
      ASSERT_TRUE(w == 16 || w == 256);
      shorts += w == 16;
    }
    // Binomial(18000, p): 4 standard deviations is about 0.015.
    EXPECT_NEAR(static_cast<double>(shorts) / anneal, p, 0.015) << "p = " << p;
    for (int64_t step = anneal; step < total; ++step) EXPECT_EQ(s.window_at(step, total), 256);
  }
}

// With p_short_warmup the short window's probability rises linearly from 0: none at the start, about
// half of p over the ramp, p after it.
TEST(WindowSchedule, p_short_warmup_ramps_the_short_window_in) {
  auto s = stochastic(0.5);
  s.p_short_warmup = 0.4;
  const int64_t total = 50000, ramp = 20000;
  EXPECT_DOUBLE_EQ(s.p_short_at(0, total), 0.0);
  EXPECT_DOUBLE_EQ(s.p_short_at(ramp / 2, total), 0.25);
  EXPECT_DOUBLE_EQ(s.p_short_at(ramp, total), 0.5);
  int64_t early = 0, ramped = 0, late = 0;
  for (int64_t step = 0; step < 1000; ++step) early += s.window_at(step, total) == 16;
  for (int64_t step = 0; step < ramp; ++step) ramped += s.window_at(step, total) == 16;
  for (int64_t step = ramp; step < s.anneal_start(total); ++step) late += s.window_at(step, total) == 16;
  EXPECT_LT(early, 25 + 4 * 5);                                  // mean p over [0, 1000) is 0.0125
  EXPECT_NEAR(static_cast<double>(ramped) / ramp, 0.25, 0.015);  // mean p over the ramp
  EXPECT_NEAR(static_cast<double>(late) / (s.anneal_start(total) - ramp), 0.5, 0.015);
  Json j = parse_json(R"({"type": "stochastic", "short_window": 8, "long_window": 64, "p_short_warmup": 0.95})", "t");
  EXPECT_THROW(WindowSchedule::from_json(JsonView(j, "train.json", "window_schedule.")), Error);
}

TEST(WindowSchedule, is_a_pure_function_of_seed_and_step) {
  auto a = stochastic(0.5), b = stochastic(0.5), c = stochastic(0.5);
  c.seed = 8;
  int differ = 0;
  for (int64_t step = 0; step < 200; ++step) {
    EXPECT_EQ(a.window_at(step, 1000), b.window_at(step, 1000));
    differ += a.window_at(step, 1000) != c.window_at(step, 1000);
  }
  EXPECT_GT(differ, 20);  // another seed gives another sequence
}

TEST(WindowSchedule, fixed_and_none) {
  WindowSchedule fixed;
  fixed.type = "fixed";
  fixed.window = 64;
  EXPECT_EQ(fixed.window_at(3, 10), 64);
  WindowSchedule none;
  EXPECT_EQ(none.window_at(3, 10), 0);
}

TEST(WindowSchedule, parses_and_validates_json) {
  Json j{{"type", "stochastic"}, {"short_window", 32}, {"long_window", 16}};
  try {
    WindowSchedule::from_json(JsonView(j, "train.json", "window_schedule."));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "train.json: field 'window_schedule.short_window' (32) must not exceed long_window (16)");
  }
}

// A window is a size the attention cache is allocated for: one beyond the bound every model config
// obeys is refused with the field named, before anything is trained or written.
TEST(WindowSchedule, window_beyond_the_attention_bound_is_refused) {
  Json j{{"type", "stochastic"}, {"short_window", 8}, {"long_window", int64_t{1} << 40}};
  try {
    WindowSchedule::from_json(JsonView(j, "train.json", "window_schedule."));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("window_schedule.long_window"), std::string::npos) << e.what();
  }
  Json fixed{{"type", "fixed"}, {"window", (int64_t{1} << 24) + 1}};
  EXPECT_THROW(WindowSchedule::from_json(JsonView(fixed, "train.json", "window_schedule.")), Error);
}

}  // namespace
}  // namespace swarmt::train
