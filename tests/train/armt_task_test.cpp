// The ARMT recipe on the shared trainer: the per-stage learning-rate schedule, the curriculum's segment
// counts per step, exact resume, a frozen base with adapter output, padded random segment counts, and
// config errors that name the field.
#include "swarmt/train/armt_task.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "bad_input.h"
#include "swarmt/models/armt_io.h"
#include "swarmt/models/registry.h"
#include "test_util.h"
#include "train/record_losses.h"

namespace swarmt::train {
namespace {

using swarmt::testing::bad_input_message;
using swarmt::testing::TempDir;

// A tiny byte-vocabulary Llama saved as the base model.
std::string write_base(const TempDir& tmp) {
  Json config{{"model_type", "llama"}, {"hidden_size", 32},      {"num_hidden_layers", 2},
              {"num_attention_heads", 2}, {"num_key_value_heads", 2}, {"head_dim", 16},
              {"intermediate_size", 64}, {"vocab_size", 259},      {"tie_word_embeddings", true},
              {"bos_token_id", 257},     {"eos_token_id", 258},     {"pad_token_id", 256}};
  torch::manual_seed(3);
  auto base = models::create_model(config, "base.json");
  const std::string dir = tmp.file("base");
  models::save_model(*base, dir);
  return dir;
}

Json armt_config(const std::string& curriculum_json) {
  Json config = Json::parse(R"({
    "armt": {"segment_size": 32, "num_memory_tokens": 2, "d_mem": 8, "seed": 1},
    "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]},
             "validation": {"type": "synthetic", "seed": 5, "loss": "all", "tasks": [{"task": "essay"}]}},
    "training": {"batch_size": 2, "log_every": 1, "eval_batches": 1, "optimizer": {"lr": 0.003}}
  })");
  config["curriculum"] = Json::parse(curriculum_json);
  return config;
}

TEST(ArmtCurriculum, learning_rate_warms_up_and_anneals_within_each_stage) {
  ArmtCurriculum c;
  const Json spec = Json::parse(R"({"segments": [2, 4], "steps": [10, 20], "warmup_fraction": 0.2,
                                    "schedule": "linear", "min_lr_ratio": 0.0})");
  c.add_phase(0, JsonView(spec, "c.json"));
  EXPECT_EQ(c.total_steps(), 30);
  EXPECT_EQ(c.stage_at(9).segments, 2);
  EXPECT_EQ(c.stage_at(10).segments, 4);
  // Stage 1: warmup over 2 steps (1/3, 2/3), then linear from 1 down to 0 at its last step.
  EXPECT_NEAR(c.lr_multiplier(0), 1.0 / 3, 1e-12);
  EXPECT_NEAR(c.lr_multiplier(1), 2.0 / 3, 1e-12);
  EXPECT_NEAR(c.lr_multiplier(2), 1.0, 1e-12);
  EXPECT_NEAR(c.lr_multiplier(9), 0.0, 1e-12);
  // Stage 2 starts its own warmup (4 steps) and annealing.
  EXPECT_NEAR(c.lr_multiplier(10), 1.0 / 5, 1e-12);
  EXPECT_NEAR(c.lr_multiplier(14), 1.0, 1e-12);
  EXPECT_NEAR(c.lr_multiplier(29), 0.0, 1e-12);
}

TEST(ArmtTask, each_step_uses_its_stage_segment_count_and_length) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  auto setup = make_armt_training(armt_config(R"({"segments": [1, 3], "steps": [2, 2]})"), "t.json", base, "", at::kCPU);
  EXPECT_EQ(setup.trainer.max_steps, 4);
  for (int64_t step = 0; step < 4; ++step) {
    StepPlan plan = setup.task->plan(step, 4);
    EXPECT_EQ(plan.num_segments, step < 2 ? 1 : 3);
    EXPECT_EQ(setup.task->train_batch(plan, step * 2, 2).tokens.size(1), plan.num_segments * 32);
  }
}

// A task's curriculum inside a phase (the recall task's "pairs") follows that phase's own steps: the
// first half of each phase draws one fact per sequence, the second half three, in the second phase too.
TEST(ArmtTask, a_phase_s_data_curriculum_follows_the_phase_s_own_steps) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  Json config = armt_config(R"({"segments": [2], "steps": [4]})");
  config.erase("curriculum");
  config.erase("data");
  const Json recall = Json::parse(R"({"type": "synthetic", "loss": "answer", "tasks": [{"task": "recall",
      "pairs": [[0, 1], [0.5, 3]], "distances": [[1, 4, 30]]}]})");
  config["phases"] = Json::array();
  for (const char* name : {"first", "second"})
    config["phases"].push_back({{"name", name}, {"data", {{"train", recall}}},
                                {"curriculum", Json::parse(R"({"segments": [2], "steps": [4]})")}});
  auto setup = make_armt_training(config, "t.json", base, "", at::kCPU);
  ASSERT_EQ(setup.trainer.max_steps, 8);
  for (int64_t step = 0; step < 8; ++step) {
    const auto batch = setup.task->train_batch(setup.task->plan(step, 8), step * 2, 2);
    const int64_t questions = batch.targets.ne(data::kIgnoreIndex).sum().item<int64_t>();
    EXPECT_EQ(questions, step % 4 < 2 ? 2 : 6) << "step " << step;  // 2 rows x 1 or 3 facts, each asked once
  }
}

