#include "swarmt/report/progress_bar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace swarmt {
namespace {

// A ProgressBar writing to a string stream, with a hand-driven clock.
struct Harness {
  std::ostringstream out;
  double now = 0;
  ProgressBarOptions options(bool interactive) {
    ProgressBarOptions o;
    o.out = &out;
    o.interactive = interactive;
    o.clock = [this] { return now; };
    o.bar_width = 10;
    return o;
  }
};

size_t count(const std::string& s, char c) { return static_cast<size_t>(std::count(s.begin(), s.end(), c)); }

TEST(ProgressBar, line_shows_step_bar_fields_rate_and_eta) {
  Harness h;
  ProgressBar bar(100, "train", h.options(false));
  h.now = 10;
  bar.update(50, {{"loss", format_progress_value(2.5)}, {"lr", format_progress_value(3e-4)}});
  EXPECT_EQ(bar.render_line(), "train  50/100 [=====>    ]  50% | loss 2.5 | lr 3.0e-04 | 5 it/s | ETA 00:10");
}

// A training resumed at step 4000 of 7000 that has done 20 steps in 10 s runs at 2 steps/s, with 2980 steps
// (24:50) to go; counting the 4000 earlier steps gave "402 step/s | ETA 00:07".
TEST(ProgressBar, resumed_run_rates_and_eta_count_only_its_own_steps) {
  Harness h;
  ProgressBarOptions o = h.options(false);
  o.unit = "step";
  o.initial = 4000;
  o.bar_width = 4;
  ProgressBar bar(7000, "train", o);
  EXPECT_EQ(bar.done(), 4000);
  h.now = 10;
  bar.update(4020);
  EXPECT_EQ(bar.render_line(), "train  4020/7000 [==> ]  57% | 2 step/s | ETA 24:50");
}

TEST(ProgressBar, unknown_total_shows_count_rate_and_elapsed_time) {
  Harness h;
  ProgressBarOptions o = h.options(false);
  o.unit = "tok";
  ProgressBar bar(0, "eval", o);
  h.now = 4;
  bar.update(1000);
  EXPECT_EQ(bar.render_line(), "eval  1000 | 250 tok/s | 00:04");
}

TEST(ProgressBar, plain_lines_are_throttled_when_not_a_terminal) {
  Harness h;
  ProgressBarOptions o = h.options(false);
  o.plain_interval_s = 10;
  {
    ProgressBar bar(1000, "x", o);
    for (int step = 1; step <= 100; ++step) {
      h.now = step * 0.5;  // 50 s in total
      bar.update(step);
    }
    bar.finish();
  }
  const std::string text = h.out.str();
  // Printed at t = 0.5, 10.5, 20.5, 30.5, 40.5, then the final line: 6 lines, no carriage returns.
  EXPECT_EQ(count(text, '\n'), 6u) << text;
  EXPECT_EQ(count(text, '\r'), 0u);
  EXPECT_NE(text.find("x  100/1000"), std::string::npos);
}

TEST(ProgressBar, terminal_redraws_in_place_at_most_ten_times_a_second) {
  Harness h;
  ProgressBar bar(100, "y", h.options(true));
  for (int step = 1; step <= 100; ++step) {
    h.now = step * 0.01;  // 1 s in total: at most ~10 redraws
    bar.update(step);
  }
  bar.finish();
  const std::string text = h.out.str();
  EXPECT_LE(count(text, '\r'), 12u);
  EXPECT_GE(count(text, '\r'), 9u);
  EXPECT_EQ(count(text, '\n'), 1u);  // only finish() ends the line
  EXPECT_NE(text.find("\x1b[K"), std::string::npos);
}

TEST(ProgressBar, quiet_mode_prints_nothing) {
  Harness h;
  ProgressBarOptions o = h.options(true);
  o.quiet = true;
  {
    ProgressBar bar(10, "q", o);
    for (int i = 1; i <= 10; ++i) {
      h.now = i;
      bar.update(i, {{"loss", "1"}});
    }
  }  // the destructor finishes
  EXPECT_EQ(h.out.str(), "");
}

TEST(ProgressBar, destructor_prints_the_final_line_once) {
  Harness h;
  {
    ProgressBar bar(3, "d", h.options(false));
    h.now = 1;
    bar.update(3);
  }
  EXPECT_EQ(count(h.out.str(), '\n'), 2u);  // the first update and the final line
}

TEST(ProgressBar, durations_and_values_are_compact) {
  EXPECT_EQ(format_duration(59.4), "00:59");
  EXPECT_EQ(format_duration(3661), "1:01:01");
  EXPECT_EQ(format_duration(-1), "--:--");
  EXPECT_EQ(format_progress_value(2.31456), "2.315");
  EXPECT_EQ(format_progress_value(0.0123), "0.0123");
  EXPECT_EQ(format_progress_value(1.5e6), "1.5e+06");
  EXPECT_EQ(format_progress_value(0), "0");
}

}  // namespace
}  // namespace swarmt
