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

// One tile of kRows rows × up to 16·kZmm columns (kZmm = 1, 2 or 3 AVX-512 registers per row; masks m0,
// m1, m2 for the 16-lane parts). Per step of k: kZmm loads of B, kRows broadcasts of A, kRows · kZmm
// FMAs. The 48-wide tile does 24 FMAs per 11 loads (the 32-wide one 16 per 10): +8 % with B in L1 and
// +25 % with B in L2 on one thread (180 against 145–167 GFLOP/s, 8 × 48 × 512); the narrower tiles take
// the last columns, where a wide tile would spend most of its FMAs on masked lanes. The accumulators are
// named variables: held in an array, GCC 12 kept a copy of them in memory and stored all of them on every
// step of k (measured: 41–48 instead of ~100 GFLOP/s on one thread).
#define SWARMT_TILE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
template <int kRows, int kZmm>
SWARMT_TARGET_AVX512 inline void tile(int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc, __mmask16 m0,
                                      __mmask16 m1, __mmask16 m2) {
#define SWARMT_DECLARE(r) \
  __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps(), c##r##2 = _mm512_setzero_ps();
  SWARMT_TILE_ROWS(SWARMT_DECLARE)
#undef SWARMT_DECLARE
  for (int64_t p = 0; p < k; ++p) {
    const float* b_p = b + p * ldb;
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, b_p);
    const __m512 b1 = kZmm > 1 ? _mm512_maskz_loadu_ps(m1, b_p + 16) : _mm512_setzero_ps();
    const __m512 b2 = kZmm > 2 ? _mm512_maskz_loadu_ps(m2, b_p + 32) : _mm512_setzero_ps();
    const float* a_p = a + p * a_col;
#define SWARMT_STEP(r)                                                \
  if constexpr (kRows > r) {                                          \
    const __m512 x = _mm512_set1_ps(a_p[r * a_row]);                  \
    c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0);                        \
    if constexpr (kZmm > 1) c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1); \
    if constexpr (kZmm > 2) c##r##2 = _mm512_fmadd_ps(x, b2, c##r##2); \
  }
    SWARMT_TILE_ROWS(SWARMT_STEP)
#undef SWARMT_STEP
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  auto store_part = [&](float* c_part, __mmask16 mask, __m512 acc) SWARMT_TARGET_AVX512 {
    __m512 out = _mm512_mul_ps(acc, va);
    if (beta != 0.0f) out = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, c_part), out);
    _mm512_mask_storeu_ps(c_part, mask, out);
  };
#define SWARMT_STORE(r)                                              \
  if constexpr (kRows > r) {                                         \
    store_part(c + r * ldc, m0, c##r##0);                            \
    if constexpr (kZmm > 1) store_part(c + r * ldc + 16, m1, c##r##1); \
    if constexpr (kZmm > 2) store_part(c + r * ldc + 32, m2, c##r##2); \
  }
  SWARMT_TILE_ROWS(SWARMT_STORE)
#undef SWARMT_STORE
}
#undef SWARMT_TILE_ROWS

// The first `left` of 16 lanes (all of them from 16 on, none at 0 or below).
inline __mmask16 lanes(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << left) - 1);
}

// One tile of `width` (1..48) columns, as narrow as it can be.
template <int kRows>
SWARMT_TARGET_AVX512 inline void tile_of_width(int64_t width, int64_t k, float alpha, const float* a, int64_t a_row,
                                               int64_t a_col, const float* b, int64_t ldb, float beta, float* c,
                                               int64_t ldc) {
  if (width > 32)
    tile<kRows, 3>(k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc, lanes(16), lanes(16), lanes(width - 32));
  else if (width > 16)
    tile<kRows, 2>(k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc, lanes(16), lanes(width - 16), 0);
  else
    tile<kRows, 1>(k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc, lanes(width), 0, 0);
}

