// The trainer's numerics guard: a step whose loss or gradients are not finite is skipped (no update),
// logged to metrics.jsonl, and training stops with a clear error after max_bad_steps in a row;
// detect_anomaly turns on autograd's anomaly mode.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "bad_input.h"
#include "swarmt/train/train_setup.h"
#include "swarmt/train/trainer.h"
#include "test_util.h"

namespace swarmt::train {
namespace {

Json tiny_config(int64_t steps) {
  Json config = Json::parse(R"({
    "model": {"hidden_size": 32, "layer_pattern": "MS", "num_hidden_layers": 2, "num_attention_heads": 2,
              "head_dim": 16, "sliding_window": 32, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 8,
              "mlstm_v_head_dim": 16, "intermediate_size": 64},
    "sequence_length": 64,
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
    "training": {"batch_size": 2, "log_every": 100, "optimizer": {"lr": 0.003}, "max_bad_steps": 3}
  })");
  config["training"]["max_steps"] = steps;
  return config;
}

// Wraps a task and poisons the loss of chosen steps with NaN (as an overflow would).
class PoisonedTask : public TrainTask {
 public:
  PoisonedTask(TrainTask& inner, int64_t batch_size, std::set<int64_t> bad_steps)
      : inner_(inner), batch_size_(batch_size), bad_(std::move(bad_steps)) {}
  std::vector<NamedParameter> trainable_parameters() override { return inner_.trainable_parameters(); }
  StepPlan plan(int64_t step, int64_t total) const override { return inner_.plan(step, total); }
  data::Batch train_batch(const StepPlan& plan, int64_t first_sample, int64_t rows) override {
    step_ = first_sample / batch_size_;
    return inner_.train_batch(plan, first_sample, rows);
  }
  data::Batch validation_batch(int64_t index, int64_t rows) override { return inner_.validation_batch(index, rows); }
  bool has_validation() const override { return inner_.has_validation(); }
  LossTerms loss(const data::Batch& batch, const StepPlan& plan) override {
    LossTerms terms = inner_.loss(batch, plan);
    if (bad_.count(step_)) terms.sum = terms.sum * std::numeric_limits<double>::quiet_NaN();
    return terms;
  }
  std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() override { return inner_.checkpoint_tensors(); }
  void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                               const std::string& source) override {
    inner_.load_checkpoint_tensors(lookup, source);
  }
  void export_model(const std::string& dir) override { inner_.export_model(dir); }
  std::vector<std::pair<std::string, std::string>> checkpoint_model_files(const std::string& dir) override {
    return inner_.checkpoint_model_files(dir);
  }
  Json describe() const override { return inner_.describe(); }
  at::Device device() const override { return inner_.device(); }

 private:
  TrainTask& inner_;
  int64_t batch_size_;
  std::set<int64_t> bad_;
  int64_t step_ = 0;
};

std::vector<at::Tensor> snapshot(TrainTask& task) {
  std::vector<at::Tensor> out;
  for (auto& p : task.trainable_parameters()) out.push_back(p.tensor.detach().clone());
  return out;
}

TEST(NumericsGuard, a_non_finite_step_is_skipped_and_logged_and_training_goes_on) {
  testing::TempDir tmp;
  auto setup = make_lm_training(tiny_config(5), "t.json", at::kCPU);
  PoisonedTask task(*setup.task, 2, {2});
  std::vector<std::vector<at::Tensor>> weights_after;
  Trainer trainer(task, setup.trainer, tmp.path(), /*quiet=*/true);
  trainer.on_step = [&](int64_t, double) { weights_after.push_back(snapshot(task)); };
  auto result = trainer.run(false);
  EXPECT_EQ(result.skipped_steps, 1);
  ASSERT_EQ(weights_after.size(), 5u);
  // Step 2 changed nothing; steps 1 and 3 did.
  for (size_t i = 0; i < weights_after[1].size(); ++i) EXPECT_TRUE(weights_after[2][i].equal(weights_after[1][i]));
  bool changed = false;
  for (size_t i = 0; i < weights_after[2].size(); ++i) changed |= !weights_after[3][i].equal(weights_after[2][i]);
  EXPECT_TRUE(changed);
  for (const auto& p : task.trainable_parameters()) EXPECT_TRUE(at::isfinite(p.tensor).all().item<bool>()) << p.name;
  // metrics.jsonl has the skipped step although log_every would not log it.
  std::ifstream metrics(tmp.file("metrics.jsonl"));
  bool logged = false;
  for (std::string line; std::getline(metrics, line);) {
    const Json j = Json::parse(line);
    if (j.value("step", 0) == 3) logged = j["skipped"].get<bool>();
  }
  EXPECT_TRUE(logged);
}

TEST(NumericsGuard, training_stops_after_max_bad_steps_in_a_row) {
  testing::TempDir tmp;
  auto setup = make_lm_training(tiny_config(8), "t.json", at::kCPU);
  PoisonedTask task(*setup.task, 2, {1, 2, 3});
  Trainer trainer(task, setup.trainer, tmp.path(), /*quiet=*/true);
  EXPECT_EQ(testing::bad_input_message([&] { trainer.run(false); }),
            "training stopped: 3 consecutive steps with non-finite loss or gradients (last at step 3); lower the "
            "learning rate or check the data");
}

TEST(NumericsGuard, detect_anomaly_names_the_op_that_produced_nan_in_backward) {
  testing::TempDir tmp;
  Json config = tiny_config(2);
  config["training"]["detect_anomaly"] = true;
  auto setup = make_lm_training(config, "t.json", at::kCPU);
  EXPECT_TRUE(setup.trainer.detect_anomaly);
  PoisonedTask task(*setup.task, 2, {0});
  Trainer trainer(task, setup.trainer, tmp.path(), /*quiet=*/true);
  try {
    trainer.run(false);
    FAIL() << "anomaly mode should stop at the NaN gradient";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("returned nan values"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace swarmt::train
