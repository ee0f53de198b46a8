// Checkpoint directories: every kind of damage is reported precisely and never taken as valid; resume
// finds the newest checkpoint that verifies; pruning keeps the last K.
#include "swarmt/core/checkpoint.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/core/safetensors.h"
#include "swarmt/core/sha256.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

// A checkpoint like the trainer's: weights, optimizer state and trainer state.
std::string write_checkpoint(const std::string& run_dir, int64_t step) {
  CheckpointWriter writer(run_dir, step);
  writer.add_file("model.safetensors", std::string(1000, 'm') + std::to_string(step));
  writer.add_file("optimizer.safetensors", std::string(3000, 'o') + std::to_string(step));
  testing::write_file(writer.path_for("trainer_state.json"), "{\"step\": " + std::to_string(step) + "}");
  return writer.commit();
}

std::string verify_error(const std::string& dir, VerifyLevel level = VerifyLevel::Full) {
  try {
    verify_checkpoint(dir, level);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "(valid)";
}

std::vector<int64_t> steps_in(const std::string& run_dir) {
  std::vector<int64_t> steps;
  for (const auto& c : list_checkpoints(run_dir)) steps.push_back(c.step);
  return steps;
}

void overwrite_byte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

TEST(Checkpoint, directory_names_are_zero_padded_steps) {
  EXPECT_EQ(checkpoint_dir_name(200), "checkpoint-00000200");
  EXPECT_EQ(checkpoint_dir_name(123456789), "checkpoint-123456789");
  int64_t step = -1;
  EXPECT_TRUE(parse_checkpoint_dir_name("checkpoint-00000200", &step));
  EXPECT_EQ(step, 200);
  EXPECT_FALSE(parse_checkpoint_dir_name("checkpoint-200", &step));
  EXPECT_FALSE(parse_checkpoint_dir_name("checkpoint-0000020a", &step));
  EXPECT_FALSE(parse_checkpoint_dir_name(".checkpoint-00000200.tmp-12-0", &step));
}

TEST(Checkpoint, commit_writes_a_manifest_with_sizes_and_hashes) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  EXPECT_EQ(fs::path(dir).filename().string(), "checkpoint-00000200");
  const Json manifest = read_json_file(dir + "/manifest.json");
  EXPECT_EQ(manifest["format_version"], 1);
  EXPECT_EQ(manifest["step"], 200);
  ASSERT_EQ(manifest["files"].size(), 3u);
  EXPECT_EQ(manifest["files"]["optimizer.safetensors"]["bytes"], 3003);
  EXPECT_EQ(manifest["files"]["optimizer.safetensors"]["sha256"], sha256_file_hex(dir + "/optimizer.safetensors"));
  const CheckpointManifest verified = verify_checkpoint(dir);
  EXPECT_EQ(verified.step, 200);
  EXPECT_EQ(verified.files.count("trainer_state.json"), 1u);
}

// A file's writer hashes it while writing (write_safetensors returns the digest); the manifest takes the
// recorded digest and does not read the file again. A digest recorded wrongly would therefore be caught
// by verification, as this test shows by recording one on purpose.
TEST(Checkpoint, digests_recorded_while_writing_go_into_the_manifest_without_reading_the_file_again) {
  testing::TempDir tmp;
  CheckpointWriter writer(tmp.path(), 300);
  const std::vector<uint8_t> values(64, 7);
  const FileDigest written = write_safetensors(writer.path_for("model.safetensors"),
                                               {{"w", DType::U8, {64}, values.data(), values.size()}});
  EXPECT_EQ(written.sha256, sha256_file_hex(writer.path_for("model.safetensors")));
  EXPECT_EQ(written.bytes, fs::file_size(writer.path_for("model.safetensors")));
  writer.record("model.safetensors", written);
  testing::write_file(writer.path_for("optimizer.safetensors"), "optimizer state");
  writer.record("optimizer.safetensors", {15, sha256_hex("not what was written")});
  const std::string dir = writer.commit();

  const Json manifest = read_json_file(dir + "/manifest.json");
  EXPECT_EQ(manifest["files"]["model.safetensors"]["sha256"], written.sha256);
  EXPECT_EQ(manifest["files"]["optimizer.safetensors"]["sha256"], sha256_hex("not what was written"));
  EXPECT_NE(verify_error(dir).find("optimizer.safetensors: sha256 mismatch"), std::string::npos) << verify_error(dir);
}

