#include "swarmt/ops/block_gemm.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmt/core/blas_symbols.h"
#include "swarmt/core/error.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/gemm_small.h"
#include "swarmt/ops/vector_exp.h"

namespace swarmt::ops {
namespace {

// BLAS is column-major: a row-major matrix is its transpose there, so this computes Cᵀ = op(B)ᵀ op(A)ᵀ.
template <typename T, typename Fn>
void gemm_rows_with(Fn gemm, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                    int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const char ta = transpose_b ? 'T' : 'N', tb = transpose_a ? 'T' : 'N';
  const int mi = static_cast<int>(n), ni = static_cast<int>(m), ki = static_cast<int>(k);
  const int lda_i = static_cast<int>(ldb), ldb_i = static_cast<int>(lda), ldc_i = static_cast<int>(ldc);
  gemm(&ta, &tb, &mi, &ni, &ki, &alpha, b, &lda_i, a, &ldb_i, &beta, c, &ldc_i);
}

// block_gemm through BLAS: strides a_col == 1 are A itself (leading dimension a_row), a_row == 1 its
// transpose (leading dimension a_col). Leading dimensions are raised to BLAS's minimum where the
// matrix has one row or column and the stride is never used.
template <typename T>
void block_gemm_blas(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_row, int64_t a_col, const T* b,
                     int64_t ldb, T beta, T* c, int64_t ldc) {
  const bool plain = a_col == 1 && (m == 1 || a_row >= k);
  SWARMT_CHECK(plain || a_row == 1 || m == 1, "block_gemm: A strides (", a_row, ", ", a_col,
               ") are neither row-major nor transposed");
  const int64_t lda = plain ? std::max<int64_t>({a_row, k, 1}) : std::max<int64_t>({a_col, m, 1});
  gemm_rows(!plain, false, m, n, k, alpha, a, lda, b, std::max<int64_t>({ldb, n, 1}), beta, c,
            std::max<int64_t>({ldc, n, 1}));
}

}  // namespace

void gemm_rows(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_rows_with(blas_sgemm(), transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm_rows(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
               int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_rows_with(blas_dgemm(), transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void block_gemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (gemm_small_is_vectorized())
    gemm_small(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
  else
    block_gemm_blas(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
}
void block_gemm(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t a_row, int64_t a_col,
                const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  block_gemm_blas(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
}

namespace {

constexpr int64_t kTriangleStrip = 8;  // gemm_small's row tile

bool by_strips(float) { return gemm_small_is_vectorized(); }
bool by_strips(double) { return false; }

template <typename T>
void triangular_times_impl(Triangle shape, int64_t L, int64_t n, T alpha, const T* a, int64_t a_row, int64_t a_col,
                           const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (!by_strips(T(0))) return block_gemm(L, n, L, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
  for (int64_t r0 = 0; r0 < L; r0 += kTriangleStrip) {
    const int64_t r1 = std::min(L, r0 + kTriangleStrip);
    // The strip's rows reach columns [0, r1) of a lower A, [r0, L) of an upper one.
    const int64_t k0 = shape == Triangle::lower ? 0 : r0, k1 = shape == Triangle::lower ? r1 : L;
    block_gemm(r1 - r0, n, k1 - k0, alpha, a + r0 * a_row + k0 * a_col, a_row, a_col, b + k0 * ldb, ldb, beta,
               c + r0 * ldc, ldc);
  }
}

template <typename T>
void lower_triangle_of_impl(int64_t L, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                            int64_t ldc) {
  if (!by_strips(T(0))) return block_gemm(L, L, k, alpha, a, lda, 1, b, ldb, T(0), c, ldc);
  for (int64_t r0 = 0; r0 < L; r0 += kTriangleStrip) {
    const int64_t r1 = std::min(L, r0 + kTriangleStrip);
    block_gemm(r1 - r0, r1, k, alpha, a + r0 * lda, lda, 1, b, ldb, T(0), c + r0 * ldc, ldc);
  }
}

}  // namespace

void triangular_times(Triangle shape, int64_t L, int64_t n, float alpha, const float* a, int64_t a_row, int64_t a_col,
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  triangular_times_impl(shape, L, n, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
}
void triangular_times(Triangle shape, int64_t L, int64_t n, double alpha, const double* a, int64_t a_row,
                      int64_t a_col, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  triangular_times_impl(shape, L, n, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
}
void lower_triangle_of(int64_t L, int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float* c, int64_t ldc) {
  lower_triangle_of_impl(L, k, alpha, a, lda, b, ldb, c, ldc);
}
void lower_triangle_of(int64_t L, int64_t k, double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                       double* c, int64_t ldc) {
  lower_triangle_of_impl(L, k, alpha, a, lda, b, ldb, c, ldc);
}

void block_transpose(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
  transpose_small(src, rows, cols, ld_src, dst, ld_dst);
}
void block_transpose(const double* src, int64_t rows, int64_t cols, int64_t ld_src, double* dst, int64_t ld_dst) {
  loops::transpose(src, rows, cols, ld_src, dst, ld_dst);
}

void block_exp(float* x, int64_t n) { exp_inplace(x, n); }
void block_exp(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

void block_exp_shifted(float* x, int64_t n, float shift) { exp_shifted_sum(x, n, shift); }
void block_exp_shifted(double* x, int64_t n, double shift) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i] - shift);
}
float block_max(const float* x, int64_t n) { return max_of(x, n); }
double block_max(const double* x, int64_t n) {
  return n > 0 ? *std::max_element(x, x + n) : -std::numeric_limits<double>::infinity();
}

bool block_gemm_available() { return blas_sgemm() && blas_dgemm(); }

}  // namespace swarmt::ops
