#include "swarmt/ops/gemm_small.h"

#include <algorithm>

#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/matvec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace swarmt::ops {
namespace {

void gemm_portable(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* c_row = c + i * ldc;
    if (beta == 0.0f)
      std::fill(c_row, c_row + n, 0.0f);
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; ++j) c_row[j] *= beta;
    for (int64_t p = 0; p < k; ++p) {
      const float s = alpha * a[i * a_row + p * a_col];
      const float* b_row = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) c_row[j] += s * b_row[j];
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
#define SWARMT_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

// One tile of kRows rows × up to 32 columns (masks m0, m1 for the two 16-lane halves), or with kWide
// false up to 16 (m0 alone): a band's last tile often has a few columns, and a 32-wide tile would spend
// half its FMAs on masked lanes. The accumulators are named variables: held in an array, GCC 12 kept a
// copy of them in memory and stored all of them on every step of k (measured: 41–48 instead of ~100
// GFLOP/s on one thread).
#define SWARMT_TILE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
template <int kRows, bool kWide>
SWARMT_TARGET_AVX512 inline void tile(int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc, __mmask16 m0,
                                      __mmask16 m1) {
#define SWARMT_DECLARE(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();
  SWARMT_TILE_ROWS(SWARMT_DECLARE)
#undef SWARMT_DECLARE
  for (int64_t p = 0; p < k; ++p) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, b + p * ldb);
    const __m512 b1 = kWide ? _mm512_maskz_loadu_ps(m1, b + p * ldb + 16) : _mm512_setzero_ps();
    const float* a_p = a + p * a_col;
#define SWARMT_STEP(r)                                              \
  if constexpr (kRows > r) {                                        \
    const __m512 x = _mm512_set1_ps(a_p[r * a_row]);                \
    c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0);                      \
    if constexpr (kWide) c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1); \
  }
    SWARMT_TILE_ROWS(SWARMT_STEP)
#undef SWARMT_STEP
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  auto store = [&](float* c_row, __m512 acc0, __m512 acc1) SWARMT_TARGET_AVX512 {
    __m512 out0 = _mm512_mul_ps(acc0, va), out1 = _mm512_mul_ps(acc1, va);
    if (beta != 0.0f) {
      out0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, c_row), out0);
      if (kWide) out1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, c_row + 16), out1);
    }
    _mm512_mask_storeu_ps(c_row, m0, out0);
    if (kWide) _mm512_mask_storeu_ps(c_row + 16, m1, out1);
  };
#define SWARMT_STORE(r) \
  if constexpr (kRows > r) store(c + r * ldc, c##r##0, c##r##1);
  SWARMT_TILE_ROWS(SWARMT_STORE)
#undef SWARMT_STORE
}
#undef SWARMT_TILE_ROWS

template <int kRows>
SWARMT_TARGET_AVX512 void row_strip(int64_t n, int64_t k, float alpha, const float* a, int64_t a_row,
                                    int64_t a_col, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t j = 0; j < n; j += 32) {
    const int64_t left = n - j;
    const __mmask16 m0 = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    const __mmask16 m1 = left >= 32 ? __mmask16(0xFFFF)
                                    : left > 16 ? static_cast<__mmask16>((1u << (left - 16)) - 1) : __mmask16(0);
    if (left > 16)
      tile<kRows, true>(k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc, m0, m1);
    else
      tile<kRows, false>(k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc, m0, m1);
  }
}

SWARMT_TARGET_AVX512 void gemm_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row,
                                      int64_t a_col, const float* b, int64_t ldb, float beta, float* c,
                                      int64_t ldc) {
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) row_strip<8>(n, k, alpha, a + i * a_row, a_row, a_col, b, ldb, beta, c + i * ldc, ldc);
  const float* a_rest = a + i * a_row;
  float* c_rest = c + i * ldc;
  switch (m - i) {
    case 7: row_strip<7>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 6: row_strip<6>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 5: row_strip<5>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 4: row_strip<4>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 3: row_strip<3>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 2: row_strip<2>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 1: row_strip<1>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    default: break;
  }
}
// dst (8 × 8, row stride ld_dst) = srcᵀ (8 × 8, row stride ld_src): unpack pairs of rows, shuffle pairs
// of pairs, then swap 128-bit halves.
SWARMT_TARGET_AVX512 inline void transpose_8x8(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld_src);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));      // a0 b0 c0 d0 | a4 b4 c4 d4
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));  // a1 b1 c1 d1 | a5 ...
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ld_dst, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ld_dst, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

SWARMT_TARGET_AVX512 void transpose_avx512(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst,
                                           int64_t ld_dst) {
  const int64_t full_rows = rows - rows % 8, full_cols = cols - cols % 8;
  for (int64_t r = 0; r < full_rows; r += 8)
    for (int64_t c = 0; c < full_cols; c += 8)
      transpose_8x8(src + r * ld_src + c, ld_src, dst + c * ld_dst + r, ld_dst);
  for (int64_t r = 0; r < rows; ++r)  // the edges
    for (int64_t c = r < full_rows ? full_cols : 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
}
#undef SWARMT_TARGET_AVX512
#endif  // x86

}  // namespace

void transpose_small(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
#if defined(__x86_64__) || defined(__i386__)
  if (gemm_small_is_vectorized()) return transpose_avx512(src, rows, cols, ld_src, dst, ld_dst);
#endif
  loops::transpose(src, rows, cols, ld_src, dst, ld_dst);
}

bool gemm_small_is_vectorized() { return matvec_has_avx512(); }

void gemm_small(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(__x86_64__) || defined(__i386__)
  if (gemm_small_is_vectorized()) return gemm_avx512(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
#endif
  gemm_portable(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
}

}  // namespace swarmt::ops