TEST(Checkpoint, nothing_is_visible_before_commit_and_an_abandoned_write_leaves_nothing) {
  testing::TempDir tmp;
  {
    CheckpointWriter writer(tmp.path(), 300);
    writer.add_file("model.safetensors", "partial");
    EXPECT_TRUE(steps_in(tmp.path()).empty());
  }  // e.g. the trainer crashed or threw mid-save
  EXPECT_TRUE(steps_in(tmp.path()).empty());
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(Checkpoint, corrupted_byte_is_reported_as_a_hash_mismatch) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  overwrite_byte(dir + "/optimizer.safetensors", 1234);  // same size, different content
  const std::string message = verify_error(dir);
  EXPECT_NE(message.find("checkpoint-00000200/optimizer.safetensors: sha256 mismatch (file changed or truncated)"),
            std::string::npos)
      << message;
  EXPECT_EQ(verify_error(dir, VerifyLevel::Sizes), "(valid)");  // only the full check sees same-size damage
}

TEST(Checkpoint, truncated_file_is_reported_with_both_sizes) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  fs::resize_file(dir + "/model.safetensors", 500);
  const std::string message = verify_error(dir, VerifyLevel::Sizes);
  EXPECT_NE(message.find("checkpoint-00000200/model.safetensors: size 500 bytes, but manifest.json says 1003 (file "
                         "truncated or changed)"),
            std::string::npos)
      << message;
}

TEST(Checkpoint, missing_file_is_reported) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  fs::remove(dir + "/trainer_state.json");
  EXPECT_NE(verify_error(dir).find("checkpoint-00000200/trainer_state.json: missing (listed in manifest.json)"),
            std::string::npos);
}

TEST(Checkpoint, missing_manifest_means_an_incomplete_write) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  fs::remove(dir + "/manifest.json");
  EXPECT_NE(verify_error(dir).find("checkpoint-00000200: manifest.json is missing (incomplete or interrupted checkpoint write)"),
            std::string::npos);
}

TEST(Checkpoint, damaged_manifest_is_reported_naming_it) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  testing::write_file(dir + "/manifest.json", "{\"format_version\": 1, \"step\": 200, \"files\": ");
  EXPECT_NE(verify_error(dir).find("manifest.json: not valid JSON"), std::string::npos);
  testing::write_file(dir + "/manifest.json", R"({"format_version": 1, "step": 300, "files": {}})");
  EXPECT_NE(verify_error(dir).find("manifest.json: step 300 does not match the directory name (step 200)"),
            std::string::npos);
  testing::write_file(dir + "/manifest.json", R"({"format_version": 7, "step": 200, "files": {}})");
  EXPECT_NE(verify_error(dir).find("unsupported format_version 7"), std::string::npos);
  testing::write_file(dir + "/manifest.json",
                      R"({"format_version": 1, "step": 200, "files": {"../x": {"bytes": 1, "sha256": "00"}}})");
  EXPECT_NE(verify_error(dir).find("invalid file name \"../x\""), std::string::npos);
}

TEST(Checkpoint, writer_rejects_names_outside_the_checkpoint) {
  testing::TempDir tmp;
  CheckpointWriter writer(tmp.path(), 1);
  EXPECT_THROW(writer.path_for("../escape"), Error);
  EXPECT_THROW(writer.path_for("/abs"), Error);
  EXPECT_THROW(writer.path_for("manifest.json"), Error);
  EXPECT_NO_THROW(writer.path_for("rng/rank0.bin"));
}

