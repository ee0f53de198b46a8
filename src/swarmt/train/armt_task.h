// Training an ARMT model (specs/armt.md §4): the trainer's loop with ARMT's schedule. Each step takes
// its segment count from the curriculum stage (identical for every row and rank of the step), its data
// from the stage's phase (token files for continued pretraining, `swarmt data synth` JSONL for task
// fine-tuning), and its learning rate from the stage's warmup + annealing.
//
// Training config (`swarmt armt train --base DIR --config FILE --out DIR`):
//   {
//     "armt": { ...ArmtConfig (armt_config.h)... },        (left out with --init)
//     "tokenizer": "byte" | "DIR",                          (default: the base model's tokenizer.json)
//     "freeze_base": false,                                 train only the memory (the base stays as is)
//     "freeze_parameters": ["armt.layers.*.query.weight"],  keep these (shell patterns on parameter names)
//                                                           at their starting values
//     "output": "auto" | "adapter" | "merged",              auto: adapter when the base is frozen
//     "phases": [
//       {"name": "pretrain", "data": {"train": {...}, "validation": {...}}, "curriculum": {...}},
//       {"name": "finetune", "data": {"train": {"type": "jsonl_qa", ...}}, "curriculum": {...}}
//     ],                                                    (or one phase as top-level "data" + "curriculum")
//     "training": { ...TrainerOptions; max_steps is the curriculum's total... }
//   }
// Sample lengths are segments × segment_size; data sources are made per length on demand.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "swarmt/data/batch.h"
#include "swarmt/data/source_factory.h"
#include "swarmt/models/armt_model.h"
#include "swarmt/models/model_io.h"
#include "swarmt/train/armt_curriculum.h"
#include "swarmt/train/train_task.h"
#include "swarmt/train/trainer.h"

namespace swarmt::train {

struct ArmtPhase {
  std::string name;
  Json train_data;       // data source config objects (source_factory.h)
  Json validation_data;  // null when absent
};

enum class ArmtOutput { Adapter, Merged };

class ArmtTask : public TrainTask {
 public:
  ArmtTask(std::shared_ptr<models::ArmtModel> model, std::string base_dir, std::vector<ArmtPhase> phases,
           ArmtCurriculum curriculum, std::shared_ptr<const data::TextTokenizer> tokenizer, bool freeze_base,
           ArmtOutput output, uint64_t seed, int64_t batch_size, std::string source);

  std::vector<NamedParameter> trainable_parameters() override;
  StepPlan plan(int64_t step, int64_t total_steps) const override;
  data::Batch train_batch(const StepPlan& plan, int64_t first_sample, int64_t rows) override;
  data::Batch validation_batch(int64_t index, int64_t rows) override;
  bool has_validation() const override;
  LossTerms loss(const data::Batch& batch, const StepPlan& plan) override;
  std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() override;
  void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                               const std::string& source) override;
  void export_model(const std::string& dir) override;
  std::vector<std::pair<std::string, std::string>> checkpoint_model_files(const std::string& checkpoint_dir) override;
  Json describe() const override;
  at::Device device() const override { return model_->device(); }

  // Keeps every parameter whose name matches one of the shell-style `patterns` (fnmatch: * matches any
  // characters, dots included) at its current value; BadInput naming `field`[i] when a pattern matches none.
  void freeze_parameters(const std::vector<std::string>& patterns, const std::string& field);

  models::ArmtModel& model() { return *model_; }
  const ArmtCurriculum& curriculum() const { return curriculum_; }

 private:
  std::shared_ptr<const data::DataSource> source(int64_t phase, bool validation, int64_t length) const;
  int64_t validation_phase() const;

  std::shared_ptr<models::ArmtModel> model_;
  std::string base_dir_;
  std::vector<ArmtPhase> phases_;
  ArmtCurriculum curriculum_;
  std::shared_ptr<const data::TextTokenizer> tokenizer_;
  bool freeze_base_;
  std::vector<std::string> frozen_patterns_;  // freeze_parameters, for describe() (resume checks)
  ArmtOutput output_;
  uint64_t seed_;
  int64_t batch_size_;  // samples per step: a phase's training data follows its own curricula over its steps
  std::string source_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int64_t, bool, int64_t>, std::shared_ptr<const data::DataSource>> sources_;
};

struct ArmtTrainSetup {
  std::unique_ptr<ArmtTask> task;
  TrainerOptions trainer;
};

// From a training config (above). base_dir: the base model (for a merged init, the merged directory);
// init_dir: an adapter or a merged ARMT model to start from ("" for a fresh adapter from the config's
// "armt" object). A merged init must be written merged again: its base weights exist nowhere else.
ArmtTrainSetup make_armt_training(const Json& config, const std::string& source, const std::string& base_dir,
                                  const std::string& init_dir, at::Device device);

}  // namespace swarmt::train
