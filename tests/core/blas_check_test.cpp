#include "swarmt/core/blas_check.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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

bool cpu_has_avx512() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) return line.find(" avx512f") != std::string::npos;
  return false;
}

// Whatever OpenBLAS core runs, the same seeded product agrees to fp32 rounding: the generic kernels
// (PRESCOTT), swarmt's own choice (the environment's OPENBLAS_CORETYPE removed, so the switch decides),
// and, on AVX-512 machines, SKYLAKEX forced. Robust to an OPENBLAS_CORETYPE already set by the
// environment, because every run sets or removes it explicitly.
TEST(BlasCheck, results_agree_across_openblas_cores_including_the_switch) {
  testing::TempDir tmp;
  auto product_with = [&](const std::string& env, const std::string& name) {
    const std::string out = tmp.file(name + ".safetensors");
    // Markers of swarmt's own restart must not leak in from the environment either.
    auto r = testing::run_shell("env -u SWARMT_BLAS_SWITCHED_FROM -u SWARMT_BLAS_REJECTED -u SWARMT_NO_BLAS_SWITCH " +
                                env + " OMP_NUM_THREADS=1 " + SWARMT_BINARY +
                                " --threads 1 bench gemm --size 192 --seconds 0.01 --out " + out);
    EXPECT_EQ(r.exit_code, 0) << env << ": " << r.err;
    return out;
  };
  const std::string generic = product_with("OPENBLAS_CORETYPE=PRESCOTT", "prescott");
  std::vector<std::string> others = {product_with("-u OPENBLAS_CORETYPE", "switched")};
  if (cpu_has_avx512()) others.push_back(product_with("OPENBLAS_CORETYPE=SKYLAKEX", "skylakex"));
  for (const std::string& other : others) {
    auto diff = testing::run_swarmt("bench gemm --compare " + generic + " " + other);
    EXPECT_EQ(diff.exit_code, 0) << other << ": " << diff.out << diff.err;
  }
}

}  // namespace
}  // namespace swarmt
