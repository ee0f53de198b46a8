// hot_parallel_for: every index runs exactly once in ranges that keep the grain, on any thread count,
// after the workers have gone to sleep, nested, from two callers at once, in a forked child, and an
// exception in a task reaches the caller and leaves the pool usable.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "swarmt/ops/hot_pool.h"

namespace swarmt::ops {
namespace {

// Restores ATen's thread count when a test changes it.
struct HotPoolThreadsGuard {
  int saved = at::get_num_threads();
  ~HotPoolThreadsGuard() { at::set_num_threads(saved); }
};

// Runs hot_parallel_for over [begin, end) and returns how often each index ran; every range's length is
// checked against the grain.
std::vector<int> hot_pool_counts(int64_t begin, int64_t end, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(end));
  std::atomic<bool> short_range{false};
  hot_parallel_for(begin, end, grain, [&](int64_t b, int64_t e) {
    if (e < end && (e - b) % grain != 0) short_range = true;  // only the last range may be shorter
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
  });
  EXPECT_FALSE(short_range.load()) << "a range other than the last is not a multiple of the grain " << grain;
  std::vector<int> counts;
  for (auto& h : hits) counts.push_back(h.load());
  return counts;
}

void expect_each_once(const std::vector<int>& counts, int64_t begin) {
  for (size_t i = 0; i < counts.size(); ++i)
    ASSERT_EQ(counts[i], static_cast<int64_t>(i) < begin ? 0 : 1) << "index " << i;
}

TEST(HotPool, every_index_runs_exactly_once_on_any_thread_count) {
  HotPoolThreadsGuard guard;
  for (int threads : {1, 2, 3, 4}) {
    at::set_num_threads(threads);
    EXPECT_EQ(hot_pool_threads(), threads);
    for (auto [begin, end, grain] : std::vector<std::array<int64_t, 3>>{
             {0, 1, 1}, {0, 5, 1}, {3, 100, 4}, {0, 960, 8}, {7, 5120, 36}, {0, 4097, 1000}, {0, 64, 64}}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, [" << begin << ", " << end << ") grain " << grain);
      expect_each_once(hot_pool_counts(begin, end, grain), begin);
    }
  }
}

TEST(HotPool, an_empty_range_runs_nothing) {
  int calls = 0;
  hot_parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  hot_parallel_for(5, 2, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(HotPool, sleeping_workers_wake_for_the_next_call) {
  HotPoolThreadsGuard guard;
  at::set_num_threads(3);
  expect_each_once(hot_pool_counts(0, 1000, 4), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past the spin window: workers block
  for (int round = 0; round < 3; ++round) expect_each_once(hot_pool_counts(0, 1000, 4), 0);
}

TEST(HotPool, an_exception_in_a_task_reaches_the_caller_and_the_pool_stays_usable) {
  HotPoolThreadsGuard guard;
  at::set_num_threads(2);
  EXPECT_THROW(hot_parallel_for(0, 1000, 1,
                                [](int64_t b, int64_t e) {
                                  if (b <= 500 && 500 < e) throw std::runtime_error("task 500 failed");
                                }),
               std::runtime_error);
  expect_each_once(hot_pool_counts(0, 1000, 1), 0);
}

TEST(HotPool, a_nested_call_runs_on_the_calling_thread) {
  HotPoolThreadsGuard guard;
  at::set_num_threads(2);
  std::vector<std::atomic<int>> hits(64 * 64);
  hot_parallel_for(0, 64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      hot_parallel_for(0, 64, 1, [&](int64_t jb, int64_t je) {
        for (int64_t j = jb; j < je; ++j) hits[static_cast<size_t>(i * 64 + j)]++;
      });
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(HotPool, two_callers_at_once_each_get_all_their_indices) {
  HotPoolThreadsGuard guard;
  at::set_num_threads(2);
  std::vector<int> a, b;
  std::thread other([&] {
    for (int round = 0; round < 50; ++round) a = hot_pool_counts(0, 3000, 4);
  });
  for (int round = 0; round < 50; ++round) b = hot_pool_counts(0, 2000, 4);
  other.join();
  expect_each_once(a, 0);
  expect_each_once(b, 0);
}

TEST(HotPool, a_forked_child_gets_a_pool_of_its_own) {
  HotPoolThreadsGuard guard;
  at::set_num_threads(2);
  expect_each_once(hot_pool_counts(0, 1000, 4), 0);  // the parent's workers exist
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the child has none of the parent's threads; a call must not wait for them
    std::atomic<int64_t> sum{0};
    hot_parallel_for(0, 1000, 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
    _exit(sum.load() == 999 * 1000 / 2 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace swarmt::ops
