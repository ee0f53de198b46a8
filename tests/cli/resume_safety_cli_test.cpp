// --resume never continues from state it cannot verify, and never overwrites or deletes a broken
// checkpoint silently: only broken checkpoints, or logged steps without any checkpoint, are refused
// (exit 2, saying what was found) unless --restart; then broken checkpoints are set aside, not deleted.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli/tiny_run.h"
#include "core/file_helpers.h"
#include "swarmt/core/checkpoint.h"
#include "swarmt/core/remove_tree.h"
#include "swarmt/core/safetensors_torch.h"
#include "swarmt/core/sha256.h"
#include "train/record_losses.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::run_train;

struct ResumeSafety : ::testing::Test {
  void SetUp() override {
    testing::write_file(tmp.file("train.json"), testing::tiny_train_config(2).dump());
    auto r = run_train(tmp.file("train.json"), run());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(steps(), (std::vector<int64_t>{1, 2}));
  }
  std::string run() const { return tmp.file("run"); }
  std::string checkpoint(int64_t step) const { return run() + "/checkpoints/" + checkpoint_dir_name(step); }
  std::vector<int64_t> steps() const {
    std::vector<int64_t> out;
    for (const auto& c : list_checkpoints(run() + "/checkpoints")) out.push_back(c.step);
    return out;
  }
  // Breaks a checkpoint the way a disk or a person would: its weights are replaced by other bytes.
  void corrupt(int64_t step) const {
    const std::string weights = checkpoint(step) + "/model.safetensors";
    std::string bytes = testing::slurp(weights);
    bytes[bytes.size() - 1] ^= 0x5a;
    testing::write_file(weights, bytes);
  }
  testing::TempDir tmp;
};

TEST_F(ResumeSafety, resume_with_every_checkpoint_broken_is_refused_and_changes_nothing) {
  corrupt(1);
  corrupt(2);
  const std::string hash = sha256_file_hex(checkpoint(2) + "/model.safetensors");
  const std::string metrics = testing::slurp(run() + "/metrics.jsonl");
  auto r = run_train(tmp.file("train.json"), run(), "--resume --max-steps 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("checkpoints: none of the 2 checkpoints can be resumed from (" + checkpoint(1) +
                       "/model.safetensors: sha256 mismatch"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Pass --restart (with --resume)"), std::string::npos) << r.err;
  EXPECT_EQ(steps(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(sha256_file_hex(checkpoint(2) + "/model.safetensors"), hash);  // kept for inspection, untouched
  EXPECT_EQ(testing::slurp(run() + "/metrics.jsonl"), metrics);
}

TEST_F(ResumeSafety, restart_sets_broken_checkpoints_aside_and_starts_again) {
  corrupt(1);
  corrupt(2);
  const std::string hash = sha256_file_hex(checkpoint(2) + "/model.safetensors");
  auto r = run_train(tmp.file("train.json"), run(), "--resume --restart --max-steps 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("moved broken " + checkpoint(2) + " to " + run() + "/checkpoints/broken/checkpoint-00000002"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(sha256_file_hex(run() + "/checkpoints/broken/checkpoint-00000002/model.safetensors"), hash);
  EXPECT_TRUE(fs::exists(run() + "/checkpoints/broken/checkpoint-00000001"));
  EXPECT_EQ(testing::logged_losses(run()).size(), 3u) << "the log starts again: every step once";
  EXPECT_EQ(steps(), (std::vector<int64_t>{2, 3}));
}

TEST_F(ResumeSafety, resume_skips_a_broken_newer_checkpoint_without_overwriting_it) {
  corrupt(2);
  const std::string hash = sha256_file_hex(checkpoint(2) + "/model.safetensors");
  auto r = run_train(tmp.file("train.json"), run(), "--resume --max-steps 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;  // checkpoint 1 verifies: the run continues from it
  EXPECT_NE(r.err.find("moved broken " + checkpoint(2)), std::string::npos) << r.err;
  EXPECT_EQ(sha256_file_hex(run() + "/checkpoints/broken/checkpoint-00000002/model.safetensors"), hash);
  EXPECT_EQ(testing::logged_losses(run()).size(), 3u);
}

TEST_F(ResumeSafety, resume_with_logged_steps_but_no_checkpoint_is_refused) {
  remove_tree(run() + "/checkpoints");
  auto r = run_train(tmp.file("train.json"), run(), "--resume");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(run() + ": metrics.jsonl logs steps up to 2 but there is no checkpoint to resume from"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(testing::logged_losses(run()).size(), 2u);  // the log is untouched
  auto restarted = run_train(tmp.file("train.json"), run(), "--resume --restart");
  EXPECT_EQ(restarted.exit_code, 0) << restarted.err;
}

TEST_F(ResumeSafety, a_manifest_listing_no_files_is_not_resumed_from) {
  // The weights beside the manifest are NaN, and the manifest vouches for nothing: resuming from it used
  // to load them, skip every (non-finite) step and save a NaN model with exit 0.
  for (int64_t step : {1, 2}) {
    auto weights = load_safetensors(checkpoint(step) + "/model.safetensors");
    NamedTensors poisoned;
    for (auto& [name, tensor] : weights) poisoned.emplace_back(name, at::full_like(tensor, NAN));
    save_safetensors(checkpoint(step) + "/model.safetensors", poisoned);
    testing::write_file(checkpoint(step) + "/manifest.json",
                        Json{{"format_version", 1}, {"step", step}, {"files", Json::object()}}.dump());
  }
  auto r = run_train(tmp.file("train.json"), run(), "--resume --max-steps 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("manifest.json: lists no files"), std::string::npos) << r.err;
}

TEST_F(ResumeSafety, the_trainer_needs_every_file_of_its_checkpoint) {
  for (int64_t step : {1, 2}) {
    Json manifest = read_json_file(checkpoint(step) + "/manifest.json");
    manifest["files"].erase("optimizer.safetensors");
    fs::remove(checkpoint(step) + "/optimizer.safetensors");
    testing::write_file(checkpoint(step) + "/manifest.json", manifest.dump());
  }
  auto r = run_train(tmp.file("train.json"), run(), "--resume --max-steps 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("manifest.json: does not list optimizer.safetensors, which every checkpoint must hold"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace swarmt
