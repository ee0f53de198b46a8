// Output directories: a new one appears under its final name only complete; an existing file is refused;
// a directory that appeared meanwhile is never replaced; a killed writer's leftover is removed.
#include "swarmt/core/output_directory.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "bad_input.h"
#include "core/file_helpers.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

TEST(OutputDirectory, a_new_directory_appears_only_when_complete) {
  testing::TempDir tmp;
  {
    OutputDirectory out(tmp.file("adapter"), "--out");
    EXPECT_TRUE(out.is_new());
    testing::write_file(out.path() + "/armt.safetensors", "weights");
    EXPECT_FALSE(fs::exists(tmp.file("adapter")));  // half-written: not under the final name
  }  // abandoned (an error unwound the command): nothing is left at all
  EXPECT_TRUE(testing::entries_of(tmp.path()).empty());
  OutputDirectory out(tmp.file("adapter"), "--out");
  testing::write_file(out.path() + "/armt.safetensors", "weights");
  testing::write_file(out.path() + "/armt_config.json", "{}");
  out.commit();
  EXPECT_EQ(testing::entries_of(tmp.file("adapter")), (std::vector<std::string>{"armt.safetensors", "armt_config.json"}));
}

TEST(OutputDirectory, an_existing_file_is_refused_naming_the_option) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("adapter"), "a file");
  EXPECT_EQ(testing::bad_input_message([&] { OutputDirectory(tmp.file("adapter"), "--out"); }),
            "--out " + tmp.file("adapter") + ": exists and is not a directory");
}

TEST(OutputDirectory, a_directory_that_appeared_meanwhile_is_not_replaced) {
  testing::TempDir tmp;
  OutputDirectory out(tmp.file("model"), "--out");
  testing::write_file(out.path() + "/config.json", "mine");
  fs::create_directory(tmp.file("model"));  // another process wrote the same output first
  testing::write_file(tmp.file("model/config.json"), "theirs");
  const std::string message = testing::bad_input_message([&] { out.commit(); });
  EXPECT_NE(message.find(tmp.file("model") + ": appeared while this command was writing it"), std::string::npos) << message;
  EXPECT_EQ(testing::slurp(tmp.file("model/config.json")), "theirs");
}

TEST(OutputDirectory, an_existing_directory_is_written_in_place_under_its_lock) {
  testing::TempDir tmp;
  fs::create_directory(tmp.file("model"));
  OutputDirectory out(tmp.file("model"), "--out");
  EXPECT_FALSE(out.is_new());
  EXPECT_EQ(out.path(), tmp.file("model"));
  EXPECT_NE(testing::bad_input_message([&] { OutputDirectory(tmp.file("model"), "--out"); }).find("another swarmt process"),
            std::string::npos);
}

TEST(OutputDirectory, the_leftover_of_a_killed_writer_is_removed) {
  testing::TempDir tmp;
  const std::string leftover = tmp.file(".adapter.tmp-2147483647-0");  // no such pid
  fs::create_directories(leftover);
  testing::write_file(leftover + "/armt.safetensors", "half");
  OutputDirectory out(tmp.file("adapter"), "--out");
  EXPECT_FALSE(fs::exists(leftover));
}

}  // namespace
}  // namespace swarmt