// Columns in 48-wide tiles, then what is left in one tile of 48, 32 or 16; a last 1..16 after 48-wide
// tiles goes with the previous 48 as two 32-wide tiles instead (a 16-wide tile has 8 accumulators, too
// few to hide the FMA latency: P V at 8 × 64 × 136 ran at 96 GFLOP/s as 48 + 16, 119 as 32 + 32).
template <int kRows>
SWARMT_TARGET_AVX512 void row_strip(int64_t n, int64_t k, float alpha, const float* a, int64_t a_row,
                                    int64_t a_col, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  int64_t wide = n / 48, left = n % 48;
  if (wide > 0 && left > 0 && left <= 16) {
    --wide;
    left += 48;
  }
  int64_t j = 0;
  for (; j < 48 * wide; j += 48)
    tile<kRows, 3>(k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc, lanes(16), lanes(16), lanes(16));
  if (left > 48) {
    tile<kRows, 2>(k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc, lanes(16), lanes(16), 0);
    j += 32;
    left -= 32;
  }
  if (left > 0) tile_of_width<kRows>(left, k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc);
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
#undef SWARMT_TARGET_AVX512
#define SWARMT_TARGET_AVX2 __attribute__((target("avx2,fma")))

// ---- AVX2 + FMA (16 ymm registers): a tile of 4 rows × up to 24 columns, 12 accumulators (enough to
// hide the FMA latency on two pipes), 3 loads of B and 4 broadcasts of A per step of k. A strip of 8 rows
// (the callers' unit) is two tiles. AVX2's masked stores are slow on some cores, so only the last
// register of a tile that ends inside a row of C is masked; full tiles load and store plainly.

// The first `left` of 8 lanes as a load/store mask (all of them from 8 on, none at 0 or below).
SWARMT_TARGET_AVX2 inline __m256i lanes8(int64_t left) {
  alignas(32) static const int32_t kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  const int64_t n = std::clamp<int64_t>(left, 0, 8);
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - n));
}

#define SWARMT_TILE4_ROWS(X) X(0) X(1) X(2) X(3)
// kYmm registers per row (1..3); with kMasked, the last of them covers the lanes of `last` only.
template <int kRows, int kYmm, bool kMasked>
SWARMT_TARGET_AVX2 inline void tile_avx2(int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                                         const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                                         __m256i last) {
  auto load_b = [&](const float* p, int y) SWARMT_TARGET_AVX2 {
    return kMasked && y == kYmm - 1 ? _mm256_maskload_ps(p, last) : _mm256_loadu_ps(p);
  };
#define SWARMT_DECLARE(r) \
  __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps(), c##r##2 = _mm256_setzero_ps();
  SWARMT_TILE4_ROWS(SWARMT_DECLARE)
#undef SWARMT_DECLARE
  for (int64_t p = 0; p < k; ++p) {
    const float* b_p = b + p * ldb;
    const __m256 b0 = load_b(b_p, 0);
    const __m256 b1 = kYmm > 1 ? load_b(b_p + 8, 1) : _mm256_setzero_ps();
    const __m256 b2 = kYmm > 2 ? load_b(b_p + 16, 2) : _mm256_setzero_ps();
    const float* a_p = a + p * a_col;
#define SWARMT_STEP(r)                                                 \
  if constexpr (kRows > r) {                                           \
    const __m256 x = _mm256_broadcast_ss(a_p + r * a_row);             \
    c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);                         \
    if constexpr (kYmm > 1) c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1); \
    if constexpr (kYmm > 2) c##r##2 = _mm256_fmadd_ps(x, b2, c##r##2); \
  }
    SWARMT_TILE4_ROWS(SWARMT_STEP)
#undef SWARMT_STEP
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  auto store = [&](float* c_part, int y, __m256 acc) SWARMT_TARGET_AVX2 {
    const bool masked = kMasked && y == kYmm - 1;
    __m256 out = _mm256_mul_ps(acc, va);
    if (beta != 0.0f)
      out = _mm256_fmadd_ps(vb, masked ? _mm256_maskload_ps(c_part, last) : _mm256_loadu_ps(c_part), out);
    if (masked)
      _mm256_maskstore_ps(c_part, last, out);
    else
      _mm256_storeu_ps(c_part, out);
  };
