// Test entry point: one libtorch thread per test process (ctest runs tests in parallel processes, and
// single-threaded reductions make results bit-reproducible), fixed seeds.
#include <gtest/gtest.h>

#include "swarmt/core/malloc_tuning.h"
#include "swarmt/core/threads.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  swarmt::configure_threads(1);
  swarmt::tune_malloc_for_tensors();
  torch::manual_seed(0);
  return RUN_ALL_TESTS();
}
