// Products of small row-major blocks for the CPU kernels that work block by block (attention bands,
// chunkwise recurrences): gemm_small in fp32 where it is vectorised, the BLAS libtorch links otherwise
// (fp64, or neither AVX2 nor AVX-512).
#pragma once

#include <atomic>
#include <cstdint>

namespace swarmt::ops {

// Row-major C (m × n) = alpha · op(A) · op(B) + beta · C, op(X) = Xᵀ where the flag says so (BLAS).
void gemm_rows(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm_rows(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
               int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// gemm_small's contract (C[i, j] = alpha · Σ_p A[i·a_row + p·a_col] · B[p·ldb + j] + beta · C[i, j], B
// row-major, beta == 0 never reads C) for fp32 and fp64. A's strides must describe a row-major matrix
// or its transpose (a_col == 1 or a_row == 1; either when m == 1).
void block_gemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void block_gemm(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t a_row, int64_t a_col,
                const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// Products with a triangular L × L factor, by row strips of 8 (gemm_small's row tile) where gemm_small
// runs, so that each strip multiplies only the part of the triangle its rows reach: about half the
// FLOPs of the full product. In fp64 and without a vector gemm_small, one block_gemm of the whole block.
enum class Triangle {
  lower,  // nonzero at s <= r (diagonal included)
  upper,  // nonzero at s >= r
};

// C (L × n) = alpha · A B + beta · C for A (L × L, read through its strides as block_gemm reads it)
// zero outside `shape`.
void triangular_times(Triangle shape, int64_t L, int64_t n, float alpha, const float* a, int64_t a_row, int64_t a_col,
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void triangular_times(Triangle shape, int64_t L, int64_t n, double alpha, const double* a, int64_t a_row,
                      int64_t a_col, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// The lower triangle (diagonal included) of C (L × L) = alpha · A B, A (L × k) row-major, B (k × L):
// strip [r0, r1) writes columns [0, r1) of its rows. Entries above the diagonal are unspecified: each
// is either written with its product or left as it was.
void lower_triangle_of(int64_t L, int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float* c, int64_t ldc);
void lower_triangle_of(int64_t L, int64_t k, double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                       double* c, int64_t ldc);

// dst (cols × rows, row stride ld_dst) = srcᵀ (rows × cols, row stride ld_src): transpose_small in fp32,
// plain loops in fp64.
void block_transpose(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst);
void block_transpose(const double* src, int64_t rows, int64_t cols, int64_t ld_src, double* dst, int64_t ld_dst);

// x = e^x and x = e^(x − shift) elementwise; max_i x_i (−inf for n = 0). Vectorised in fp32.
void block_exp(float* x, int64_t n);
void block_exp(double* x, int64_t n);
void block_exp_shifted(float* x, int64_t n, float shift);
void block_exp_shifted(double* x, int64_t n, double shift);
float block_max(const float* x, int64_t n);
double block_max(const double* x, int64_t n);

// Whether both BLAS GEMMs were found (the kernels above need them for their fallbacks).
bool block_gemm_available();

// The on/off switch of one family of raw-buffer CPU kernels (attention bands, mLSTM, Gated DeltaNet): on
// by default, off to run the batched ops instead (tests compare the two); on() also needs the BLAS the
// fallbacks call.
class CpuKernelSwitch {
 public:
  void set(bool on) { on_.store(on); }
  bool on() const { return on_.load() && block_gemm_available(); }

 private:
  std::atomic<bool> on_{true};
};

}  // namespace swarmt::ops