#define SWARMT_STORE(r)                                          \
  if constexpr (kRows > r) {                                     \
    store(c + r * ldc, 0, c##r##0);                              \
    if constexpr (kYmm > 1) store(c + r * ldc + 8, 1, c##r##1);  \
    if constexpr (kYmm > 2) store(c + r * ldc + 16, 2, c##r##2); \
  }
  SWARMT_TILE4_ROWS(SWARMT_STORE)
#undef SWARMT_STORE
}
#undef SWARMT_TILE4_ROWS

// One tile of `width` (1..24) columns, as narrow as it can be.
template <int kRows>
SWARMT_TARGET_AVX2 inline void tile_avx2_of_width(int64_t width, int64_t k, float alpha, const float* a,
                                                  int64_t a_row, int64_t a_col, const float* b, int64_t ldb,
                                                  float beta, float* c, int64_t ldc) {
  const int64_t ymm = (width + 7) / 8;
  const bool masked = width % 8 != 0;
  const __m256i last = lanes8(width - 8 * (ymm - 1));
#define SWARMT_TILE(Y)                                                                       \
  if (ymm == Y) {                                                                            \
    if (masked)                                                                              \
      tile_avx2<kRows, Y, true>(k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc, last);      \
    else                                                                                     \
      tile_avx2<kRows, Y, false>(k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc, last);     \
    return;                                                                                  \
  }
  SWARMT_TILE(1) SWARMT_TILE(2) SWARMT_TILE(3)
#undef SWARMT_TILE
}

// Columns in 24-wide tiles, then what is left in one tile; a last 1..8 after 24-wide tiles goes with the
// previous 24 as 16 + (9..16), so that no tile of a wide product has only 4 accumulators.
template <int kRows>
SWARMT_TARGET_AVX2 void row_strip_avx2(int64_t n, int64_t k, float alpha, const float* a, int64_t a_row,
                                       int64_t a_col, const float* b, int64_t ldb, float beta, float* c,
                                       int64_t ldc) {
  int64_t wide = n / 24, left = n % 24;
  if (wide > 0 && left > 0 && left <= 8) {
    --wide;
    left += 24;
  }
  int64_t j = 0;
  const __m256i all = lanes8(8);
  for (; j < 24 * wide; j += 24)
    tile_avx2<kRows, 3, false>(k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc, all);
  if (left > 24) {
    tile_avx2<kRows, 2, false>(k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc, all);
    j += 16;
    left -= 16;
  }
  if (left > 0) tile_avx2_of_width<kRows>(left, k, alpha, a, a_row, a_col, b + j, ldb, beta, c + j, ldc);
}

SWARMT_TARGET_AVX2 void gemm_avx2(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row,
                                  int64_t a_col, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) row_strip_avx2<4>(n, k, alpha, a + i * a_row, a_row, a_col, b, ldb, beta, c + i * ldc, ldc);
  const float* a_rest = a + i * a_row;
  float* c_rest = c + i * ldc;
  switch (m - i) {
    case 3: row_strip_avx2<3>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 2: row_strip_avx2<2>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    case 1: row_strip_avx2<1>(n, k, alpha, a_rest, a_row, a_col, b, ldb, beta, c_rest, ldc); break;
    default: break;
  }
}

// dst (8 × 8, row stride ld_dst) = srcᵀ (8 × 8, row stride ld_src): unpack pairs of rows, shuffle pairs
// of pairs, then swap 128-bit halves (AVX only, so both vector levels use it).
SWARMT_TARGET_AVX2 inline void transpose_8x8(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
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

SWARMT_TARGET_AVX2 void transpose_avx(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst,
                                           int64_t ld_dst) {
  const int64_t full_rows = rows - rows % 8, full_cols = cols - cols % 8;
  for (int64_t r = 0; r < full_rows; r += 8)
    for (int64_t c = 0; c < full_cols; c += 8)
      transpose_8x8(src + r * ld_src + c, ld_src, dst + c * ld_dst + r, ld_dst);
  for (int64_t r = 0; r < rows; ++r)  // the edges
    for (int64_t c = r < full_rows ? full_cols : 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
}
#undef SWARMT_TARGET_AVX2
#endif  // x86

}  // namespace

void transpose_small(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
#if defined(__x86_64__) || defined(__i386__)
  if (gemm_small_is_vectorized()) return transpose_avx(src, rows, cols, ld_src, dst, ld_dst);
#endif
  loops::transpose(src, rows, cols, ld_src, dst, ld_dst);
}

bool gemm_small_is_vectorized() { return matvec_has_avx2(); }

void gemm_small(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(__x86_64__) || defined(__i386__)
  if (matvec_has_avx512()) return gemm_avx512(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
  if (gemm_small_is_vectorized()) return gemm_avx2(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
#endif
  gemm_portable(m, n, k, alpha, a, a_row, a_col, b, ldb, beta, c, ldc);
}

}  // namespace swarmt::ops
