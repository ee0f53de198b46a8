#include "swarmt/core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "swarmt/core/error.h"
#include "test_util.h"
#include "core/file_helpers.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

using testing::slurp;
using testing::entries_of;

TEST(AtomicFile, write_creates_then_replaces_without_leftovers) {
  testing::TempDir tmp;
  write_file_atomically(tmp.file("state.json"), std::string("first"));
  EXPECT_EQ(slurp(tmp.file("state.json")), "first");
  write_file_atomically(tmp.file("state.json"), std::string("second, longer"));
  EXPECT_EQ(slurp(tmp.file("state.json")), "second, longer");
  EXPECT_EQ(entries_of(tmp.path()), std::vector<std::string>{"state.json"});
}

TEST(AtomicFile, abandoned_writer_leaves_the_old_file_untouched) {
  testing::TempDir tmp;
  write_file_atomically(tmp.file("model.bin"), std::string("old content"));
  {
    AtomicFileWriter writer(tmp.file("model.bin"));
    writer.write(std::string("half of the new con"));
    EXPECT_TRUE(fs::exists(writer.temp_path()));
    EXPECT_TRUE(is_temp_name(fs::path(writer.temp_path()).filename().string()));
  }  // destroyed without commit, as when an exception unwinds a save
  EXPECT_EQ(slurp(tmp.file("model.bin")), "old content");
  EXPECT_EQ(entries_of(tmp.path()), std::vector<std::string>{"model.bin"});
}

TEST(AtomicFile, writing_into_a_missing_directory_names_the_target) {
  testing::TempDir tmp;
  try {
    write_file_atomically(tmp.file("no/such/dir/file.bin"), std::string("x"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("file.bin: cannot create a temporary file"), std::string::npos) << e.what();
  }
}

TEST(AtomicFile, directory_appears_only_on_commit) {
  testing::TempDir tmp;
  const std::string target = tmp.file("run/checkpoint");
  {
    AtomicDirectory dir(target);
    std::ofstream(dir.file("a.txt")) << "alpha";
    EXPECT_FALSE(fs::exists(target));
    dir.commit();
  }
  EXPECT_EQ(slurp(target + "/a.txt"), "alpha");
  EXPECT_EQ(entries_of(tmp.file("run")), std::vector<std::string>{"checkpoint"});
}

TEST(AtomicFile, commit_replaces_an_existing_directory_completely) {
  testing::TempDir tmp;
  const std::string target = tmp.file("model");
  {
    AtomicDirectory dir(target);
    std::ofstream(dir.file("old_only.txt")) << "old";
    std::ofstream(dir.file("shared.txt")) << "old";
    dir.commit();
  }
  {
    AtomicDirectory dir(target);
    std::ofstream(dir.file("shared.txt")) << "new";
    dir.commit();
  }
  EXPECT_EQ(entries_of(target), std::vector<std::string>{"shared.txt"});
  EXPECT_EQ(slurp(target + "/shared.txt"), "new");
  EXPECT_EQ(entries_of(tmp.path()), std::vector<std::string>{"model"});  // no .old-/.tmp- leftovers
}

TEST(AtomicFile, abandoned_directory_is_removed_and_the_old_one_kept) {
  testing::TempDir tmp;
  const std::string target = tmp.file("model");
  {
    AtomicDirectory dir(target);
    std::ofstream(dir.file("weights")) << "v1";
    dir.commit();
  }
  {
    AtomicDirectory dir(target);
    std::ofstream(dir.file("weights")) << "v2 (never committed)";
  }
  EXPECT_EQ(slurp(target + "/weights"), "v1");
  EXPECT_EQ(entries_of(tmp.path()), std::vector<std::string>{"model"});
}

TEST(AtomicFile, temp_names_are_recognised) {
  EXPECT_TRUE(is_temp_name(fs::path(sibling_temp_path("/x/checkpoint-00000100", "tmp")).filename().string()));
  EXPECT_TRUE(is_temp_name(fs::path(sibling_temp_path("/x/checkpoint-00000100", "old")).filename().string()));
  EXPECT_FALSE(is_temp_name("checkpoint-00000100"));
  EXPECT_FALSE(is_temp_name(".hidden"));
}

}  // namespace
}  // namespace swarmt
