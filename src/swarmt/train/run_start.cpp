#include "swarmt/train/run_start.h"

#include <fstream>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"

namespace swarmt::train {

const RequiredFiles kTrainerCheckpointFiles = {"model.safetensors", "optimizer.safetensors", "trainer_state.json"};

std::string checkpoints_dir(const std::string& run_dir) { return run_dir + "/checkpoints"; }
std::string metrics_path(const std::string& run_dir) { return run_dir + "/metrics.jsonl"; }

namespace {

// The last step metrics.jsonl logs, or -1 when it logs none (missing, empty, or only a torn line).
int64_t last_logged_step(const std::string& path) {
  std::ifstream in(path);
  int64_t last = -1;
  for (std::string line; std::getline(in, line);) {
    try {
      const Json j = Json::parse(line);
      if (j.is_object() && j.contains("step") && j["step"].is_number_integer()) last = std::max(last, j["step"].get<int64_t>());
    } catch (const Json::exception&) {
      // A torn last line of a killed run logs nothing.
    }
  }
  return last;
}

std::string describe_run(size_t checkpoints, int64_t last_step) {
  std::string found;
  if (checkpoints > 0) found = str_cat(checkpoints, checkpoints == 1 ? " checkpoint" : " checkpoints", " in checkpoints/");
  if (last_step >= 0) found += str_cat(found.empty() ? "" : " and ", "steps up to ", last_step, " in metrics.jsonl");
  return found;
}

}  // namespace

RunStart plan_run_start(const std::string& run_dir, StartMode mode) {
  RunStart start;
  start.mode = mode;
  const std::string checkpoints = checkpoints_dir(run_dir);
  const std::vector<CheckpointStatus> listed = list_checkpoints(checkpoints);
  const int64_t last_step = last_logged_step(metrics_path(run_dir));
  if (mode == StartMode::Fresh) {
    SWARMT_CHECK_INPUT(listed.empty() && last_step < 0, run_dir, " already holds a training run (",
                       describe_run(listed.size(), last_step),
                       "); pass --resume to continue it, or choose another --out");
    return start;
  }
  const std::string restart_hint =
      "; nothing was changed. Pass --restart (with --resume) to start the run again from step 0 (broken checkpoints "
      "are moved to " + checkpoints + "/broken/, never deleted), or choose another --out";
  start.checkpoint = latest_valid_checkpoint(checkpoints, &start.warnings, kTrainerCheckpointFiles);
  if (start.checkpoint) {
    // Checkpoints newer than the one resumed from failed verification: keep them out of the way.
    for (const CheckpointStatus& status : check_checkpoints(checkpoints, VerifyLevel::Sizes, kTrainerCheckpointFiles))
      if (status.step > start.checkpoint->step) start.broken.push_back(status);
    for (CheckpointStatus& status : start.broken)
      if (status.problem.empty()) status.problem = "failed full verification (sha256)";
    return start;
  }
  if (!listed.empty()) {
    std::string problems;
    for (const CheckpointStatus& status : check_checkpoints(checkpoints, VerifyLevel::Full, kTrainerCheckpointFiles)) {
      problems += str_cat(problems.empty() ? "" : "; ", status.problem);
      start.broken.push_back(status);
    }
    SWARMT_CHECK_INPUT(mode == StartMode::ResumeOrRestart, checkpoints, ": none of the ", listed.size(),
                       listed.size() == 1 ? " checkpoint" : " checkpoints", " can be resumed from (", problems, ")",
                       restart_hint);
    start.warnings.push_back(str_cat("--restart: no valid checkpoint in ", checkpoints, "; starting again from step 0"));
    return start;
  }
  if (last_step >= 0) {
    SWARMT_CHECK_INPUT(mode == StartMode::ResumeOrRestart, run_dir, ": metrics.jsonl logs steps up to ", last_step,
                       " but there is no checkpoint to resume from (", checkpoints,
                       " is missing or empty: the run stopped before its first checkpoint, or they were deleted)",
                       restart_hint);
    start.warnings.push_back(str_cat("--restart: ", run_dir, " has logged steps but no checkpoint; starting again from step 0"));
  }
  return start;
}

}  // namespace swarmt::train
