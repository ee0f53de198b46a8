#include "swarmt/train/window_schedule.h"

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/core/random.h"

namespace swarmt::train {

int64_t WindowSchedule::anneal_start(int64_t total_steps) const {
  return static_cast<int64_t>(std::ceil((1.0 - anneal_fraction) * static_cast<double>(total_steps) - 1e-9));
}

int64_t WindowSchedule::window_at(int64_t step, int64_t total_steps) const {
  if (type == "fixed") return window;
  if (type != "stochastic") return 0;
  if (step >= anneal_start(total_steps)) return long_window;
  return uniform_from_key(mix_key(seed, static_cast<uint64_t>(step))) < p_short_at(step, total_steps) ? short_window
                                                                                                     : long_window;
}

double WindowSchedule::p_short_at(int64_t step, int64_t total_steps) const {
  const double ramp = p_short_warmup * static_cast<double>(total_steps);
  if (ramp <= 0 || static_cast<double>(step) >= ramp) return p_short;
  return p_short * static_cast<double>(step) / ramp;
}

WindowSchedule WindowSchedule::from_json(const JsonView& v) {
  v.reject_unknown_keys({"type", "window", "short_window", "long_window", "p_short", "p_short_warmup", "anneal_fraction",
                         "seed"});
  WindowSchedule s;
  s.type = v.get_string("type", "none");
  SWARMT_CHECK_INPUT(s.type == "none" || s.type == "fixed" || s.type == "stochastic", v.describe("type"),
                     " must be \"none\", \"fixed\" or \"stochastic\" (got \"", s.type, "\")");
  if (s.type == "fixed") s.window = v.get_int_in("window", 1, kMaxAttentionWindow);
  if (s.type == "stochastic") {
    s.short_window = v.get_int_in("short_window", 1, kMaxAttentionWindow);
    s.long_window = v.get_int_in("long_window", 1, kMaxAttentionWindow);
    SWARMT_CHECK_INPUT(s.short_window <= s.long_window, v.describe("short_window"), " (", s.short_window,
                       ") must not exceed long_window (", s.long_window, ")");
    s.p_short = v.get_number("p_short", s.p_short);
    SWARMT_CHECK_INPUT(s.p_short >= 0 && s.p_short <= 1, v.describe("p_short"), " must be in [0, 1]");
    s.p_short_warmup = v.get_number("p_short_warmup", s.p_short_warmup);
    s.anneal_fraction = v.get_number("anneal_fraction", s.anneal_fraction);
    SWARMT_CHECK_INPUT(s.anneal_fraction >= 0 && s.anneal_fraction <= 1, v.describe("anneal_fraction"),
                       " must be in [0, 1]");
    SWARMT_CHECK_INPUT(s.p_short_warmup >= 0 && s.p_short_warmup + s.anneal_fraction <= 1, v.describe("p_short_warmup"),
                       " must be in [0, 1 - anneal_fraction]");
  }
  s.seed = static_cast<uint64_t>(v.get_int("seed", 0));
  return s;
}

Json WindowSchedule::to_json() const {
  Json j{{"type", type}};
  if (type == "fixed") j["window"] = window;
  if (type == "stochastic") {
    j["short_window"] = short_window;
    j["long_window"] = long_window;
    j["p_short"] = p_short;
    if (p_short_warmup > 0) j["p_short_warmup"] = p_short_warmup;
    j["anneal_fraction"] = anneal_fraction;
  }
  j["seed"] = seed;
  return j;
}

}  // namespace swarmt::train
