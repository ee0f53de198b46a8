// Crash safety of checkpoints: a process that writes checkpoints in a loop (like the trainer: resume from
// the latest valid checkpoint, write the next, prune old ones) is SIGKILLed at random points, at exact
// kill points inside the writes and at random moments. After every kill the run directory must hold a
// latest valid checkpoint that is complete (every file verifies and has the content of its step), at
// least as new as the last commit the writer reported, and nothing partial may be listed as a checkpoint.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kill_harness.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/kill_point.h"
#include "swarmt/core/safetensors.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::ChildExit;

constexpr int kKeepLast = 2;
constexpr int kTrials = 20;

// The content of step s: tensors filled with s (a 64 KiB optimizer state, so writes take a while).
std::vector<float> model_values(int64_t step) { return std::vector<float>(256, static_cast<float>(step)); }
std::vector<float> optimizer_values(int64_t step) { return std::vector<float>(16384, static_cast<float>(-step)); }
std::string trainer_state(int64_t step) { return Json{{"step", step}}.dump(); }

void write_trainer_like_checkpoint(const std::string& run_dir, int64_t step) {
  CheckpointWriter writer(run_dir, step);
  const auto model = model_values(step);
  const auto optimizer = optimizer_values(step);
  write_safetensors(writer.path_for("model.safetensors"), {{"w", DType::F32, {16, 16}, model.data(), model.size() * 4}});
  write_safetensors(writer.path_for("optimizer.safetensors"),
                    {{"exp_avg", DType::F32, {128, 128}, optimizer.data(), optimizer.size() * 4}});
  writer.add_file("trainer_state.json", trainer_state(step));
  writer.add_file("rng/cpu.bin", std::string(64, static_cast<char>(step % 251)));
  writer.commit();
}

// The trainer's loop: resume after the latest valid checkpoint, write `count` more (forever if < 0),
// reporting each committed step on `report_fd` before pruning.
void checkpoint_loop(const std::string& run_dir, int report_fd, int count) {
  const auto latest = latest_valid_checkpoint(run_dir);
  int64_t step = latest ? latest->step + 1 : 0;
  for (int i = 0; count < 0 || i < count; ++i, ++step) {
    write_trainer_like_checkpoint(run_dir, step);
    if (::write(report_fd, &step, sizeof(step)) != sizeof(step)) throw std::runtime_error("report failed");
    prune_checkpoints(run_dir, kKeepLast);
  }
}

// Runs checkpoint_loop in a child; returns how it ended and the last step it reported as committed.
struct LoopRun {
  ChildExit end;
  int64_t last_committed = -1;
};

template <typename Finish>
LoopRun run_loop(const std::string& run_dir, int count, const std::map<std::string, std::string>& env, Finish finish) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = testing::fork_child(
      [&] {
        ::close(fds[0]);
        checkpoint_loop(run_dir, fds[1], count);
      },
      env);
  ::close(fds[1]);
  LoopRun run;
  run.end = finish(pid);
  int64_t step = 0;
  while (::read(fds[0], &step, sizeof(step)) == sizeof(step)) run.last_committed = step;
  ::close(fds[0]);
  return run;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Everything a resume relies on, checked after a kill. Returns the step of the latest valid checkpoint.
