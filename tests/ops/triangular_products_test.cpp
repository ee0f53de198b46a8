// ops::triangular_times and ops::lower_triangle_of (ops/block_gemm.h): the strip-by-strip products that
// skip the zero half of a triangular factor equal the full products, on every kernel level, in fp32 and
// fp64, for block sizes below, at and around the strip height (8), A read as stored and transposed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/kernel_levels.h"
#include "swarmt/ops/block_gemm.h"

namespace swarmt::ops {
namespace {

template <typename T>
std::vector<T> random_values(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<T> x(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<T>(normal(rng));
  return x;
}

// A (L × L, row stride L) zero outside `shape` of the matrix the strides read: as stored (a_row = L,
// a_col = 1) the triangle is of A itself, transposed (a_row = 1, a_col = L) of Aᵀ.
template <typename T>
void check_triangular_times(Triangle shape, int64_t L, int64_t n, bool transposed, T beta) {
  std::vector<T> a = random_values<T>(L * L, static_cast<unsigned>(L * 31 + n));
  const int64_t a_row = transposed ? 1 : L, a_col = transposed ? L : 1;
  for (int64_t r = 0; r < L; ++r)
    for (int64_t s = 0; s < L; ++s) {
      const bool inside = shape == Triangle::lower ? s <= r : s >= r;
      if (!inside) a[r * a_row + s * a_col] = T(0);
    }
  const int64_t ldb = n + 2, ldc = n + 3;
  const std::vector<T> b = random_values<T>(L * ldb, static_cast<unsigned>(L + 7 * n));
  const std::vector<T> c0 = random_values<T>(L * ldc, static_cast<unsigned>(3 * L + n));
  std::vector<T> c = c0;
  triangular_times(shape, L, n, T(0.5), a.data(), a_row, a_col, b.data(), ldb, beta, c.data(), ldc);
  for (int64_t r = 0; r < L; ++r)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= n) {
        ASSERT_EQ(c[r * ldc + j], c0[r * ldc + j]) << "wrote padding at " << r << "," << j;
        continue;
      }
      double want = 0;
      for (int64_t s = 0; s < L; ++s) want += double(a[r * a_row + s * a_col]) * double(b[s * ldb + j]);
      want = 0.5 * want + double(beta) * double(c0[r * ldc + j]);
      ASSERT_NEAR(c[r * ldc + j], want, 1e-4 * (1.0 + std::abs(want)))
          << (shape == Triangle::lower ? "lower" : "upper") << " L " << L << " n " << n << " transposed "
          << transposed << " at " << r << "," << j;
    }
}

template <typename T>
void check_lower_triangle_of(int64_t L, int64_t k) {
  const std::vector<T> a = random_values<T>(L * k, static_cast<unsigned>(L * 13 + k));
  const std::vector<T> b = random_values<T>(k * L, static_cast<unsigned>(L + 5 * k));
  std::vector<T> c(static_cast<size_t>(L * L), T(-9));
  lower_triangle_of(L, k, T(-2), a.data(), k, b.data(), L, c.data(), L);
  for (int64_t r = 0; r < L; ++r)
    for (int64_t s = 0; s < L; ++s) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += double(a[r * k + p]) * double(b[p * L + s]);
      want *= -2;
      const T got = c[r * L + s];
      if (s <= r)
        ASSERT_NEAR(got, want, 1e-4 * (1.0 + std::abs(want))) << "L " << L << " k " << k << " at " << r << "," << s;
      else  // above the diagonal: the product or untouched, nothing else
        ASSERT_TRUE(got == T(-9) || std::abs(got - want) <= 1e-4 * (1.0 + std::abs(want)))
            << "L " << L << " k " << k << " wrote " << got << " above the diagonal at " << r << "," << s;
    }
}

TEST(TriangularProducts, strip_products_equal_the_full_product_on_every_kernel_level) {
  for_each_kernel_level([] {
    for (int64_t L : {1, 5, 8, 9, 16, 23, 64})
      for (Triangle shape : {Triangle::lower, Triangle::upper})
        for (bool transposed : {false, true}) {
          check_triangular_times<float>(shape, L, 33, transposed, 0.0f);
          check_triangular_times<float>(shape, L, 16, transposed, 1.0f);
          check_triangular_times<double>(shape, L, 7, transposed, -0.5);
        }
  });
}

TEST(TriangularProducts, lower_triangle_equals_the_full_product_below_the_diagonal) {
  for_each_kernel_level([] {
    for (int64_t L : {1, 7, 8, 9, 64})
      for (int64_t k : {1, 32, 70}) {
        check_lower_triangle_of<float>(L, k);
        check_lower_triangle_of<double>(L, k);
      }
  });
}

}  // namespace
}  // namespace swarmt::ops
