// One writer per run directory, through the real binary: two `swarmt train` started together on one
// --out leave exactly one complete run; a train refused by the lock names the holder and changes
// nothing; a refused train does not touch the run's saved configuration.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "cli/tiny_run.h"
#include "core/file_helpers.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/run_lock.h"
#include "swarmt/train/run_start.h"
#include "train/record_losses.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::run_train;
using testing::slurp;

TEST(RunLockCli, two_trains_started_together_on_one_out_leave_one_complete_run) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("train.json"), testing::tiny_train_config(4).dump());
  const std::string train = "OMP_NUM_THREADS=1 '" + std::string(SWARMT_BINARY) + "' -q --threads 1 train --config " +
                            tmp.file("train.json") + " --out " + tmp.file("run");
  // Both processes are started before either is waited for, so they race for the directory.
  auto both = testing::run_shell("(" + train + " 2>" + tmp.file("a.err") + "; echo $? >" + tmp.file("a.rc") + ") & (" +
                                 train + " 2>" + tmp.file("b.err") + "; echo $? >" + tmp.file("b.rc") + ") & wait");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const int a = std::stoi(slurp(tmp.file("a.rc"))), b = std::stoi(slurp(tmp.file("b.rc")));
  ASSERT_EQ(std::min(a, b), 0) << slurp(tmp.file("a.err")) << slurp(tmp.file("b.err"));
  ASSERT_EQ(std::max(a, b), 2) << "both runs succeeded: one replaced the other's files";
  // The loser was refused either by the lock (while the winner ran) or by the winner's finished run.
  const std::string refusal = slurp(tmp.file(a == 2 ? "a.err" : "b.err"));
  EXPECT_TRUE(refusal.find("is being written by another swarmt process (pid ") != std::string::npos ||
              refusal.find("already holds a training run") != std::string::npos)
      << refusal;
  // What is left is the winner's run, whole: each step logged once, the last checkpoint verifies.
  EXPECT_EQ(testing::logged_losses(tmp.file("run")).size(), 4u);
  const auto latest = latest_valid_checkpoint(tmp.file("run/checkpoints"), nullptr, train::kTrainerCheckpointFiles);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, 4);
  EXPECT_FALSE(fs::exists(tmp.file(std::string("run/") + kRunLockFile))) << "the lock is released at exit";
}

TEST(RunLockCli, a_train_refused_by_the_lock_names_the_holder_and_changes_nothing) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("train.json"), testing::tiny_train_config(2).dump());
  auto first = run_train(tmp.file("train.json"), tmp.file("run"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string metrics = slurp(tmp.file("run/metrics.jsonl"));
  const auto listing = testing::entries_of(tmp.file("run"));

  const RunLock held = RunLock::acquire(tmp.file("run"), "--out");  // this test process is "the other run"
  auto second = run_train(tmp.file("train.json"), tmp.file("run"), "--resume --max-steps 4");
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("error: --out " + tmp.file("run") + " is being written by another swarmt process (pid " +
                            std::to_string(::getpid())),
            std::string::npos)
      << second.err;
  EXPECT_EQ(slurp(tmp.file("run/metrics.jsonl")), metrics);
  auto now = testing::entries_of(tmp.file("run"));
  now.erase(std::remove(now.begin(), now.end(), kRunLockFile), now.end());  // the lock this test holds
  EXPECT_EQ(now, listing);
}

TEST(RunLockCli, a_data_parallel_train_is_refused_by_its_writer_rank_without_waiting) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("train.json"), testing::tiny_train_config(2).dump());
  const RunLock held = RunLock::acquire(tmp.file("run"), "--out");
  // Rank 0 takes the lock (and is refused); the launcher itself holds none its workers could wait for.
  auto r = run_train(tmp.file("train.json"), tmp.file("run"), "--nproc-per-node 2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is being written by another swarmt process (pid " + std::to_string(::getpid())),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("run/train_config.json")));
}

TEST(RunLockCli, a_refused_train_does_not_touch_the_saved_configuration) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("train.json"), testing::tiny_train_config(2).dump());
  auto first = run_train(tmp.file("train.json"), tmp.file("run"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string saved = slurp(tmp.file("run/train_config.json"));

  Json other = testing::tiny_train_config(2);
  other["training"]["optimizer"] = {{"lr", 0.5}};
  other["training"]["clip_grad_norm"] = 0;
  testing::write_file(tmp.file("other.json"), other.dump());
  auto refused = run_train(tmp.file("other.json"), tmp.file("run"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find(tmp.file("run") + " already holds a training run (2 checkpoints in checkpoints/ and "
                                               "steps up to 2 in metrics.jsonl); pass --resume"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(slurp(tmp.file("run/train_config.json")), saved);  // a later --resume keeps the original lr
}

}  // namespace
}  // namespace swarmt
