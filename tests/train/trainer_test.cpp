// The training loop end to end on tiny SWAX models: exact resume, learning below the unigram baseline,
// config errors that name the field, and the run directory's files (every checkpoint a model directory).
#include "swarmt/train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/models/model_io.h"
#include "swarmt/train/train_setup.h"
#include "test_util.h"
#include "train/record_losses.h"

namespace swarmt::train {
namespace {

// A tiny MS hybrid on the passkey task (repetitive filler, a number to recall) at 512 byte tokens.
Json tiny_run_config(int64_t max_steps) {
  Json config = Json::parse(R"({
    "model": {"hidden_size": 64, "layer_pattern": "MS", "num_hidden_layers": 2, "num_attention_heads": 2,
              "head_dim": 32, "sliding_window": 64, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 16,
              "mlstm_v_head_dim": 32, "intermediate_size": 128},
    "sequence_length": 512,
    "data": {"train": {"type": "synthetic", "tasks": [{"task": "passkey"}]},
             "validation": {"type": "synthetic", "seed": 99, "tasks": [{"task": "passkey"}]}},
    "window_schedule": {"type": "stochastic", "short_window": 16, "long_window": 64, "p_short": 0.5},
    "training": {"batch_size": 4, "log_every": 1, "eval_batches": 2,
                 "optimizer": {"lr": 0.003}, "lr_schedule": {"type": "cosine", "warmup_steps": 5}}
  })");
  config["training"]["max_steps"] = max_steps;
  return config;
}

std::vector<double> train_losses(const Json& config, const std::string& dir, bool resume, int64_t crash_at = -1) {
  auto setup = make_lm_training(config, "test.json", at::kCPU);
  return testing::record_losses(*setup.task, setup.trainer, dir, resume, crash_at);
}

TEST(Trainer, resumed_run_logs_the_same_losses_as_an_uninterrupted_one) {
  testing::TempDir tmp;
  Json config = tiny_run_config(6);
  config["training"]["checkpoint_every"] = 2;
  const auto full = train_losses(config, tmp.file("full"), false);
  ASSERT_EQ(full.size(), 6u);

  // Crash during step 5 (index 4): the checkpoint after step 4 is the latest; resume redoes steps 4, 5.
  const auto before = train_losses(config, tmp.file("resumed"), false, /*crash_at=*/4);
  ASSERT_EQ(before.size(), 4u);
  const auto after = train_losses(config, tmp.file("resumed"), true);
  ASSERT_EQ(after.size(), 2u);
  std::vector<double> joined = before;
  joined.insert(joined.end(), after.begin(), after.end());
  for (size_t i = 0; i < full.size(); ++i) EXPECT_NEAR(joined[i], full[i], 1e-9 * std::abs(full[i])) << "step " << i;

  // metrics.jsonl of the resumed run has each step exactly once.
  std::ifstream metrics(tmp.file("resumed") + "/metrics.jsonl");
  std::map<int64_t, int> seen;
  for (std::string line; std::getline(metrics, line);) {
    const Json j = Json::parse(line);
    if (j.contains("loss")) seen[j["step"].get<int64_t>()] += 1;
  }
  EXPECT_EQ(seen.size(), 6u);
  for (const auto& [step, count] : seen) EXPECT_EQ(count, 1) << "step " << step;
}

TEST(Trainer, logs_the_window_of_every_step) {
  testing::TempDir tmp;
  train_losses(tiny_run_config(4), tmp.path(), false);
  std::ifstream metrics(tmp.file("metrics.jsonl"));
  int logged = 0;
  for (std::string line; std::getline(metrics, line);) {
    const Json j = Json::parse(line);
    if (!j.contains("loss")) continue;
    ++logged;
    const int64_t w = j.at("window").get<int64_t>();
    EXPECT_TRUE(w == 16 || w == 64) << line;
  }
  EXPECT_EQ(logged, 4);
}

// Cross-entropy of the validation targets under their own unigram distribution: what a model that
// ignores the context at best achieves.
double unigram_entropy(TrainTask& task, int64_t batches, int64_t rows) {
  std::map<int64_t, double> counts;
  double total = 0;
  for (int64_t b = 0; b < batches; ++b) {
    auto batch = task.validation_batch(b, rows);
    auto t = batch.targets.flatten();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t id = t[i].item<int64_t>();
      if (id < 0) continue;
      counts[id] += 1;
      total += 1;
    }
  }
  double h = 0;
  for (const auto& [id, c] : counts) h -= c / total * std::log(c / total);
  return h;
}

