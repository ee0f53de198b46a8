// Sliding-window schedule of SWAX training (specs/swax.md §1.1, §1.4).
//
//   fixed:       w = window at every step
//   stochastic:  w = long_window                              if step >= (1 - anneal_fraction) · total
//                w = (U_step < p(step)) ? short_window : long_window   otherwise
//   where p(step) = p_short, or, with p_short_warmup > 0, rises linearly from 0 to p_short over the first
//   p_short_warmup · total steps (attention first learns the task at the long window, then the short
//   window makes the recurrent layers carry it).
// One window per optimizer step, shared by every SWA layer and every micro-batch (and every rank) of that
// step. U_step is a pure function of (seed, step), so the schedule is reproducible, identical across
// ranks, and resumes exactly without saved state.
#pragma once

#include <cstdint>
#include <string>

#include "swarmt/core/json.h"

namespace swarmt::train {

struct WindowSchedule {
  std::string type = "none";      // "none" (model's own window), "fixed", "stochastic"
  int64_t window = 0;             // fixed
  int64_t short_window = 128;     // stochastic
  int64_t long_window = 2048;     // stochastic
  double p_short = 0.5;           // probability of the short window (0.5 at 1.4B, 0.75 at 7B)
  double p_short_warmup = 0.0;    // first fraction of steps over which p rises from 0 to p_short
  double anneal_fraction = 0.1;   // last fraction of steps at long_window only
  uint64_t seed = 0;

  // Window for optimizer step `step` (0-based) of `total_steps`; 0 means "use the model's window".
  int64_t window_at(int64_t step, int64_t total_steps) const;
  // Probability of the short window at `step` (before annealing).
  double p_short_at(int64_t step, int64_t total_steps) const;
  // First step of the annealing phase.
  int64_t anneal_start(int64_t total_steps) const;

  static WindowSchedule from_json(const JsonView& view);
  Json to_json() const;
};

}  // namespace swarmt::train
