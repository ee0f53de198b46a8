// The run-directory lock: one writer per directory, a second one refused naming the holder, a lock left
// by a dead process taken over, and nothing left behind by a refused or finished command.
#include "swarmt/core/run_lock.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "bad_input.h"
#include "core/file_helpers.h"
#include "crash_safety/kill_harness.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace swarmt {
namespace {

TEST(RunLock, second_writer_is_refused_naming_the_holder) {
  testing::TempDir tmp;
  const RunLock first = RunLock::acquire(tmp.file("run"), "--out");
  // flock locks belong to an open file: a second acquire, even in this process, is another writer.
  const std::string message = testing::bad_input_message([&] { RunLock::acquire(tmp.file("run"), "--out"); });
  EXPECT_NE(message.find("--out " + tmp.file("run") + " is being written by another swarmt process (pid " +
                         std::to_string(::getpid())),
            std::string::npos)
      << message;
}

TEST(RunLock, a_lock_held_by_another_process_is_refused_until_it_exits) {
  testing::TempDir tmp;
  int to_child[2], to_parent[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t holder = testing::fork_child([&] {
    const RunLock lock = RunLock::acquire(tmp.file("run"), "--out");
    char c = 'L';
    if (::write(to_parent[1], &c, 1) != 1) throw std::runtime_error("pipe");
    if (::read(to_child[0], &c, 1) != 1) throw std::runtime_error("pipe");  // hold until told to go
  });
  char c = 0;
  ASSERT_EQ(::read(to_parent[0], &c, 1), 1);  // the child holds the lock now
  const std::string message = testing::bad_input_message([&] { RunLock::acquire(tmp.file("run"), "--out"); });
  EXPECT_NE(message.find("(pid " + std::to_string(holder)), std::string::npos) << message;
  ASSERT_EQ(::write(to_child[1], &c, 1), 1);
  EXPECT_EQ(testing::wait_child(holder).exit_code, 0);
  EXPECT_NO_THROW(RunLock::acquire(tmp.file("run"), "--out"));
}

TEST(RunLock, a_lock_left_by_a_killed_process_is_taken_over) {
  testing::TempDir tmp;
  // The child takes the lock and dies without releasing it (_exit: no destructor runs), as under SIGKILL.
  const pid_t dead = testing::fork_child([&] {
    new RunLock(RunLock::acquire(tmp.file("run"), "--out"));  // never destroyed
  });
  ASSERT_EQ(testing::wait_child(dead).exit_code, 0);
  ASSERT_TRUE(fs::exists(tmp.file(std::string("run/") + kRunLockFile)));  // the stale file is still there
  EXPECT_NE(testing::slurp(tmp.file(std::string("run/") + kRunLockFile)).find(std::to_string(dead)), std::string::npos);
  const RunLock lock = RunLock::acquire(tmp.file("run"), "--out");
  EXPECT_EQ(testing::slurp(lock.lock_path()).substr(0, testing::slurp(lock.lock_path()).find('\n')),
            std::to_string(::getpid()));
}

TEST(RunLock, release_removes_the_lock_file_and_an_empty_directory_it_created) {
  testing::TempDir tmp;
  { const RunLock lock = RunLock::acquire(tmp.file("new/run"), "--out"); }
  EXPECT_FALSE(fs::exists(tmp.file("new/run")));  // a refused command leaves no empty output directory
  {
    const RunLock lock = RunLock::acquire(tmp.file("run"), "--out");
    testing::write_file(tmp.file("run/metrics.jsonl"), "{}\n");
  }
  EXPECT_EQ(testing::entries_of(tmp.file("run")), std::vector<std::string>{"metrics.jsonl"});
  fs::create_directory(tmp.file("existing"));
  { const RunLock lock = RunLock::acquire(tmp.file("existing"), "--out"); }
  EXPECT_TRUE(fs::is_directory(tmp.file("existing")));  // not created by the lock: kept, even empty
}

TEST(RunLock, a_file_where_the_directory_belongs_is_refused) {
  testing::TempDir tmp;
  testing::write_file(tmp.file("run"), "not a directory");
  EXPECT_EQ(testing::bad_input_message([&] { RunLock::acquire(tmp.file("run"), "--out"); }),
            "--out " + tmp.file("run") + ": exists and is not a directory");
}

}  // namespace
}  // namespace swarmt
