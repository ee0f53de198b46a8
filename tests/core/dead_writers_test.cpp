// Leftovers of killed writers: the pid in a temporary name, and removal only once that process is gone.
#include "swarmt/core/dead_writers.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

constexpr const char* kNoSuchPid = "2147483647";  // above any pid_max

TEST(DeadWriters, the_writer_pid_is_read_from_every_temporary_name) {
  EXPECT_EQ(writer_pid_of_temp_name("corpus.tokens.tmp-123"), 123);
  EXPECT_EQ(writer_pid_of_temp_name("corpus.json.tmp-45"), 45);
  EXPECT_EQ(writer_pid_of_temp_name(".checkpoint-00000200.tmp-77-3"), 77);
  EXPECT_EQ(writer_pid_of_temp_name(".checkpoint-00000200.old-78-0"), 78);
  EXPECT_EQ(writer_pid_of_temp_name("corpus.tokens"), -1);
  EXPECT_EQ(writer_pid_of_temp_name("corpus.tokens.tmp-12x"), -1);
}

TEST(DeadWriters, leftovers_of_dead_processes_are_removed_and_of_live_ones_kept) {
  testing::TempDir tmp;
  const std::string dead = tmp.file(std::string("corpus.tokens.tmp-") + kNoSuchPid);
  const std::string dead_dir = tmp.file(std::string(".out.tmp-") + kNoSuchPid + "-0");
  const std::string alive = tmp.file("corpus.tokens.tmp-" + std::to_string(::getpid()));
  const std::string other_output = tmp.file(std::string("other.tokens.tmp-") + kNoSuchPid);
  for (const auto& file : {dead, alive, other_output}) testing::write_file(file, "partial");
  fs::create_directories(dead_dir + "/sub");
  const auto removed = remove_leftovers_of_dead_writers(tmp.path(), {"corpus.tokens.tmp-", ".out.tmp-"});
  EXPECT_EQ(removed, (std::vector<std::string>{dead_dir, dead}));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(dead_dir));
  EXPECT_TRUE(fs::exists(alive));         // perhaps a write in progress
  EXPECT_TRUE(fs::exists(other_output));  // not this output's
}

}  // namespace
}  // namespace swarmt
