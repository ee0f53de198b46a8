// Runs a check once per raw-buffer kernel level this CPU supports (ops/matvec.h's set_matvec_isa), so
// that one machine tests the portable loops and every SIMD path; the best level is restored afterwards.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "swarmt/ops/matvec.h"

namespace swarmt::ops {

template <typename F>
void for_each_kernel_level(F check) {
  const std::string best = matvec_isa();
  int ran = 0;
  for (const std::string level : {"portable", "avx2", "avx512", "avx512-bf16"}) {
    if (!set_matvec_isa(level)) continue;
    SCOPED_TRACE("kernel level " + level);
    check();
    ++ran;
  }
  ASSERT_TRUE(set_matvec_isa(best));
  EXPECT_GE(ran, 1);  // the portable level exists everywhere
}

}  // namespace swarmt::ops
