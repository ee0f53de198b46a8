// The one training loop of swarmt.
//
// Per optimizer step s:
//   plan = task.plan(s)                      (window of SWAX, segments of the ARMT curriculum)
//   rows of the step are split into grad_accum micro-batches; loss = Σ CE / (target tokens of the step)
//   clip the global gradient norm; lr = peak · schedule(s); AdamW step
//   every log_every steps: one JSON line in metrics.jsonl and the progress bar
//   every eval_every steps: validation loss;  every checkpoint_every steps: an atomic checkpoint
//
// Resume is exact: data and schedules are pure functions of the step, the optimizer state and the
// weights are in the checkpoint, so a resumed run logs the same losses as an uninterrupted one.
//
// Data parallel (set_process_group): each of W ranks takes a disjoint B/W rows of every step (samples
// step·B + rank·B/W + ...), the target-token count of the step is summed over ranks first, so that the
// summed gradients (distributed::GradientReducer, overlapped with backward) equal those of one process with
// batch B. Every rank then applies the same update; plans (window, segments) depend only on the step, so
// they agree too. Only rank 0 writes metrics, checkpoints and the final model; every rank reads the
// checkpoint on resume, with any world size.
//
// Run directory layout (--out DIR):
//   DIR/config.json, model.safetensors, ...   the final model (written at the end)
//   DIR/checkpoints/checkpoint-00000200/      model.safetensors, optimizer.safetensors,
//                                             trainer_state.json, manifest.json
//   DIR/checkpoints/broken/                   checkpoints that failed verification, set aside on resume
//   DIR/.swarmt.lock                          while a process writes the run (core/run_lock.h)
//   DIR/metrics.jsonl                         one JSON object per logged step / validation
//   DIR/train_config.json                     the configuration the run was started with
#pragma once

#include <functional>
#include <string>

#include "swarmt/core/json.h"
#include "swarmt/train/distributed/process_group.h"
#include "swarmt/train/adamw.h"
#include "swarmt/train/lr_schedule.h"
#include "swarmt/train/run_start.h"
#include "swarmt/train/train_task.h"

namespace swarmt::train {

struct TrainerOptions {
  int64_t max_steps = 1000;
  int64_t batch_size = 8;          // rows per optimizer step (global across ranks)
  int64_t grad_accum = 1;          // micro-batches per step
  double lr = 1e-3;                // peak learning rate
  AdamWOptions adamw;
  LrSchedule lr_schedule;
  double clip_grad_norm = 1.0;     // 0: no clipping
  bool bf16 = false;               // autocast matmuls to bfloat16
  int64_t eval_every = 0;          // 0: only at the end (if the task has validation data)
  int64_t eval_batches = 4;
  int64_t checkpoint_every = 0;    // 0: only at the end
  int64_t keep_checkpoints = 3;
  int64_t log_every = 10;
  int64_t max_bad_steps = 5;       // consecutive non-finite steps tolerated before stopping
  bool detect_anomaly = false;     // autograd anomaly mode: the first NaN in backward names its forward op
  uint64_t seed = 0;

  static TrainerOptions from_json(const JsonView& view);
  Json to_json() const;
};

struct TrainResult {
  int64_t steps = 0;
  double final_loss = 0;
  double final_val_loss = -1;     // < 0 if no validation
  double tokens_per_second = 0;
  int64_t skipped_steps = 0;
};

class Trainer {
 public:
  Trainer(TrainTask& task, TrainerOptions options, std::string run_dir, bool quiet = false);

  // Trains to max_steps from where `start` says (train/run_start.h: plan it before writing anything
  // into the run directory). Only the writing rank sets aside broken checkpoints and rewinds the log.
  TrainResult run(const RunStart& start);
  // The same, planned here: with resume, continues from the latest valid checkpoint of the run
  // directory; without it, refuses to overwrite a run directory that already holds a run.
  TrainResult run(bool resume);

  // Trains data-parallel over `group` (not owned; outlives run()). Without it, one process.
  void set_process_group(distributed::ProcessGroup* group) { group_ = group; }

  // Called after every step with (step, loss); tests use it to compare runs.
  std::function<void(int64_t, double)> on_step;

  double evaluate();  // mean validation loss over eval_batches

 private:
  void save_checkpoint(int64_t completed_steps, AdamW& optimizer, int64_t tokens_seen);
  int64_t load_checkpoint(const std::string& dir, AdamW& optimizer, int64_t& tokens_seen);

  TrainTask& task_;
  TrainerOptions options_;
  std::string run_dir_;
  bool quiet_;
  distributed::ProcessGroup* group_ = nullptr;
};

}  // namespace swarmt::train
