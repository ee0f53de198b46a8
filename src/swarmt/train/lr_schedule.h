// Learning-rate schedules, as a multiplier of the peak learning rate per optimizer step.
//   constant:  warmup, then 1
//   cosine:    linear warmup to 1, then cosine decay to min_ratio at the last step
//   wsd:       warmup-stable-decay: warmup, 1 until the last decay_fraction of steps, then linear
//              decay to min_ratio
#pragma once

#include <cstdint>
#include <string>

#include "swarmt/core/json.h"

namespace swarmt::train {

struct LrSchedule {
  std::string type = "cosine";
  int64_t warmup_steps = 0;
  double min_ratio = 0.1;        // final lr / peak lr
  double decay_fraction = 0.2;   // wsd only

  double multiplier(int64_t step, int64_t total_steps) const;  // step is 0-based
  static LrSchedule from_json(const JsonView& view);
  Json to_json() const;
};

}  // namespace swarmt::train
