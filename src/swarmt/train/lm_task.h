// Training a causal LM (SWAX hybrids and baselines, or any model the registry builds) on a data source,
// with the sliding-window schedule of SWAX.
#pragma once

#include <memory>

#include "swarmt/data/batch.h"
#include "swarmt/models/causal_lm.h"
#include "swarmt/models/model_io.h"
#include "swarmt/train/train_task.h"
#include "swarmt/train/window_schedule.h"

namespace swarmt::train {

class CausalLMTask : public TrainTask {
 public:
  CausalLMTask(std::shared_ptr<models::CausalLM> model, std::shared_ptr<const data::DataSource> train_data,
               std::shared_ptr<const data::DataSource> validation_data, WindowSchedule windows,
               models::ModelAssets assets);

  std::vector<NamedParameter> trainable_parameters() override;
  StepPlan plan(int64_t step, int64_t total_steps) const override;
  data::Batch train_batch(const StepPlan& plan, int64_t first_sample, int64_t rows) override;
  data::Batch validation_batch(int64_t index, int64_t rows) override;
  bool has_validation() const override { return validation_ != nullptr; }
  LossTerms loss(const data::Batch& batch, const StepPlan& plan) override;
  std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() override;
  void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                               const std::string& source) override;
  void export_model(const std::string& dir) override;
  std::vector<std::pair<std::string, std::string>> checkpoint_model_files(const std::string& checkpoint_dir) override;
  Json describe() const override;
  at::Device device() const override { return model_->device(); }

  models::CausalLM& model() { return *model_; }

 private:
  std::shared_ptr<models::CausalLM> model_;
  std::shared_ptr<const data::DataSource> train_, validation_;
  WindowSchedule windows_;
  models::ModelAssets assets_;
};

}  // namespace swarmt::train
