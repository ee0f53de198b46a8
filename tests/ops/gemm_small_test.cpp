// gemm_small: C = alpha · A · B + beta · C on raw row-major buffers, on every kernel level, against a
// plain fp64 sum: every row-tile remainder (1–8 rows and more: AVX-512 tiles hold 8 rows, AVX2 tiles 4),
// column counts around the AVX-512 16-, 32- and 48-wide tiles and their splits (64 = 32 + 32, 49 and 145
// end in 32 + 17) and the AVX2 8-, 16- and 24-wide ones (25 and 56 end in 16 + 9 and 16 + 16, masked
// and full), A read transposed through its strides, k = 0, and beta 0 (C not read), 1 and other values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ops/kernel_levels.h"
#include "swarmt/ops/gemm_small.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

struct Problem {
  int64_t m, n, k;
  bool transpose_a;
  float alpha, beta;
};

void check(const Problem& p) {
  std::mt19937 rng(static_cast<unsigned>(p.m * 1000 + p.n * 10 + p.k));
  std::normal_distribution<float> normal;
  // A is stored (m × k) row-major, or (k × m) when read transposed; B (k × n) with a padded row stride,
  // C (m × n) with a padded row stride whose padding must stay untouched.
  const int64_t ldb = p.n + 3, ldc = p.n + 5;
  std::vector<float> a(static_cast<size_t>(std::max<int64_t>(p.m * p.k, 1))), b(static_cast<size_t>(p.k * ldb + 1));
  std::vector<float> c(static_cast<size_t>(p.m * ldc));
  for (auto& x : a) x = normal(rng);
  for (auto& x : b) x = normal(rng);
  for (auto& x : c) x = p.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : normal(rng);
  const std::vector<float> c_before = c;
  const int64_t a_row = p.transpose_a ? 1 : p.k, a_col = p.transpose_a ? p.m : 1;
  gemm_small(p.m, p.n, p.k, p.alpha, a.data(), a_row, a_col, b.data(), ldb, p.beta, c.data(), ldc);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= p.n) {  // padding: untouched (NaN stays NaN)
        const float before = c_before[i * ldc + j];
        EXPECT_TRUE(got == before || (std::isnan(got) && std::isnan(before))) << "wrote padding at " << i << "," << j;
        continue;
      }
      double want = 0.0;
      for (int64_t q = 0; q < p.k; ++q) want += double(a[i * a_row + q * a_col]) * double(b[q * ldb + j]);
      want *= p.alpha;
      if (p.beta != 0.0f) want += double(p.beta) * double(c_before[i * ldc + j]);
      ASSERT_NEAR(got, want, 1e-4 * (1.0 + std::abs(want)))
          << "m " << p.m << " n " << p.n << " k " << p.k << " transposed " << p.transpose_a << " beta " << p.beta
          << " at " << i << "," << j;
    }
  }
}

TEST(GemmSmall, equals_a_plain_sum_on_every_kernel_level_and_shape) {
  for_each_kernel_level([] {
    for (int64_t m : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17})
      for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 48, 49, 56, 64, 70, 96, 100, 136, 145})
        for (int64_t k : {0, 1, 5, 64})
          for (bool transpose_a : {false, true})
            check({m, n, k, transpose_a, 0.5f, 0.0f});
    for (float beta : {1.0f, -0.25f})
      for (int64_t n : {40, 48, 64, 100}) check({9, n, 13, true, 1.0f, beta});
  });
}

// transpose_small against the definition, with padded row strides on both sides whose padding must stay
// untouched: full 8 × 8 tiles, and edges of every width on either side.
TEST(GemmSmall, transpose_equals_the_definition_on_every_kernel_level_and_shape) {
  for_each_kernel_level([] {
    for (int64_t rows : {1, 7, 8, 9, 16, 64, 70})
      for (int64_t cols : {1, 5, 8, 15, 16, 128, 131}) {
        const int64_t ld_src = cols + 3, ld_dst = rows + 2;
        std::vector<float> src(static_cast<size_t>(rows * ld_src)), dst(static_cast<size_t>(cols * ld_dst), -7.0f);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
        transpose_small(src.data(), rows, cols, ld_src, dst.data(), ld_dst);
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t r = 0; r < ld_dst; ++r) {
            const float want = r < rows ? src[r * ld_src + c] : -7.0f;
            ASSERT_EQ(dst[c * ld_dst + r], want) << rows << " x " << cols << " at " << c << "," << r;
          }
      }
  });
}

}  // namespace
}  // namespace swarmt::ops