int64_t expect_run_directory_consistent(const std::string& run_dir, int64_t last_committed, const std::string& context) {
  SCOPED_TRACE(context);
  // Nothing partial is listed: every listed checkpoint has a final name and verifies completely.
  const std::vector<CheckpointStatus> listed = check_checkpoints(run_dir, VerifyLevel::Full);
  EXPECT_FALSE(listed.empty());
  for (const CheckpointStatus& c : listed) {
    const std::string name = fs::path(c.path).filename().string();
    EXPECT_NE(name.front(), '.') << "a temporary directory is listed: " << c.path;
    EXPECT_TRUE(c.valid) << c.path << ": " << c.problem;
  }
  std::vector<std::string> warnings;
  const auto latest = latest_valid_checkpoint(run_dir, &warnings);
  for (const std::string& w : warnings) EXPECT_EQ(w.rfind("ignoring ", 0), 0u) << "unexpected warning: " << w;
  EXPECT_TRUE(latest.has_value());
  if (!latest) return -1;
  EXPECT_EQ(latest->step, listed.back().step) << "the newest listed checkpoint is the latest valid one";
  EXPECT_GE(latest->step, last_committed) << "a commit the writer reported was lost";

  // Complete and of its own step: the content is what that step wrote.
  const int64_t step = latest->step;
  EXPECT_EQ(read_all(latest->path + "/trainer_state.json"), trainer_state(step));
  const SafetensorsFile model = SafetensorsFile::open(latest->path + "/model.safetensors");
  const auto expected = model_values(step);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(model.data(model.entry("w"))), model.entry("w").nbytes()),
            std::string(reinterpret_cast<const char*>(expected.data()), expected.size() * 4));
  EXPECT_TRUE(SafetensorsFile::open(latest->path + "/optimizer.safetensors").has("exp_avg"));
  return step;
}

// Kill points one checkpoint (write + prune) passes, counted by an uninterrupted child.
int64_t kill_points_per_checkpoint(const std::string& scratch) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = testing::fork_child(
      [&] {
        ::close(fds[0]);
        write_trainer_like_checkpoint(scratch, 1);
        const int64_t points = kill_points_reached();
        if (::write(fds[1], &points, sizeof(points)) != sizeof(points)) throw std::runtime_error("report failed");
      },
      {{kKillAtEnvironmentVariable, "1000000000"}});
  ::close(fds[1]);
  const ChildExit end = testing::wait_child(pid);
  int64_t points = 0;
  const bool got = ::read(fds[0], &points, sizeof(points)) == sizeof(points);
  ::close(fds[0]);
  EXPECT_TRUE(end.exited && end.exit_code == 0) << end.describe();
  EXPECT_TRUE(got);
  return points;
}

class CheckpointKill : public ::testing::Test {
 protected:
  void SetUp() override {
    run_dir_ = tmp_.file("run");
    write_trainer_like_checkpoint(run_dir_, 0);  // a run that has saved once already
  }
  // One clean run at the end: leftovers of killed writers are pruned, and the run continues.
  void expect_clean_finish(int64_t last_step) {
    const LoopRun run = run_loop(run_dir_, 2, {}, testing::wait_child);
    EXPECT_TRUE(run.end.exited && run.end.exit_code == 0) << run.end.describe();
    EXPECT_EQ(run.last_committed, last_step + 2) << "the clean run resumes right after the latest checkpoint";
    for (const auto& entry : fs::directory_iterator(run_dir_))
      EXPECT_NE(entry.path().filename().string().front(), '.') << "leftover not pruned: " << entry.path();
    EXPECT_EQ(list_checkpoints(run_dir_).size(), static_cast<size_t>(kKeepLast));
  }
  testing::TempDir tmp_;
  std::string run_dir_;
  std::mt19937_64 rng_{20260501};
};

TEST_F(CheckpointKill, the_directory_rename_is_the_commit_point) {
  // The last two kill points of a checkpoint are just before and just after the directory rename.
  const int64_t per_checkpoint = kill_points_per_checkpoint(tmp_.file("count"));
  ASSERT_GE(per_checkpoint, 8) << "every file write, rename and the manifest are kill points";

  LoopRun run = run_loop(run_dir_, 1, {{kKillAtEnvironmentVariable, std::to_string(per_checkpoint - 1)}}, testing::wait_child);
  EXPECT_TRUE(run.end.killed()) << run.end.describe();
  EXPECT_EQ(expect_run_directory_consistent(run_dir_, 0, "killed before the rename"), 0) << "the old state";

  run = run_loop(run_dir_, 1, {{kKillAtEnvironmentVariable, std::to_string(per_checkpoint)}}, testing::wait_child);
  EXPECT_TRUE(run.end.killed()) << run.end.describe();
  EXPECT_EQ(run.last_committed, -1) << "killed before it could report the commit";
  EXPECT_EQ(expect_run_directory_consistent(run_dir_, 0, "killed after the rename"), 1) << "the new state";
}

