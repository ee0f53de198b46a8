// The losses of training runs, which the resume and data-parallel tests compare between runs:
// record_losses runs a training in-process (to its end, or to a simulated crash at step `crash_at`);
// logged_losses reads a run directory's metrics.jsonl.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
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

// step -> loss, from run_dir/metrics.jsonl (each step must appear once).
inline std::map<int64_t, double> logged_losses(const std::string& run_dir) {
  std::map<int64_t, double> losses;
  std::ifstream in(run_dir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const Json j = Json::parse(line);
    if (!j.contains("loss")) continue;
    const int64_t step = j["step"].get<int64_t>();
    EXPECT_EQ(losses.count(step), 0u) << run_dir << ": step " << step << " logged twice";
    losses[step] = j["loss"].get<double>();
  }
  return losses;
}

}  // namespace swarmt::testing