TEST(Trainer, tiny_run_ends_far_below_the_unigram_baseline) {
  testing::TempDir tmp;
  Json config = tiny_run_config(60);
  config["training"]["log_every"] = 10;
  auto setup = make_lm_training(config, "test.json", at::kCPU);
  const double baseline = unigram_entropy(*setup.task, setup.trainer.eval_batches, setup.trainer.batch_size);
  Trainer trainer(*setup.task, setup.trainer, tmp.path(), /*quiet=*/true);
  const auto result = trainer.run(false);
  ASSERT_GT(result.final_val_loss, 0);
  EXPECT_LT(result.final_val_loss, 0.5 * baseline) << "unigram baseline " << baseline;
  // The run directory holds a loadable model and its metrics.
  EXPECT_TRUE(std::filesystem::exists(tmp.file("model.safetensors")));
  EXPECT_TRUE(std::filesystem::exists(tmp.file("config.json")));
}

// bf16 autocast runs the whole stack, the custom kernels included (they compute outside autocast), and
// starts from the same loss as fp32 up to bf16 rounding.
TEST(Trainer, bf16_autocast_trains_with_finite_losses_close_to_fp32) {
  testing::TempDir tmp;
  Json config = tiny_run_config(3);
  const auto fp32 = train_losses(config, tmp.file("fp32"), false);
  config["training"]["bf16"] = true;
  const auto bf16 = train_losses(config, tmp.file("bf16"), false);
  ASSERT_EQ(bf16.size(), 3u);
  for (double loss : bf16) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(bf16[0], fp32[0], 0.02 * fp32[0]);
}

std::string setup_error(const Json& config) {
  try {
    make_lm_training(config, "run.json", at::kCPU);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TrainSetup, malformed_configs_are_rejected_naming_the_field) {
  Json c = tiny_run_config(5);
  c["training"]["batch_size"] = 0;
  EXPECT_NE(setup_error(c).find("batch_size"), std::string::npos) << setup_error(c);

  c = tiny_run_config(5);
  c["window_schedule"]["p_short"] = 1.5;
  EXPECT_NE(setup_error(c).find("p_short"), std::string::npos) << setup_error(c);

  c = tiny_run_config(5);
  c["training"]["optimiser"] = Json::object();
  EXPECT_NE(setup_error(c).find("optimiser"), std::string::npos) << setup_error(c);

  c = tiny_run_config(5);
  c["data"]["train"]["tasks"][0]["task"] = "sudoku";
  EXPECT_NE(setup_error(c).find("sudoku"), std::string::npos) << setup_error(c);

  c = tiny_run_config(5);
  c["model"]["layer_pattern"] = "MX";
  EXPECT_NE(setup_error(c).find("layer_pattern"), std::string::npos) << setup_error(c);

  c = tiny_run_config(5);
  c.erase("sequence_length");
  EXPECT_NE(setup_error(c).find("sequence_length"), std::string::npos) << setup_error(c);

  c = tiny_run_config(5);
  c["model"]["layer_pattern"] = "MM";  // no sliding-window layer for the window schedule
  EXPECT_NE(setup_error(c).find("window_schedule"), std::string::npos) << setup_error(c);
}

TEST(Trainer, every_checkpoint_is_a_model_directory_of_its_step) {
  testing::TempDir tmp;
  Json config = tiny_run_config(4);
  config["training"]["checkpoint_every"] = 2;
  train_losses(config, tmp.path(), false);
  const std::string last = tmp.path() + "/checkpoints/checkpoint-00000004";
  const std::string middle = tmp.path() + "/checkpoints/checkpoint-00000002";
  auto final_model = models::load_model(tmp.path());
  auto at_last = models::load_model(last);
  auto at_middle = models::load_model(middle);
  // The last checkpoint holds the exported model: same config, same weights, same tokenizer.
  EXPECT_EQ(at_last->config_json(), final_model->config_json());
  const auto want = final_model->checkpoint_tensors();
  const auto got = at_last->checkpoint_tensors();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i].second.equal(want[i].second)) << want[i].first;
  EXPECT_EQ(models::read_model_assets(last).tokenizer_json, models::read_model_assets(tmp.path()).tokenizer_json);
  // The middle one is the model of step 2, not a copy of the final one.
  bool differs = false;
  const auto early = at_middle->checkpoint_tensors();
  for (size_t i = 0; i < want.size(); ++i) differs = differs || !early[i].second.equal(want[i].second);
  EXPECT_TRUE(differs) << "checkpoint-00000002 holds the weights of step 4";
  // The manifest vouches for the new files too, and resume still takes the checkpoint.
  const Json manifest = read_json_file(last + "/manifest.json");
  EXPECT_TRUE(manifest["files"].contains("config.json"));
  config["training"]["max_steps"] = 5;
  EXPECT_EQ(train_losses(config, tmp.path(), true).size(), 1u);
}

TEST(Trainer, refuses_to_overwrite_a_run_without_resume) {
  testing::TempDir tmp;
  Json config = tiny_run_config(2);
  train_losses(config, tmp.path(), false);
  try {
    train_losses(config, tmp.path(), false);
    FAIL() << "a second run into the same directory was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace swarmt::train
