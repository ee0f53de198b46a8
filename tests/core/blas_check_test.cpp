#include "swarmt/core/blas_check.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "test_util.h"

namespace swarmt {
namespace {

TEST(BlasCheck, core_ordering_prefers_avx512_kernels) {
  EXPECT_TRUE(openblas_core_is_weaker("Prescott", "SKYLAKEX"));
  EXPECT_TRUE(openblas_core_is_weaker("Haswell", "SKYLAKEX"));
  EXPECT_TRUE(openblas_core_is_weaker("Zen", "SKYLAKEX"));
  EXPECT_FALSE(openblas_core_is_weaker("SkylakeX", "SKYLAKEX"));
  EXPECT_FALSE(openblas_core_is_weaker("Cooperlake", "SKYLAKEX"));
  EXPECT_FALSE(openblas_core_is_weaker("Zen", "HASWELL"));
  EXPECT_FALSE(openblas_core_is_weaker("Haswell", "unknown-core"));
}

TEST(BlasCheck, best_core_follows_cpu_features) {
  CpuFeatures f;
  EXPECT_EQ(best_openblas_coretype(f), "");
  f.avx2 = f.fma = true;
  EXPECT_EQ(best_openblas_coretype(f), "HASWELL");
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = true;
  EXPECT_EQ(best_openblas_coretype(f), "HASWELL");  // the OS does not save ZMM state: not usable
  f.os_saves_avx512 = true;
  EXPECT_EQ(best_openblas_coretype(f), "SKYLAKEX");
}

TEST(BlasCheck, loaded_blas_computes_a_correct_gemm) {
  double err = verify_blas_gemm();
  ASSERT_GE(err, 0.0) << "no sgemm_ symbol found";
  EXPECT_LT(err, 1e-5);
}

// The restart with a better OPENBLAS_CORETYPE must not change results beyond fp32 rounding: the same
// seeded product computed by the binary under its default core and under the switched core agree.
TEST(BlasCheck, results_with_and_without_the_core_switch_agree) {
  testing::TempDir tmp;
  auto plain = testing::run_shell(std::string("SWARMT_NO_BLAS_SWITCH=1 ") + SWARMT_BINARY +
                                  " --threads 1 bench gemm --size 192 --out " + tmp.file("plain.safetensors"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto switched = testing::run_shell(std::string(SWARMT_BINARY) + " --threads 1 bench gemm --size 192 --out " +
                                     tmp.file("switched.safetensors"));
  ASSERT_EQ(switched.exit_code, 0) << switched.err;
  auto diff = testing::run_swarmt("bench gemm --compare " + tmp.file("plain.safetensors") + " " +
                                  tmp.file("switched.safetensors"));
  ASSERT_EQ(diff.exit_code, 0) << diff.out << diff.err;
}

}  // namespace
}  // namespace swarmt