std::vector<double> run_losses(const Json& config, const std::string& base, const std::string& dir, bool resume,
                               int64_t crash_at = -1) {
  auto setup = make_armt_training(config, "t.json", base, "", at::kCPU);
  return testing::record_losses(*setup.task, setup.trainer, dir, resume, crash_at);
}

TEST(ArmtTask, resumed_run_logs_the_same_losses_across_curriculum_stages) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  Json config = armt_config(R"({"segments": [2, 3], "steps": [3, 3]})");
  config["training"]["checkpoint_every"] = 2;
  const auto full = run_losses(config, base, tmp.file("full"), false);
  ASSERT_EQ(full.size(), 6u);
  const auto before = run_losses(config, base, tmp.file("resumed"), false, /*crash_at=*/4);
  ASSERT_EQ(before.size(), 4u);
  const auto after = run_losses(config, base, tmp.file("resumed"), true);
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(before[i], full[i], 1e-9 * std::abs(full[i])) << "step " << i;
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(after[i], full[4 + i], 1e-9 * std::abs(full[4 + i])) << "step " << 4 + i;
  // The merged model (base not frozen) is written at the end and loads as an ARMT model.
  EXPECT_EQ(models::load_model(tmp.file("full"))->model_type(), "armt");
}

// Same tensors under the same names.
void expect_same_tensors(const std::vector<std::pair<std::string, at::Tensor>>& got,
                         const std::vector<std::pair<std::string, at::Tensor>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_TRUE(got[i].second.equal(want[i].second)) << want[i].first;
  }
}

TEST(ArmtTask, a_checkpoint_loads_as_the_armt_model_of_its_step_merged_or_adapter) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  Json config = armt_config(R"({"segments": [2], "steps": [2]})");
  config["training"]["checkpoint_every"] = 2;
  run_losses(config, base, tmp.file("merged"), false);
  auto from_checkpoint = models::load_model(tmp.file("merged") + "/checkpoints/checkpoint-00000002");
  EXPECT_EQ(from_checkpoint->model_type(), "armt");
  expect_same_tensors(from_checkpoint->checkpoint_tensors(), models::load_model(tmp.file("merged"))->checkpoint_tensors());

  // With a frozen base the checkpoint holds the adapter only: it is an adapter directory whose base is
  // the run's base, found from wherever the checkpoint lies.
  config["freeze_base"] = true;
  run_losses(config, base, tmp.file("frozen"), false);
  const std::string checkpoint = tmp.file("frozen") + "/checkpoints/checkpoint-00000002";
  ASSERT_TRUE(models::is_armt_adapter_dir(checkpoint));
  EXPECT_TRUE(std::filesystem::equivalent(models::armt_base_dir(checkpoint), base));
  auto adapter = models::load_armt_adapter(checkpoint);
  auto exported = models::load_armt_adapter(tmp.file("frozen"));
  expect_same_tensors(adapter->adapter_tensors(), exported->adapter_tensors());
  expect_same_tensors(adapter->base().checkpoint_tensors(), exported->base().checkpoint_tensors());
}

TEST(ArmtTask, frozen_base_trains_only_the_memory_and_exports_an_adapter) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  Json config = armt_config(R"({"segments": [2], "steps": [3]})");
  config["freeze_base"] = true;
  auto setup = make_armt_training(config, "t.json", base, "", at::kCPU);
  for (const auto& p : setup.task->trainable_parameters())
    EXPECT_EQ(p.name.rfind("armt.", 0), 0u) << p.name << " trains although the base is frozen";
  Trainer trainer(*setup.task, setup.trainer, tmp.file("run"), /*quiet=*/true);
  trainer.run(false);
  EXPECT_TRUE(models::is_armt_adapter_dir(tmp.file("run")));
  auto trained = models::load_armt_adapter(tmp.file("run"));
  auto original = models::load_model(base);
  auto stored = original->checkpoint_tensors();
  auto now = trained->base().checkpoint_tensors();
  ASSERT_EQ(stored.size(), now.size());
  for (size_t i = 0; i < stored.size(); ++i) EXPECT_TRUE(stored[i].second.equal(now[i].second)) << stored[i].first;
  // W_v moved away from zero: the memory was trained.
  double value_norm = 0;
  for (const auto& [name, t] : trained->adapter_tensors())
    if (name.find(".value.") != std::string::npos) value_norm += t.abs().sum().item<double>();
  EXPECT_GT(value_norm, 0);
}