TEST_F(CheckpointKill, a_kill_while_pruning_leaves_no_half_deleted_checkpoint) {
  write_trainer_like_checkpoint(run_dir_, 1);
  write_trainer_like_checkpoint(run_dir_, 2);  // keeping the last 2, pruning removes step 0
  const ChildExit end = testing::wait_child(testing::fork_child([&] { prune_checkpoints(run_dir_, kKeepLast); },
                                                                {{kKillAtEnvironmentVariable, "1"}}));
  EXPECT_TRUE(end.killed()) << end.describe();
  std::vector<int64_t> steps;
  for (const CheckpointStatus& c : list_checkpoints(run_dir_)) steps.push_back(c.step);
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2})) << "the doomed checkpoint left the listing before its files went";
  EXPECT_EQ(expect_run_directory_consistent(run_dir_, 2, "killed while pruning"), 2);

  prune_checkpoints(run_dir_, kKeepLast);  // a later prune removes what the killed one left
  for (const auto& entry : fs::directory_iterator(run_dir_))
    EXPECT_NE(entry.path().filename().string().front(), '.') << "leftover not removed: " << entry.path();
}

TEST_F(CheckpointKill, latest_checkpoint_is_complete_after_kills_at_random_kill_points) {
  const int64_t per_checkpoint = kill_points_per_checkpoint(tmp_.file("count"));
  ASSERT_GT(per_checkpoint, 0);
  constexpr int kCheckpointsPerRun = 3;
  std::uniform_int_distribution<int64_t> point(1, per_checkpoint * kCheckpointsPerRun);
  int64_t last_committed = 0, latest = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const int64_t kill_at = point(rng_);
    const LoopRun run = run_loop(run_dir_, kCheckpointsPerRun, {{kKillAtEnvironmentVariable, std::to_string(kill_at)}},
                                 testing::wait_child);
    const std::string context = "trial " + std::to_string(trial) + ", SWARMT_TEST_KILL_AT=" + std::to_string(kill_at);
    EXPECT_TRUE(run.end.killed()) << context << ": " << run.end.describe();
    last_committed = std::max(last_committed, run.last_committed);
    latest = expect_run_directory_consistent(run_dir_, last_committed, context);
    if (HasFailure()) return;
  }
  expect_clean_finish(latest);
}

TEST_F(CheckpointKill, latest_checkpoint_is_complete_after_kills_at_random_moments) {
  // How long one uninterrupted checkpoint (write + prune) takes here, to spread kills over several.
  const auto start = std::chrono::steady_clock::now();
  const LoopRun timing = run_loop(tmp_.file("timing"), 3, {}, testing::wait_child);
  ASSERT_TRUE(timing.end.exited && timing.end.exit_code == 0) << timing.end.describe();
  const auto per_checkpoint = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start) / 3;
  std::uniform_int_distribution<int64_t> delay(0, 3 * per_checkpoint.count());

  int64_t last_committed = 0, latest = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const auto after = std::chrono::microseconds(delay(rng_));
    const LoopRun run = run_loop(run_dir_, /*count=*/-1, {}, [&](pid_t pid) { return testing::kill_after(pid, after); });
    const std::string context = "trial " + std::to_string(trial) + ", killed after " + std::to_string(after.count()) + " us";
    EXPECT_TRUE(run.end.killed()) << context << ": " << run.end.describe();
    last_committed = std::max(last_committed, run.last_committed);
    latest = expect_run_directory_consistent(run_dir_, last_committed, context);
    if (HasFailure()) return;
  }
  expect_clean_finish(latest);
}

TEST(KillHarness, spawn_command_reports_exit_codes_and_kills) {
  const ChildExit exited = testing::wait_child(testing::spawn_command({"sh", "-c", "exit $CODE"}, {{"CODE", "3"}}));
  EXPECT_TRUE(exited.exited);
  EXPECT_EQ(exited.exit_code, 3);
  const ChildExit killed = testing::kill_after(testing::spawn_command({"sleep", "30"}), std::chrono::milliseconds(20));
  EXPECT_TRUE(killed.killed()) << killed.describe();
}

}  // namespace
}  // namespace swarmt
