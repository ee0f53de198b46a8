#include "swarmt/core/remove_tree.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace swarmt {
namespace {

namespace fs = std::filesystem;

TEST(RemoveTree, removes_a_nested_directory_with_its_files) {
  testing::TempDir tmp;
  fs::create_directories(tmp.file("run/checkpoints/step-1"));
  testing::write_file(tmp.file("run/checkpoints/step-1/model.safetensors"), "x");
  testing::write_file(tmp.file("run/metrics.jsonl"), "{}\n");
  EXPECT_TRUE(remove_tree(tmp.file("run")));
  EXPECT_FALSE(fs::exists(tmp.file("run")));
}

TEST(RemoveTree, does_not_follow_symlinks_out_of_the_tree) {
  testing::TempDir tmp;
  fs::create_directories(tmp.file("outside"));
  testing::write_file(tmp.file("outside/keep.txt"), "kept");
  fs::create_directories(tmp.file("tree"));
  fs::create_directory_symlink(tmp.file("outside"), tmp.file("tree/link"));
  EXPECT_TRUE(remove_tree(tmp.file("tree")));
  EXPECT_FALSE(fs::exists(tmp.file("tree")));
  EXPECT_TRUE(fs::exists(tmp.file("outside/keep.txt"))) << "the symlink's target must survive";
}

TEST(RemoveTree, a_missing_path_or_a_single_file_is_fine) {
  testing::TempDir tmp;
  EXPECT_TRUE(remove_tree(tmp.file("never-created")));
  testing::write_file(tmp.file("file.txt"), "x");
  EXPECT_TRUE(remove_tree(tmp.file("file.txt")));
  EXPECT_FALSE(fs::exists(tmp.file("file.txt")));
}

}  // namespace
}  // namespace swarmt
