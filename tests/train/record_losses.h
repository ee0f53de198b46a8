// Runs a training to its end (or to a simulated crash at step `crash_at`) and returns the loss of every
// step it completed: what the resume tests compare between interrupted and uninterrupted runs.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "swarmt/train/trainer.h"

namespace swarmt::testing {

inline std::vector<double> record_losses(train::TrainTask& task, const train::TrainerOptions& options,
                                         const std::string& dir, bool resume, int64_t crash_at = -1) {
  train::Trainer trainer(task, options, dir, /*quiet=*/true);
  std::vector<double> losses;
  trainer.on_step = [&](int64_t step, double loss) {
    if (step == crash_at) throw std::runtime_error("simulated crash");
    losses.push_back(loss);
  };
  try {
    trainer.run(resume);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()) != "simulated crash") throw;
  }
  return losses;
}

}  // namespace swarmt::testing
