#include "swarmt/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "swarmt/core/error.h"

namespace swarmt::train {

double LrSchedule::multiplier(int64_t step, int64_t total) const {
  if (warmup_steps > 0 && step < warmup_steps) return static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  if (type == "constant") return 1.0;
  const double span = std::max<int64_t>(1, total - warmup_steps - 1);
  if (type == "cosine") {
    double progress = std::clamp(static_cast<double>(step - warmup_steps) / span, 0.0, 1.0);
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  // wsd
  const int64_t decay_steps = std::max<int64_t>(1, static_cast<int64_t>(std::round(decay_fraction * total)));
  const int64_t decay_start = total - decay_steps;
  if (step < decay_start) return 1.0;
  double progress = std::clamp(static_cast<double>(step - decay_start + 1) / decay_steps, 0.0, 1.0);
  return 1.0 - (1.0 - min_ratio) * progress;
}

LrSchedule LrSchedule::from_json(const JsonView& v) {
  v.reject_unknown_keys({"type", "warmup_steps", "min_ratio", "decay_fraction"});
  LrSchedule s;
  s.type = v.get_string("type", s.type);
  SWARMT_CHECK_INPUT(s.type == "constant" || s.type == "cosine" || s.type == "wsd", v.describe("type"),
                     " must be \"constant\", \"cosine\" or \"wsd\" (got \"", s.type, "\")");
  s.warmup_steps = v.get_int_in("warmup_steps", 0, 0, int64_t{1} << 40);
  s.min_ratio = v.get_number("min_ratio", s.min_ratio);
  SWARMT_CHECK_INPUT(s.min_ratio >= 0 && s.min_ratio <= 1, v.describe("min_ratio"), " must be in [0, 1]");
  s.decay_fraction = v.get_number("decay_fraction", s.decay_fraction);
  SWARMT_CHECK_INPUT(s.decay_fraction > 0 && s.decay_fraction <= 1, v.describe("decay_fraction"), " must be in (0, 1]");
  return s;
}

Json LrSchedule::to_json() const {
  Json j{{"type", type}, {"warmup_steps", warmup_steps}, {"min_ratio", min_ratio}};
  if (type == "wsd") j["decay_fraction"] = decay_fraction;
  return j;
}

}  // namespace swarmt::train
