// Where a training run starts in its run directory, decided before anything is written into it.
//
// A directory holds a run once it has checkpoints (checkpoints/checkpoint-*) or logged steps
// (metrics.jsonl). Then:
//   Fresh (no --resume)      refused: a run is never overwritten. (A refused `train` used to overwrite
//                            train_config.json first; the refusal now comes before any write.)
//   Resume (--resume)        continues from the newest checkpoint that verifies completely, with every
//                            file the trainer needs (kTrainerCheckpointFiles). Newer checkpoints that fail
//                            verification are set aside under checkpoints/broken/ with a warning, so that
//                            the continued run neither overwrites nor deletes them. When checkpoints exist
//                            but none verifies, or steps were logged but no checkpoint exists, continuing
//                            would silently start again from step 0: refused, saying what was found.
//   ResumeOrRestart          (--resume --restart) as Resume, but when nothing can be resumed the run
//                            starts again from step 0: its log is rewound and every broken checkpoint
//                            set aside, never deleted.
// A directory with neither checkpoints nor logged steps starts at step 0 in every mode (a new run, or
// one killed before it logged anything).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "swarmt/core/checkpoint.h"

namespace swarmt::train {

enum class StartMode { Fresh, Resume, ResumeOrRestart };

// The mode of the command-line flags --resume and --restart (which needs --resume).
inline StartMode start_mode(bool resume, bool restart) {
  return !resume ? StartMode::Fresh : restart ? StartMode::ResumeOrRestart : StartMode::Resume;
}

// The files every checkpoint of the trainer holds, so verification cannot pass without them.
extern const RequiredFiles kTrainerCheckpointFiles;

// <run_dir>/checkpoints and <run_dir>/metrics.jsonl.
std::string checkpoints_dir(const std::string& run_dir);
std::string metrics_path(const std::string& run_dir);

struct RunStart {
  StartMode mode = StartMode::Fresh;
  std::optional<CheckpointStatus> checkpoint;  // continue after it; none: start at step 0
  std::vector<CheckpointStatus> broken;        // to set aside (by the writing rank) before training
  std::vector<std::string> warnings;           // to print: skipped checkpoints, leftovers, restarts
};

// Inspects the run directory (reads only). BadInput naming the directory and what it holds when `mode`
// may not start there (see above).
RunStart plan_run_start(const std::string& run_dir, StartMode mode);

}  // namespace swarmt::train