TEST(Checkpoint, listing_sorts_by_step_and_ignores_temporary_directories) {
  testing::TempDir tmp;
  write_checkpoint(tmp.path(), 100000000);  // 9 digits sorts after 8 by number, not by name
  write_checkpoint(tmp.path(), 99999999);
  write_checkpoint(tmp.path(), 5);
  fs::create_directory(tmp.file(".checkpoint-00000300.tmp-1-0"));
  fs::create_directory(tmp.file("checkpoint-notastep"));
  EXPECT_EQ(steps_in(tmp.path()), (std::vector<int64_t>{5, 99999999, 100000000}));
}

TEST(Checkpoint, latest_valid_skips_a_corrupt_newer_checkpoint_with_a_warning) {
  testing::TempDir tmp;
  write_checkpoint(tmp.path(), 100);
  const std::string newer = write_checkpoint(tmp.path(), 200);
  overwrite_byte(newer + "/model.safetensors", 10);
  fs::create_directory(tmp.file(".checkpoint-00000300.tmp-1-0"));  // an interrupted write
  std::vector<std::string> warnings;
  auto latest = latest_valid_checkpoint(tmp.path(), &warnings);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, 100);
  EXPECT_TRUE(latest->valid);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find(".checkpoint-00000300.tmp-1-0: temporary directory of an unfinished checkpoint write"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("skipping "), std::string::npos);
  EXPECT_NE(warnings[1].find("checkpoint-00000200/model.safetensors: sha256 mismatch"), std::string::npos) << warnings[1];
}

