#include "swarmt/train/lm_task.h"

#include "swarmt/core/error.h"

namespace swarmt::train {

CausalLMTask::CausalLMTask(std::shared_ptr<models::CausalLM> model, std::shared_ptr<const data::DataSource> train_data,
                           std::shared_ptr<const data::DataSource> validation_data, WindowSchedule windows,
                           models::ModelAssets assets)
    : model_(std::move(model)),
      train_(std::move(train_data)),
      validation_(std::move(validation_data)),
      windows_(std::move(windows)),
      assets_(std::move(assets)) {}

std::vector<NamedParameter> CausalLMTask::trainable_parameters() {
  std::vector<NamedParameter> out;
  for (auto& item : model_->named_parameters())
    if (item.value().requires_grad()) out.push_back({item.key(), item.value()});
  return out;
}

StepPlan CausalLMTask::plan(int64_t step, int64_t total_steps) const {
  StepPlan p;
  p.window = windows_.window_at(step, total_steps);
  if (windows_.type == "stochastic") p.phase = step >= windows_.anneal_start(total_steps) ? "anneal" : "stochastic";
  return p;
}

data::Batch CausalLMTask::train_batch(const StepPlan&, int64_t first_sample, int64_t rows) {
  return data::make_batch(*train_, first_sample, rows);
}

data::Batch CausalLMTask::validation_batch(int64_t index, int64_t rows) {
  SWARMT_CHECK(validation_ != nullptr);
  return data::make_batch(*validation_, index * rows, rows);
}

LossTerms CausalLMTask::loss(const data::Batch& batch, const StepPlan& plan) {
  models::ForwardOptions options;
  if (plan.window > 0) options.window = plan.window;  // 0: the model's own window
  options.doc_ids = batch.doc_ids;
  model_->train(torch::GradMode::is_enabled());
  const at::Tensor hidden = model_->forward_hidden(batch.tokens, options);
  const at::Tensor targets = batch.targets.to(hidden.device());
  // The head (final norm, LM head, soft cap) works position by position: where fewer than half the
  // positions are scored (answers of recall and QA data), it runs on those alone. The loss and every
  // gradient are the same; the head's GEMMs and the softmax shrink to the scored rows.
  const at::Tensor scored = (targets != data::kIgnoreIndex).reshape({-1}).nonzero().squeeze(1);
  if (scored.numel() > 0 && 2 * scored.numel() < targets.numel()) {
    const at::Tensor rows = hidden.reshape({-1, hidden.size(-1)}).index_select(0, scored).unsqueeze(0);
    return cross_entropy_sum(model_->head(rows), targets.reshape({-1}).index_select(0, scored).unsqueeze(0));
  }
  return cross_entropy_sum(model_->head(hidden), targets);
}

std::vector<std::pair<std::string, at::Tensor>> CausalLMTask::checkpoint_tensors() { return model_->checkpoint_tensors(); }

void CausalLMTask::load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                           const std::string& source) {
  model_->load_checkpoint_tensors(lookup, source);
}

void CausalLMTask::export_model(const std::string& dir) { models::save_model(*model_, dir, assets_); }

std::vector<std::pair<std::string, std::string>> CausalLMTask::checkpoint_model_files(const std::string&) {
  return models::model_description_files(*model_, assets_);
}

Json CausalLMTask::describe() const {
  return Json{{"task", "causal_lm"}, {"model", model_->config_json()}, {"window_schedule", windows_.to_json()}};
}

}  // namespace swarmt::train