TEST(ArmtTask, frozen_parameters_keep_their_values_and_a_pattern_matching_nothing_is_refused) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  Json config = armt_config(R"({"segments": [2], "steps": [3]})");
  config["freeze_parameters"] = Json::array({"armt.layers.*.query.weight", "armt.layers.*.key.weight"});
  auto setup = make_armt_training(config, "t.json", base, "", at::kCPU);
  std::map<std::string, at::Tensor> before;
  for (const auto& item : setup.task->model().named_parameters()) before[item.key()] = item.value().detach().clone();
  for (const auto& p : setup.task->trainable_parameters())
    EXPECT_TRUE(p.name.find(".query.") == std::string::npos && p.name.find(".key.") == std::string::npos) << p.name;
  Trainer trainer(*setup.task, setup.trainer, tmp.file("run"), /*quiet=*/true);
  trainer.run(false);
  int64_t frozen = 0, moved = 0;
  for (const auto& item : setup.task->model().named_parameters()) {
    const bool same = item.value().equal(before.at(item.key()));
    if (item.key().find(".query.") != std::string::npos || item.key().find(".key.") != std::string::npos) {
      EXPECT_TRUE(same) << item.key() << " trained although frozen";
      ++frozen;
    } else if (!same) {
      ++moved;
    }
  }
  EXPECT_EQ(frozen, 4);  // query and key of both memory layers
  EXPECT_GT(moved, 0);   // the rest trained

  // The patterns are part of the run: resuming it without them is refused.
  Json unfrozen = config;
  unfrozen.erase("freeze_parameters");  // nothing else differs
  auto other = make_armt_training(unfrozen, "t.json", base, "", at::kCPU);
  Trainer resumed(*other.task, other.trainer, tmp.file("run"), /*quiet=*/true);
  const std::string refusal = bad_input_message([&] { resumed.run(true); });
  EXPECT_NE(refusal.find("different model or task configuration"), std::string::npos) << refusal;

  config["freeze_parameters"] = Json::array({"armt.layers.*.query.weight", "armt.layers.*.qkv.weight"});
  const std::string message = bad_input_message([&] { make_armt_training(config, "t.json", base, "", at::kCPU); });
  EXPECT_NE(message.find("freeze_parameters"), std::string::npos) << message;
  EXPECT_NE(message.find("[1]"), std::string::npos) << message;
  EXPECT_NE(message.find("qkv"), std::string::npos) << message;
  EXPECT_NE(message.find("armt.memory_tokens"), std::string::npos) << message;  // real names as examples
}

TEST(ArmtTask, random_segment_counts_pad_samples_without_loss_on_the_padding) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  auto setup = make_armt_training(armt_config(R"({"segments": [4], "steps": [1], "random_segments": true})"), "t.json",
                                  base, "", at::kCPU);
  auto batch = setup.task->train_batch(setup.task->plan(0, 1), 0, 16);
  ASSERT_EQ(batch.tokens.size(1), 128);
  std::set<int64_t> real_lengths;
  for (int64_t r = 0; r < 16; ++r) {
    at::Tensor targets = batch.targets[r];
    int64_t last = -1;
    for (int64_t t = 0; t < 128; ++t)
      if (targets[t].item<int64_t>() != data::kIgnoreIndex) last = t;
    const int64_t segments = (last + 32) / 32;  // targets reach the end of the real segments
    real_lengths.insert(segments);
    for (int64_t t = segments * 32; t < 128; ++t) EXPECT_EQ(batch.tokens[r][t].item<int64_t>(), 256) << "row " << r;
  }
  EXPECT_GT(real_lengths.size(), 1u) << "all samples drew the same number of segments";
}

TEST(ArmtTask, malformed_training_configs_name_the_field) {
  TempDir tmp;
  const std::string base = write_base(tmp);
  auto error = [&](Json config) {
    return bad_input_message([&] { make_armt_training(config, "t.json", base, "", at::kCPU); });
  };
  Json c = armt_config(R"({"segments": [2, 4], "steps": [3]})");
  EXPECT_EQ(error(c), "t.json: field 'curriculum.steps' has 1 entries but \"segments\" has 2");
  c = armt_config(R"({"segments": [2], "steps": [3]})");
  c["training"]["max_steps"] = 10;
  EXPECT_EQ(error(c), "t.json: field 'training': max_steps (10) must equal the curriculum's total (3 steps), or be left out");
  c = armt_config(R"({"segments": [2], "steps": [3]})");
  c["output"] = "adapter";
  EXPECT_NE(error(c).find("an adapter alone cannot hold a trained base model"), std::string::npos);
  c = armt_config(R"({"segments": [2], "steps": [3]})");
  c.erase("armt");
  EXPECT_EQ(error(c), "t.json: field 'armt' (the ARMT config) is missing");
  c = armt_config(R"({"segments": [0], "steps": [3]})");
  EXPECT_EQ(error(c), "t.json: field 'curriculum.segments' must hold counts in [1, 4096], got 0");
  c = armt_config(R"({"segments": [2], "steps": [3]})");
  c["data"]["train"] = Json{{"type", "tokens"}, {"path", tmp.file("missing.json")}};
  EXPECT_NE(error(c).find("missing.json"), std::string::npos);
}

}  // namespace
}  // namespace swarmt::train
