// Building a training run from a training config file (the JSON `swarmt train --config` reads):
//   {
//     "model": { ...config.json of a SWAX model... }    or   "init_from": "path/to/model_dir",
//     "tokenizer": "byte" | "path/to/dir",              (default: byte, or init_from's tokenizer)
//     "sequence_length": 1024,
//     "data": {"train": {...}, "validation": {...}},    (see data/source_factory.h)
//     "window_schedule": {"type": "stochastic", "short_window": 16, "long_window": 128, "p_short": 0.5},
//     "training": { ...TrainerOptions: max_steps, batch_size, optimizer, lr_schedule, ... }
//   }
#pragma once

#include <memory>
#include <string>

#include "swarmt/core/json.h"
#include "swarmt/train/train_task.h"
#include "swarmt/train/trainer.h"

namespace swarmt::train {

struct TrainSetup {
  std::unique_ptr<TrainTask> task;
  TrainerOptions trainer;
};

TrainSetup make_lm_training(const Json& config, const std::string& source, at::Device device);

}  // namespace swarmt::train
