// The ARMT training recipe's schedule (specs/armt.md §4): phases (continued pretraining on token files,
// then task fine-tuning), each a curriculum over the number of segments per sample (default 2 -> 4 -> 8),
// with a learning-rate warmup and annealing inside every stage.
//
//   "curriculum": {"segments": [2, 4, 8], "steps": [100, 100, 100],      (or "steps_per_stage": 100)
//                  "warmup_fraction": 0.1, "schedule": "cosine", "min_lr_ratio": 0.1,
//                  "random_segments": false}
// random_segments: each sample takes 1..n segments of real data (uniform, from the sample index) and is
// padded to n segments without loss on the padding (the reference code's --vary_n_segments).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmt/core/json.h"

namespace swarmt::train {

struct ArmtStage {
  int64_t phase = 0;        // index into the phases
  int64_t segments = 2;
  int64_t steps = 0;
  int64_t first_step = 0;   // global step the stage starts at
  double warmup_fraction = 0.1;
  std::string schedule = "cosine";  // cosine | linear | constant (after warmup)
  double min_lr_ratio = 0.1;
  bool random_segments = false;
};

class ArmtCurriculum {
 public:
  // Appends the stages of one phase's "curriculum" object.
  void add_phase(int64_t phase, const JsonView& curriculum);

  const ArmtStage& stage_at(int64_t step) const;  // step in [0, total_steps)
  int64_t stage_index(int64_t step) const;
  int64_t total_steps() const;
  const std::vector<ArmtStage>& stages() const { return stages_; }
  // Peak-relative learning rate at `step`: linear warmup over the first warmup_fraction of the stage, then
  // the stage's schedule down to min_lr_ratio at its last step.
  double lr_multiplier(int64_t step) const;
  Json to_json() const;

 private:
  std::vector<ArmtStage> stages_;
};

}  // namespace swarmt::train