TEST(Checkpoint, no_valid_checkpoint_gives_none) {
  testing::TempDir tmp;
  EXPECT_FALSE(latest_valid_checkpoint(tmp.path()).has_value());
  EXPECT_FALSE(latest_valid_checkpoint(tmp.file("never_created")).has_value());
  const std::string only = write_checkpoint(tmp.path(), 100);
  fs::remove(only + "/manifest.json");
  std::vector<std::string> warnings;
  EXPECT_FALSE(latest_valid_checkpoint(tmp.path(), &warnings).has_value());
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(Checkpoint, recommitting_a_step_replaces_it) {
  testing::TempDir tmp;
  write_checkpoint(tmp.path(), 100);
  CheckpointWriter again(tmp.path(), 100);
  again.add_file("model.safetensors", "new weights");
  const std::string dir = again.commit();
  EXPECT_EQ(verify_checkpoint(dir).files.size(), 1u);
  EXPECT_EQ(steps_in(tmp.path()), std::vector<int64_t>{100});
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
}

TEST(Checkpoint, pruning_keeps_the_last_k) {
  testing::TempDir tmp;
  for (int64_t step : {100, 200, 300, 400, 500}) write_checkpoint(tmp.path(), step);
  const auto removed = prune_checkpoints(tmp.path(), 2);
  EXPECT_EQ(removed.size(), 3u);
  EXPECT_EQ(steps_in(tmp.path()), (std::vector<int64_t>{400, 500}));
  EXPECT_TRUE(prune_checkpoints(tmp.path(), 2).empty());
}

TEST(Checkpoint, pruning_counts_only_valid_checkpoints_and_keeps_broken_newer_ones) {
  testing::TempDir tmp;
  for (int64_t step : {100, 200, 300, 400}) write_checkpoint(tmp.path(), step);
  fs::remove(tmp.file("checkpoint-00000400/manifest.json"));  // newest is broken
  std::vector<std::string> warnings;
  prune_checkpoints(tmp.path(), 2, &warnings);
  // The two newest valid ones (200, 300) survive, so does the broken 400 (for inspection); 100 goes.
  EXPECT_EQ(steps_in(tmp.path()), (std::vector<int64_t>{200, 300, 400}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("keeping broken"), std::string::npos);
}

TEST(Checkpoint, pruning_removes_temporary_directories_of_dead_writers_only) {
  testing::TempDir tmp;
  write_checkpoint(tmp.path(), 100);
  const std::string dead = tmp.file(".checkpoint-00000200.tmp-2147483647-0");  // no such pid
  const std::string alive = tmp.file(".checkpoint-00000300.tmp-" + std::to_string(::getpid()) + "-9");
  fs::create_directory(dead);
  fs::create_directory(alive);
  prune_checkpoints(tmp.path(), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
}

TEST(Checkpoint, a_manifest_that_lists_no_files_does_not_verify) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  // Everything the trainer needs still sits beside it, but the manifest vouches for none of it.
  for (const char* name : {"model.safetensors", "optimizer.safetensors", "trainer_state.json"}) fs::remove(dir + "/" + name);
  testing::write_file(dir + "/manifest.json", R"({"format_version": 1, "step": 200, "files": {}})");
  EXPECT_NE(verify_error(dir).find("manifest.json: lists no files"), std::string::npos) << verify_error(dir);
  EXPECT_FALSE(latest_valid_checkpoint(tmp.path()).has_value());
}

TEST(Checkpoint, a_file_the_manifest_does_not_list_fails_verification) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  testing::write_file(dir + "/model.safetensors.extra", "NaN weights put here afterwards");
  EXPECT_NE(verify_error(dir).find("checkpoint-00000200/model.safetensors.extra: not listed in manifest.json"),
            std::string::npos)
      << verify_error(dir);
}

TEST(Checkpoint, a_manifest_without_a_required_file_does_not_verify) {
  testing::TempDir tmp;
  const std::string dir = write_checkpoint(tmp.path(), 200);
  Json manifest = read_json_file(dir + "/manifest.json");
  manifest["files"].erase("model.safetensors");
  fs::remove(dir + "/model.safetensors");
  testing::write_file(dir + "/manifest.json", manifest.dump());
  EXPECT_EQ(verify_error(dir), "(valid)");  // what it lists is intact ...
  try {
    verify_checkpoint(dir, VerifyLevel::Full, {"model.safetensors", "optimizer.safetensors"});
    FAIL() << "a checkpoint without its weights verified";
  } catch (const Error& e) {  // ... but a reader that needs the weights cannot trust it
    EXPECT_NE(std::string(e.what()).find("manifest.json: does not list model.safetensors"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(latest_valid_checkpoint(tmp.path(), nullptr, {"model.safetensors"}).has_value());
}

TEST(Checkpoint, pruning_reports_a_broken_checkpoint_it_removes) {
  testing::TempDir tmp;
  for (int64_t step : {100, 200, 300}) write_checkpoint(tmp.path(), step);
  fs::remove(tmp.file("checkpoint-00000100/model.safetensors"));
  std::vector<std::string> warnings;
  prune_checkpoints(tmp.path(), 2, &warnings);
  EXPECT_EQ(steps_in(tmp.path()), (std::vector<int64_t>{200, 300}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("removing broken " + tmp.file("checkpoint-00000100")), std::string::npos) << warnings[0];
}

TEST(Checkpoint, a_broken_checkpoint_is_set_aside_never_overwritten) {
  testing::TempDir tmp;
  write_checkpoint(tmp.path(), 200);
  const std::string first = set_aside_broken_checkpoint(tmp.file("checkpoint-00000200"));
  EXPECT_EQ(first, tmp.file("broken/checkpoint-00000200"));
  write_checkpoint(tmp.path(), 200);
  const std::string second = set_aside_broken_checkpoint(tmp.file("checkpoint-00000200"));
  EXPECT_EQ(second, tmp.file("broken/checkpoint-00000200.2"));  // the first one is kept too
  EXPECT_TRUE(fs::exists(first + "/manifest.json"));
  EXPECT_TRUE(list_checkpoints(tmp.path()).empty());  // broken/ is not a checkpoint
}

TEST(Checkpoint, pruning_needs_k_of_at_least_one) {
  testing::TempDir tmp;
  EXPECT_THROW(prune_checkpoints(tmp.path(), 0), Error);
}

}  // namespace
}  // namespace swarmt
