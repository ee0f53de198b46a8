// What the trainer trains. One Trainer loop (optimizer, schedules, accumulation, clipping, validation,
// checkpoints, resume, logging) serves every model; a TrainTask supplies the model-specific parts:
// which parameters train, what a batch is at a given step, how the loss is computed, and how weights
// are saved. SWAX / causal-LM training and the ARMT recipe are tasks.
#pragma once

#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/data/batch.h"
#include "swarmt/train/adamw.h"
#include "swarmt/train/loss.h"

namespace swarmt::train {

// Per-step decisions made by the task's schedules; logged with the step.
struct StepPlan {
  int64_t window = 0;        // SWAX: sliding window of this step (0: model default)
  int64_t num_segments = 0;  // ARMT: segments per sample in this step (0: not applicable)
  std::string phase;         // curriculum stage or schedule phase, for the log
  int64_t stage = 0;         // ARMT: index of the curriculum stage
  double lr_multiplier = -1; // >= 0: the task's own schedule (ARMT: warmup and annealing per stage)
                             // replaces the trainer's lr_schedule for this step
  Json to_json() const;
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;

  virtual std::vector<NamedParameter> trainable_parameters() = 0;
  virtual StepPlan plan(int64_t step, int64_t total_steps) const = 0;
  // Samples [first_sample, first_sample + rows) of the training stream; the trainer numbers samples
  // globally (step · batch_size + row), so any split of a step into micro-batches or ranks gives the
  // same samples.
  virtual data::Batch train_batch(const StepPlan& plan, int64_t first_sample, int64_t rows) = 0;
  virtual data::Batch validation_batch(int64_t index, int64_t rows) = 0;
  virtual bool has_validation() const = 0;
  // Summed loss (with graph when grad mode is on) and its token count.
  virtual LossTerms loss(const data::Batch& batch, const StepPlan& plan) = 0;

  // Weights of the trained parts, for checkpoints (name -> tensor).
  virtual std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() = 0;
  virtual void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                       const std::string& source) = 0;
  // Writes the final (or current) model into `dir` in its deployable layout.
  virtual void export_model(const std::string& dir) = 0;
  // The files (name, contents) that, beside checkpoint_tensors() in model.safetensors, make the checkpoint
  // directory `checkpoint_dir` a model directory (config, tokenizer), so that any checkpoint of a run can
  // be evaluated, generated from or traced like the final model. In the order to write them.
  virtual std::vector<std::pair<std::string, std::string>> checkpoint_model_files(const std::string& checkpoint_dir) = 0;
  // Description of the model / task (logged and stored in trainer_state.json for resume checks).
  virtual Json describe() const = 0;
  virtual at::Device device() const = 0;
};

}  // namespace swarmt::train
