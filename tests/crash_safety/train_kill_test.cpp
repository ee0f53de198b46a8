// `swarmt train` SIGKILLed at random kill points (inside checkpoint writes, file writes, renames and
// prunes) and resumed: the resumed run must load the last complete checkpoint and end with exactly the
// losses and weights of an uninterrupted run. 20 kill points out of 20. A run killed before its first
// checkpoint but after logging steps is refused by --resume alone and started again with --restart.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <map>
#include <random>

#include "crash_safety/kill_harness.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/json.h"
#include "swarmt/core/safetensors_torch.h"
#include "test_util.h"
#include "train/record_losses.h"

namespace swarmt {
namespace {

constexpr const char* kConfig = R"({
  "model": {"hidden_size": 32, "layer_pattern": "MS", "num_hidden_layers": 2, "num_attention_heads": 2,
            "head_dim": 16, "sliding_window": 32, "mlstm_num_heads": 2, "mlstm_qk_head_dim": 8,
            "mlstm_v_head_dim": 16, "intermediate_size": 64},
  "sequence_length": 64,
  "data": {"train": {"type": "synthetic", "loss": "all", "tasks": [{"task": "essay"}]}},
  "training": {"max_steps": 6, "batch_size": 2, "log_every": 1, "checkpoint_every": 1, "keep_checkpoints": 2,
               "optimizer": {"lr": 0.003}, "seed": 4}
})";

std::vector<std::string> train_argv(const std::string& config, const std::string& out, bool resume) {
  std::vector<std::string> argv = {SWARMT_BINARY, "-q", "--threads", "1", "train", "--config", config, "--out", out};
  if (resume) argv.push_back("--resume");
  return argv;
}

TEST(TrainKill, killed_runs_resume_from_the_last_complete_checkpoint_exactly) {
  testing::TempDir tmp;
  const std::string config = tmp.file("train.json");
  testing::write_file(config, kConfig);

  // The uninterrupted run, counting the kill points it passes.
  auto counted = testing::run_shell("SWARMT_TEST_KILL_AT=report '" + std::string(SWARMT_BINARY) +
                                    "' -q --threads 1 train --config " + config + " --out " + tmp.file("reference"));
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  const auto marker = counted.err.find("swarmt: ");
  ASSERT_NE(marker, std::string::npos) << counted.err;
  const int64_t total = std::stoll(counted.err.substr(marker + 8));
  ASSERT_GT(total, 20) << "expected many kill points (checkpoint every step)";
  const auto reference = testing::logged_losses(tmp.file("reference"));
  ASSERT_EQ(reference.size(), 6u);
  const auto reference_weights = load_safetensors(tmp.file("reference/model.safetensors"));

  std::mt19937_64 rng(20261130);
  std::uniform_int_distribution<int64_t> kill_point(1, total);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t kill_at = kill_point(rng);
    const std::string context = "trial " + std::to_string(trial) + ", SWARMT_TEST_KILL_AT=" + std::to_string(kill_at);
    const std::string run = tmp.file("run" + std::to_string(trial));
    const auto killed = testing::wait_child(
        testing::spawn_command(train_argv(config, run, false), {{"SWARMT_TEST_KILL_AT", std::to_string(kill_at)}}));
    ASSERT_EQ(killed.signal, SIGKILL) << context;

    auto resumed = testing::run_swarmt("-q train --config " + config + " --out " + run + " --resume");
    if (resumed.exit_code == 2 && list_checkpoints(run + "/checkpoints").empty()) {
      // Killed after logging steps but before its first checkpoint: --resume alone would silently start
      // again from step 0, so it is refused, naming --restart; with it the run starts again.
      EXPECT_NE(resumed.err.find("--restart"), std::string::npos) << context << ": " << resumed.err;
      resumed = testing::run_swarmt("-q train --config " + config + " --out " + run + " --resume --restart");
    }
    ASSERT_EQ(resumed.exit_code, 0) << context << ": resume failed: " << resumed.err;
    const auto losses = testing::logged_losses(run);
    ASSERT_EQ(losses.size(), reference.size()) << context;
    for (const auto& [step, loss] : reference)
      EXPECT_NEAR(losses.at(step), loss, 1e-6 * std::abs(loss)) << context << ", step " << step;
    const auto weights = load_safetensors(run + "/model.safetensors");
    ASSERT_EQ(weights.size(), reference_weights.size()) << context;
    for (const auto& [name, tensor] : reference_weights)
      EXPECT_LT((weights.at(name) - tensor).abs().max().item<double>(), 1e-5) << context << ", " << name;
  }
}

}  // namespace
}  // namespace swarmt
