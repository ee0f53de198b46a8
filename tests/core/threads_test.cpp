#include "swarmt/core/threads.h"

#include <gtest/gtest.h>

#include <string>

#include "swarmt/core/error.h"

namespace swarmt {
namespace {

// The message a rejected OMP_NUM_THREADS value gives (empty when it is accepted).
std::string rejection_of(const char* value) {
  try {
    thread_count_from_env(value);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  return "";
}

TEST(Threads, unset_or_empty_omp_num_threads_means_all_cores) {
  EXPECT_EQ(thread_count_from_env(nullptr), available_cores());
  EXPECT_EQ(thread_count_from_env(""), available_cores());
}

TEST(Threads, omp_num_threads_sets_the_default_count) {
  EXPECT_EQ(thread_count_from_env("1"), 1);
  EXPECT_EQ(thread_count_from_env(std::to_string(max_thread_count()).c_str()), max_thread_count());
}

TEST(Threads, first_entry_of_an_omp_nesting_list_is_the_count) {
  EXPECT_EQ(thread_count_from_env("1,4"), 1);
}

TEST(Threads, bad_omp_num_threads_is_rejected_naming_the_variable) {
  const std::string too_many = std::to_string(max_thread_count() + 1);
  for (const char* bad : {"0", "-2", "two", "2x", " ", too_many.c_str()}) {
    const std::string message = rejection_of(bad);
    EXPECT_NE(message.find("OMP_NUM_THREADS"), std::string::npos) << "value '" << bad << "': " << message;
  }
}

}  // namespace
}  // namespace swarmt
