#include "swarmt/ops/matvec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/ops/dense_linear.h"
#include "swarmt/ops/hot_pool.h"

namespace swarmt::ops {
namespace matvec_detail {

// Every kernel computes, for the weight rows [o0, o1) and each of the `rows` rows of x (fp32, length
// `in`), y[r * ldy + o] = Σ_i W[o, i] x[r, i]. W's element type is float or uint16_t (bf16 bits).

inline float widen(float w) { return w; }
inline float widen(uint16_t w) {  // bf16 → fp32: the bf16 bits are the fp32 value's upper half
  const uint32_t bits = static_cast<uint32_t>(w) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename W, typename X>
void portable_kernel(const W* w, int64_t in, const X* x, int64_t rows, int64_t o0, int64_t o1, float* y,
                     int64_t ldy) {
  for (int64_t o = o0; o < o1; ++o) {
    const W* wo = w + o * in;
    for (int64_t r = 0; r < rows; ++r) {
      const X* xr = x + r * in;
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // eight partial sums: the compiler vectorises this
      int64_t i = 0;
      for (; i + 8 <= in; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] += widen(wo[i + j]) * widen(xr[i + j]);
      float s = 0;
      for (; i < in; ++i) s += widen(wo[i]) * widen(xr[i]);
      for (float a : acc) s += a;
      y[r * ldy + o] = s;
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's intrinsics (_mm512_slli_epi32, _mm512_cvtepu16_epi32) pass an "undefined" register that its
// own -Wmaybe-uninitialized then reports; the values are fully defined.
// (push/pop: in a unity build the next file shares this translation unit.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define SWARMT_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define SWARMT_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define SWARMT_TARGET_AVX512BF16 __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl,avx2,fma")))

// Short rows (attention keys and values: 64-256 values) give the hardware prefetcher too little to go
// on: each 4-row block is a few cache lines. The block `kPrefetchRows` rows ahead is requested by hand;
// for long rows (weight matrices) it brought nothing (docs/performance.md) and is skipped.
constexpr int64_t kPrefetchRows = 8;
constexpr int64_t kShortRowBytes = 1024;

inline void prefetch_rows_ahead(const void* block, int64_t row_bytes, int64_t rows_left) {
  if (row_bytes > kShortRowBytes || rows_left <= kPrefetchRows) return;
  const char* ahead = static_cast<const char*>(block) + kPrefetchRows * row_bytes;
  const int64_t bytes = std::min<int64_t>(4, rows_left - kPrefetchRows) * row_bytes;
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
}

// The rows [o0, o1) of a row-major weight matrix in groups of four for a 4-row kernel, group(r0, r1, r2,
// r3), the remainder row by row, single(o). Each row's sum depends only on its own row, whichever rows
// share its group, so the grouping changes no value.
// Long rows (weight matrices): the four rows of a group lie a quarter of the range apart, so a thread
// reads four sequential streams far from one another. The hardware prefetcher follows one stream per 4 KiB
// page; four adjacent bf16 rows of 1920 bytes put two streams in one page, and half of them then went
// unprefetched (bf16 matrices read at 17 GB/s where fp32 ones read at 25; spread, bf16 read faster in
// every one of 6 interleaved pairs). Short rows (the KV cache's keys and values): adjacent groups,
// requested by hand a few rows ahead.
template <typename Group, typename Single>
inline void visit_row_groups(const void* w, int64_t row_bytes, int64_t o0, int64_t o1, Group&& group, Single&& single) {
  const int64_t groups = (o1 - o0) / 4;
  if (row_bytes > kShortRowBytes && groups >= 4) {
    for (int64_t g = 0; g < groups; ++g) group(o0 + g, o0 + groups + g, o0 + 2 * groups + g, o0 + 3 * groups + g);
  } else {
    for (int64_t o = o0; o < o0 + 4 * groups; o += 4) {
      prefetch_rows_ahead(static_cast<const char*>(w) + o * row_bytes, row_bytes, o1 - o);
      group(o, o + 1, o + 2, o + 3);
    }
  }
  for (int64_t o = o0 + 4 * groups; o < o1; ++o) single(o);
}

// y[r * ldy + o] for the rows of x and the four rows of a group: `rows4(w_0, .., w_3, x_r, out)` per row of x
// while the group's weights stay in L1.
template <typename W, typename X, typename Rows4>
inline void run_group(const W* w, int64_t in, const X* x, int64_t rows, float* y, int64_t ldy, int64_t r0, int64_t r1,
                      int64_t r2, int64_t r3, Rows4&& rows4) {
  float out[4];
  for (int64_t r = 0; r < rows; ++r) {
    rows4(w + r0 * in, w + r1 * in, w + r2 * in, w + r3 * in, in, x + r * in, out);
    float* yr = y + r * ldy;
    yr[r0] = out[0];
    yr[r1] = out[1];
    yr[r2] = out[2];
    yr[r3] = out[3];
  }
}

// --- AVX-512: 16 lanes -----------------------------------------------------------------------------

SWARMT_TARGET_AVX512 inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
SWARMT_TARGET_AVX512 inline __m512 load16(const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
SWARMT_TARGET_AVX512 inline __m512 load16_masked(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
SWARMT_TARGET_AVX512 inline __m512 load16_masked(const uint16_t* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// The four lane sums of a, b, c, d, stored to out[0..3]: one transposing tree of 512-bit shuffles and
// adds instead of four separate horizontal sums (which cost as much as a 64-element dot product).
SWARMT_TARGET_AVX512 inline void store_sums4(__m512 a, __m512 b, __m512 c, __m512 d, float* out) {
  // 256-bit halves: [a lo+hi | b lo+hi] and [c lo+hi | d lo+hi], 8 partial lanes per vector.
  const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
  // 128-bit quarters: one per vector, in the order a, b, c, d, 4 partial lanes each.
  const __m512 q = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
  // Within each quarter: lanes (0+1, 2+3), then all four; lane 4k holds vector k's sum.
  const __m512 pairs = _mm512_add_ps(q, _mm512_shuffle_ps(q, q, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m512 sums = _mm512_add_ps(pairs, _mm512_shuffle_ps(pairs, pairs, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m512 packed = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), sums);
  _mm_storeu_ps(out, _mm512_castps512_ps128(packed));
}

// Four weight rows against one x row: 4 rows × 2 unrolled steps = 8 independent FMA chains, enough
// to hide the FMA latency while the loads stream W from memory.
template <typename W>
SWARMT_TARGET_AVX512 void avx512_rows4(const W* w0, const W* w1, const W* w2, const W* w3, int64_t in,
                                       const float* x, float* out) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  int64_t i = 0;
  for (; i + 32 <= in; i += 32) {
    const __m512 x0 = _mm512_loadu_ps(x + i), x1 = _mm512_loadu_ps(x + i + 16);
    a0 = _mm512_fmadd_ps(load16(w0 + i), x0, a0);
    a1 = _mm512_fmadd_ps(load16(w1 + i), x0, a1);
    a2 = _mm512_fmadd_ps(load16(w2 + i), x0, a2);
    a3 = _mm512_fmadd_ps(load16(w3 + i), x0, a3);
    b0 = _mm512_fmadd_ps(load16(w0 + i + 16), x1, b0);
    b1 = _mm512_fmadd_ps(load16(w1 + i + 16), x1, b1);
    b2 = _mm512_fmadd_ps(load16(w2 + i + 16), x1, b2);
    b3 = _mm512_fmadd_ps(load16(w3 + i + 16), x1, b3);
  }
  for (; i < in; i += 16) {
    const __mmask16 m = in - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (in - i)) - 1);
    const __m512 x0 = _mm512_maskz_loadu_ps(m, x + i);
    a0 = _mm512_fmadd_ps(load16_masked(w0 + i, m), x0, a0);
    a1 = _mm512_fmadd_ps(load16_masked(w1 + i, m), x0, a1);
    a2 = _mm512_fmadd_ps(load16_masked(w2 + i, m), x0, a2);
    a3 = _mm512_fmadd_ps(load16_masked(w3 + i, m), x0, a3);
  }
  store_sums4(_mm512_add_ps(a0, b0), _mm512_add_ps(a1, b1), _mm512_add_ps(a2, b2), _mm512_add_ps(a3, b3), out);
}

template <typename W>
SWARMT_TARGET_AVX512 float avx512_row(const W* w, int64_t in, const float* x) {
  __m512 a = _mm512_setzero_ps(), b = a;
  int64_t i = 0;
  for (; i + 32 <= in; i += 32) {
    a = _mm512_fmadd_ps(load16(w + i), _mm512_loadu_ps(x + i), a);
    b = _mm512_fmadd_ps(load16(w + i + 16), _mm512_loadu_ps(x + i + 16), b);
  }
  for (; i < in; i += 16) {
    const __mmask16 m = in - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (in - i)) - 1);
    a = _mm512_fmadd_ps(load16_masked(w + i, m), _mm512_maskz_loadu_ps(m, x + i), a);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a, b));
}

template <typename W>
SWARMT_TARGET_AVX512 void avx512_kernel(const W* w, int64_t in, const float* x, int64_t rows, int64_t o0,
                                        int64_t o1, float* y, int64_t ldy) {
  visit_row_groups(
      w, in * static_cast<int64_t>(sizeof(W)), o0, o1,
      [&](int64_t r0, int64_t r1, int64_t r2, int64_t r3) {
        run_group(w, in, x, rows, y, ldy, r0, r1, r2, r3, avx512_rows4<W>);
      },
      [&](int64_t o) {
        for (int64_t r = 0; r < rows; ++r) y[r * ldy + o] = avx512_row(w + o * in, in, x + r * in);
      });
}

// --- AVX-512 BF16: bf16 weights and bf16 activations -----------------------------------------------
// vdpbf16ps multiplies 32 bf16 pairs and adds each two neighbouring products to one of 16 fp32 lanes.
// A product of two bf16 values is exact in fp32, so this is the fp32 dot product of the stored values
// (summed in another order), for a quarter of the instructions of widening the weights to fp32.

SWARMT_TARGET_AVX512BF16 inline __m512bh load32bh(const uint16_t* p) {
  return (__m512bh)_mm512_loadu_si512(p);
}
SWARMT_TARGET_AVX512BF16 inline __m512bh load32bh_masked(const uint16_t* p, __mmask32 m) {
  return (__m512bh)_mm512_maskz_loadu_epi16(m, p);
}
SWARMT_TARGET_AVX512BF16 inline __mmask32 tail_mask32(int64_t left) {
  return left >= 32 ? __mmask32(0xFFFFFFFFu) : __mmask32((1u << left) - 1);
}

SWARMT_TARGET_AVX512BF16 void bf16dot_rows4(const uint16_t* w0, const uint16_t* w1, const uint16_t* w2,
                                            const uint16_t* w3, int64_t in, const uint16_t* x, float* out) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  int64_t i = 0;
  for (; i + 64 <= in; i += 64) {
    const __m512bh x0 = load32bh(x + i), x1 = load32bh(x + i + 32);
    a0 = _mm512_dpbf16_ps(a0, load32bh(w0 + i), x0);
    a1 = _mm512_dpbf16_ps(a1, load32bh(w1 + i), x0);
    a2 = _mm512_dpbf16_ps(a2, load32bh(w2 + i), x0);
    a3 = _mm512_dpbf16_ps(a3, load32bh(w3 + i), x0);
    b0 = _mm512_dpbf16_ps(b0, load32bh(w0 + i + 32), x1);
    b1 = _mm512_dpbf16_ps(b1, load32bh(w1 + i + 32), x1);
    b2 = _mm512_dpbf16_ps(b2, load32bh(w2 + i + 32), x1);
    b3 = _mm512_dpbf16_ps(b3, load32bh(w3 + i + 32), x1);
  }
  for (; i < in; i += 32) {
    const __mmask32 m = tail_mask32(in - i);
    const __m512bh x0 = load32bh_masked(x + i, m);
    a0 = _mm512_dpbf16_ps(a0, load32bh_masked(w0 + i, m), x0);
    a1 = _mm512_dpbf16_ps(a1, load32bh_masked(w1 + i, m), x0);
    a2 = _mm512_dpbf16_ps(a2, load32bh_masked(w2 + i, m), x0);
    a3 = _mm512_dpbf16_ps(a3, load32bh_masked(w3 + i, m), x0);
  }
  store_sums4(_mm512_add_ps(a0, b0), _mm512_add_ps(a1, b1), _mm512_add_ps(a2, b2), _mm512_add_ps(a3, b3), out);
}

SWARMT_TARGET_AVX512BF16 float bf16dot_row(const uint16_t* w, int64_t in, const uint16_t* x) {
  __m512 a = _mm512_setzero_ps();
  for (int64_t i = 0; i < in; i += 32) {
    const __mmask32 m = tail_mask32(in - i);
    a = _mm512_dpbf16_ps(a, load32bh_masked(w + i, m), load32bh_masked(x + i, m));
  }
  return _mm512_reduce_add_ps(a);
}

SWARMT_TARGET_AVX512BF16 void bf16dot_kernel(const uint16_t* w, int64_t in, const uint16_t* x, int64_t rows,
                                             int64_t o0, int64_t o1, float* y, int64_t ldy) {
  visit_row_groups(
      w, in * 2, o0, o1,
      [&](int64_t r0, int64_t r1, int64_t r2, int64_t r3) { run_group(w, in, x, rows, y, ldy, r0, r1, r2, r3, bf16dot_rows4); },
      [&](int64_t o) {
        for (int64_t r = 0; r < rows; ++r) y[r * ldy + o] = bf16dot_row(w + o * in, in, x + r * in);
      });
}

// --- AVX2 + FMA: 8 lanes ---------------------------------------------------------------------------

SWARMT_TARGET_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
SWARMT_TARGET_AVX2 inline __m256 load8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
SWARMT_TARGET_AVX2 inline float hsum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

template <typename W>
SWARMT_TARGET_AVX2 void avx2_rows4(const W* w0, const W* w1, const W* w2, const W* w3, int64_t in, const float* x,
                                   float* out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  int64_t i = 0;
  for (; i + 16 <= in; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(load8(w0 + i), x0, a0);
    a1 = _mm256_fmadd_ps(load8(w1 + i), x0, a1);
    a2 = _mm256_fmadd_ps(load8(w2 + i), x0, a2);
    a3 = _mm256_fmadd_ps(load8(w3 + i), x0, a3);
    b0 = _mm256_fmadd_ps(load8(w0 + i + 8), x1, b0);
    b1 = _mm256_fmadd_ps(load8(w1 + i + 8), x1, b1);
    b2 = _mm256_fmadd_ps(load8(w2 + i + 8), x1, b2);
    b3 = _mm256_fmadd_ps(load8(w3 + i + 8), x1, b3);
  }
  for (; i + 8 <= in; i += 8) {
    const __m256 x0 = _mm256_loadu_ps(x + i);
    a0 = _mm256_fmadd_ps(load8(w0 + i), x0, a0);
    a1 = _mm256_fmadd_ps(load8(w1 + i), x0, a1);
    a2 = _mm256_fmadd_ps(load8(w2 + i), x0, a2);
    a3 = _mm256_fmadd_ps(load8(w3 + i), x0, a3);
  }
  out[0] = hsum8(_mm256_add_ps(a0, b0));
  out[1] = hsum8(_mm256_add_ps(a1, b1));
  out[2] = hsum8(_mm256_add_ps(a2, b2));
  out[3] = hsum8(_mm256_add_ps(a3, b3));
  for (; i < in; ++i) {
    out[0] += widen(w0[i]) * x[i];
    out[1] += widen(w1[i]) * x[i];
    out[2] += widen(w2[i]) * x[i];
    out[3] += widen(w3[i]) * x[i];
  }
}

template <typename W>
SWARMT_TARGET_AVX2 void avx2_kernel(const W* w, int64_t in, const float* x, int64_t rows, int64_t o0, int64_t o1,
                                    float* y, int64_t ldy) {
  const int64_t grouped = o0 + (o1 - o0) / 4 * 4;
  visit_row_groups(
      w, in * static_cast<int64_t>(sizeof(W)), o0, grouped,
      [&](int64_t r0, int64_t r1, int64_t r2, int64_t r3) {
        run_group(w, in, x, rows, y, ldy, r0, r1, r2, r3, avx2_rows4<W>);
      },
      [](int64_t) {});
  if (grouped < o1) portable_kernel(w, in, x, rows, grouped, o1, y, ldy);
}

// --- The value pass and the softmax of decode attention ------------------------------------------

// y[r, :] += Σ_s p[r, s] V[s, :] for NR rows of p and the 64 columns from j0 (masked past d): V is read
// once, in row order. NR and the 4 column blocks are compile-time, so the 4·NR accumulators stay in
// registers.
template <int NR, typename W>
SWARMT_TARGET_AVX512 void avx512_vecmat_block(const W* v, int64_t slots, int64_t d, int64_t j0, const float* p,
                                              int64_t ldp, float* y) {
  __mmask16 mask[4];
  for (int b = 0; b < 4; ++b) {
    const int64_t left = d - j0 - 16 * b;
    mask[b] = left >= 16 ? __mmask16(0xFFFF) : left > 0 ? __mmask16((1u << left) - 1) : __mmask16(0);
  }
  __m512 acc[NR][4];
#pragma GCC unroll 4
  for (int r = 0; r < NR; ++r)
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) acc[r][b] = _mm512_maskz_loadu_ps(mask[b], y + r * d + j0 + 16 * b);
  const int64_t row_bytes = std::min<int64_t>(d - j0, 64) * static_cast<int64_t>(sizeof(W));
  for (int64_t s = 0; s < slots; ++s) {
    if (s + kPrefetchRows < slots) {  // as prefetch_rows_ahead: short rows, requested by hand
      const char* ahead = reinterpret_cast<const char*>(v + (s + kPrefetchRows) * d + j0);
      for (int64_t off = 0; off < row_bytes; off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
    }
    __m512 vs[4];
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) vs[b] = load16_masked(v + s * d + j0 + 16 * b, mask[b]);
#pragma GCC unroll 4
    for (int r = 0; r < NR; ++r) {
      const __m512 weight = _mm512_set1_ps(p[r * ldp + s]);
#pragma GCC unroll 4
      for (int b = 0; b < 4; ++b) acc[r][b] = _mm512_fmadd_ps(weight, vs[b], acc[r][b]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < NR; ++r)
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) _mm512_mask_storeu_ps(y + r * d + j0 + 16 * b, mask[b], acc[r][b]);
}

template <typename W>
SWARMT_TARGET_AVX512 void avx512_vecmat(const W* v, int64_t slots, int64_t d, const float* p, int64_t rows,
                                        int64_t ldp, float* y) {
  for (int64_t r0 = 0; r0 < rows; r0 += 4) {
    const float* pr = p + r0 * ldp;
    float* yr = y + r0 * d;
    for (int64_t j0 = 0; j0 < d; j0 += 64) {
      switch (std::min<int64_t>(4, rows - r0)) {
        case 1: avx512_vecmat_block<1>(v, slots, d, j0, pr, ldp, yr); break;
        case 2: avx512_vecmat_block<2>(v, slots, d, j0, pr, ldp, yr); break;
        case 3: avx512_vecmat_block<3>(v, slots, d, j0, pr, ldp, yr); break;
        default: avx512_vecmat_block<4>(v, slots, d, j0, pr, ldp, yr); break;
      }
    }
  }
}

#undef SWARMT_TARGET_AVX512
#undef SWARMT_TARGET_AVX2
#undef SWARMT_TARGET_AVX512BF16
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // x86

enum class Isa { Portable, Avx2, Avx512, Avx512Bf16 };  // ascending; kIsaNames below in this order

Isa detect_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return __builtin_cpu_supports("avx512bf16") ? Isa::Avx512Bf16 : Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
#endif
  return Isa::Portable;
}

bool supported(Isa level) {
  static const Isa best = detect_isa();
  return static_cast<int>(level) <= static_cast<int>(best);
}

std::atomic<Isa>& chosen_isa() {
  static std::atomic<Isa> chosen{detect_isa()};
  return chosen;
}

Isa isa() { return chosen_isa().load(std::memory_order_relaxed); }

// bf16 weights and bf16 activations: the dot-product instructions where the CPU has them.
void run_kernel(const uint16_t* w, int64_t in, const uint16_t* x, int64_t rows, int64_t o0, int64_t o1, float* y,
                int64_t ldy) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa() == Isa::Avx512Bf16) return bf16dot_kernel(w, in, x, rows, o0, o1, y, ldy);
#endif
  portable_kernel(w, in, x, rows, o0, o1, y, ldy);
}

// fp32 activations, fp32 or bf16 weights.
template <typename W>
void run_kernel(const W* w, int64_t in, const float* x, int64_t rows, int64_t o0, int64_t o1, float* y, int64_t ldy) {
  switch (isa()) {
#if defined(__x86_64__) || defined(__i386__)
    case Isa::Avx512Bf16:
    case Isa::Avx512: return avx512_kernel(w, in, x, rows, o0, o1, y, ldy);
    case Isa::Avx2: return avx2_kernel(w, in, x, rows, o0, o1, y, ldy);
#endif
    default: return portable_kernel(w, in, x, rows, o0, o1, y, ldy);
  }
}

}  // namespace matvec_detail

bool matvec_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!x.defined() || !weight.defined() || !x.device().is_cpu() || !weight.device().is_cpu()) return false;
  if (weight.dim() != 2 || x.dim() < 1 || x.size(-1) != weight.size(1) || !weight.is_contiguous()) return false;
  const auto dtype = weight.scalar_type();
  if ((dtype != at::kFloat && dtype != at::kBFloat16) || x.scalar_type() != dtype) return false;
  if (bias.defined() && (bias.scalar_type() != dtype || bias.dim() != 1 || bias.size(0) != weight.size(0)))
    return false;
  if (x.numel() > kMatvecMaxRows * weight.size(1) || x.numel() == 0) return false;
  if (at::GradMode::is_enabled() &&
      (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad())))
    return false;
  return true;
}

namespace {

// One parallel pass over the weights side by side: y (rows, Σ out_j) = x W_jᵀ. Output rows are split in
// tasks of at least ~16 KiB of weights, so that small layers run on the calling thread alone, in whole
// blocks of 4 rows, the kernels' unit.
template <typename W, typename X>
void group_pass(at::ArrayRef<const W*> weights, at::ArrayRef<int64_t> outs, int64_t in, const X* x, int64_t rows,
                float* y) {
  const size_t count = weights.size();
  int64_t first[16];  // first[j]: weight j's first column of y
  SWARMT_CHECK(count >= 1 && count < 16 && outs.size() == count, "matvec group: 1 to 15 weights, one size each");
  first[0] = 0;
  for (size_t j = 0; j < count; ++j) first[j + 1] = first[j] + outs[j];
  const int64_t total = first[count];
  const int64_t grain = (std::max<int64_t>(4, (16 << 10) / std::max<int64_t>(1, in * int64_t(sizeof(W)))) + 3) / 4 * 4;
  hot_parallel_for(0, total, grain, [&](int64_t o0, int64_t o1) {
    for (size_t j = 0; j < count; ++j) {  // the part of [o0, o1) that falls in weight j
      const int64_t b = std::max(o0, first[j]), e = std::min(o1, first[j + 1]);
      if (b < e) matvec_detail::run_kernel(weights[j], in, x, rows, b - first[j], e - first[j], y + first[j], total);
    }
  });
}

// x widened to fp32, in a buffer this thread keeps (decoding calls this per token).
const float* widened(const at::BFloat16* x, int64_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) buffer[i] = static_cast<float>(x[i]);
  return buffer.data();
}

}  // namespace

void matvec_group_rows(at::ArrayRef<const float*> weights, at::ArrayRef<int64_t> outs, int64_t in, const float* x,
                       int64_t rows, float* y) {
  group_pass(weights, outs, in, x, rows, y);
}

void matvec_group_rows(at::ArrayRef<const at::BFloat16*> weights, at::ArrayRef<int64_t> outs, int64_t in,
                       const at::BFloat16* x, int64_t rows, float* y) {
  const uint16_t* bits[16];  // the same pointers as bf16 bits, without an allocation per token
  SWARMT_CHECK(weights.size() < 16, "matvec group: 1 to 15 weights");
  for (size_t j = 0; j < weights.size(); ++j) bits[j] = reinterpret_cast<const uint16_t*>(weights[j]);
  const at::ArrayRef<const uint16_t*> as_bits(bits, weights.size());
  if (matvec_detail::isa() == matvec_detail::Isa::Avx512Bf16)  // bf16 as the weights: the dot needs no widening
    group_pass<uint16_t, uint16_t>(as_bits, outs, in, reinterpret_cast<const uint16_t*>(x), rows, y);
  else
    group_pass<uint16_t, float>(as_bits, outs, in, widened(x, rows * in), rows, y);
}

at::Tensor matvec_group_fp32(const at::Tensor& x, at::ArrayRef<at::Tensor> weights) {
  SWARMT_CHECK(!weights.empty(), "matvec_group_fp32: no weights");
  for (const auto& w : weights)
    SWARMT_CHECK(matvec_applies(x, w, {}) && w.scalar_type() == weights[0].scalar_type(),
                 "matvec_group_fp32: arguments outside the matvec path");
  const int64_t in = weights[0].size(1), rows = x.numel() / in;
  std::vector<int64_t> outs;
  for (const auto& w : weights) outs.push_back(w.size(0));
  at::Tensor y = at::empty({rows, std::accumulate(outs.begin(), outs.end(), int64_t{0})}, x.options().dtype(at::kFloat));
  const at::Tensor xc = x.reshape({rows, in}).contiguous();
  if (weights[0].scalar_type() == at::kFloat) {
    std::vector<const float*> ws;
    for (const auto& w : weights) ws.push_back(w.data_ptr<float>());
    matvec_group_rows(ws, outs, in, xc.data_ptr<float>(), rows, y.data_ptr<float>());
  } else {
    std::vector<const at::BFloat16*> ws;
    for (const auto& w : weights) ws.push_back(w.data_ptr<at::BFloat16>());
    matvec_group_rows(ws, outs, in, xc.data_ptr<at::BFloat16>(), rows, y.data_ptr<float>());
  }
  return y;
}

std::vector<at::Tensor> matvec_linear_group(const at::Tensor& x, at::ArrayRef<at::Tensor> weights,
                                            at::ArrayRef<at::Tensor> biases) {
  SWARMT_CHECK(biases.empty() || biases.size() == weights.size(), "matvec_linear_group: one bias per weight");
  for (size_t j = 0; j < biases.size(); ++j)
    SWARMT_CHECK(matvec_applies(x, weights[j], biases[j]), "matvec_linear_group: arguments outside the matvec path");
  const at::Tensor y = matvec_group_fp32(x, weights);
  const int64_t rows = y.size(0), total = y.size(1);
  const float* yp = y.data_ptr<float>();
  std::vector<at::Tensor> outs;
  int64_t first = 0;
  for (size_t j = 0; j < weights.size(); ++j) {
    const int64_t out = weights[j].size(0);
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = out;
    at::Tensor result = at::empty(shape, x.options());
    const at::Tensor& b = j < biases.size() ? biases[j] : at::Tensor();
    // y + b in fp32, rounded once to x's dtype, as at::linear would (a loop: this runs per token).
    auto write = [&](auto* dst, const auto* bias) {
      using T = std::remove_pointer_t<decltype(dst)>;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out; ++o)
          dst[r * out + o] = static_cast<T>(yp[r * total + first + o] + (bias ? static_cast<float>(bias[o]) : 0.0f));
    };
    const at::Tensor bc = b.defined() ? b.contiguous() : b;
    if (x.scalar_type() == at::kFloat)
      write(result.data_ptr<float>(), bc.defined() ? bc.data_ptr<float>() : nullptr);
    else
      write(result.data_ptr<at::BFloat16>(), bc.defined() ? bc.data_ptr<at::BFloat16>() : nullptr);
    outs.push_back(result);
    first += out;
  }
  return outs;
}

at::Tensor matvec_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  SWARMT_CHECK(matvec_applies(x, weight, bias), "matvec_linear: arguments outside the matvec path");
  return matvec_linear_group(x, {weight}, {bias})[0];
}

namespace {

// Training through one GEMM (see linear_group): two or more weights of one dtype and device and the
// same input width; biases of the same dtype and device where there are any.
bool grouped_gemm_applies(const at::Tensor& x, at::ArrayRef<at::Tensor> weights, at::ArrayRef<at::Tensor> biases) {
  if (weights.size() < 2 || !at::GradMode::is_enabled()) return false;
  bool graph = x.requires_grad();
  for (size_t j = 0; j < weights.size(); ++j) {
    const at::Tensor& w = weights[j];
    const at::Tensor b = j < biases.size() ? biases[j] : at::Tensor();
    if (w.dim() != 2 || w.size(1) != weights[0].size(1) || w.scalar_type() != weights[0].scalar_type() ||
        w.device() != weights[0].device())
      return false;
    if (b.defined() && (b.dim() != 1 || b.size(0) != w.size(0) || b.scalar_type() != w.scalar_type() ||
                        b.device() != w.device()))
      return false;
    graph = graph || w.requires_grad() || (b.defined() && b.requires_grad());
  }
  return graph;
}

}  // namespace

std::vector<at::Tensor> linear_group(const at::Tensor& x, at::ArrayRef<at::Tensor> weights,
                                     at::ArrayRef<at::Tensor> biases) {
  SWARMT_CHECK(biases.empty() || biases.size() == weights.size(), "linear_group: one bias per weight");
  auto bias = [&](size_t j) { return j < biases.size() ? biases[j] : at::Tensor(); };
  bool fused = !weights.empty();
  for (size_t j = 0; j < weights.size() && fused; ++j)
    fused = matvec_applies(x, weights[j], bias(j)) && weights[j].scalar_type() == weights[0].scalar_type();
  if (fused) return matvec_linear_group(x, weights, biases);
  if (grouped_gemm_applies(x, weights, biases)) {
    // Where some weights have a bias and others not, the others' part of the joint bias is zeros.
    std::vector<at::Tensor> bs;
    std::vector<int64_t> sizes;
    bool any_bias = false;
    for (size_t j = 0; j < weights.size(); ++j) any_bias = any_bias || bias(j).defined();
    for (size_t j = 0; j < weights.size(); ++j) {
      sizes.push_back(weights[j].size(0));
      if (any_bias) bs.push_back(bias(j).defined() ? bias(j) : at::zeros({weights[j].size(0)}, weights[j].options()));
    }
    const at::Tensor w = at::cat(weights, 0), b = any_bias ? at::cat(bs, 0) : at::Tensor();
    if (dense_linear_applies(x, w, b)) return dense_linear_group(x, w, b, sizes);
    return linear(x, w, b).split_with_sizes(sizes, -1);
  }
  std::vector<at::Tensor> outs;
  for (size_t j = 0; j < weights.size(); ++j) outs.push_back(linear(x, weights[j], bias(j)));
  return outs;
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (matvec_applies(x, weight, bias)) return matvec_linear(x, weight, bias);
  if (dense_linear_applies(x, weight, bias)) return dense_linear(x, weight, bias);
  return at::linear(x, weight, bias);
}

void matvec_rows(const float* w, int64_t out, int64_t in, const float* x, int64_t rows, float* y, int64_t ldy) {
  matvec_detail::run_kernel(w, in, x, rows, 0, out, y, ldy);
}

void matvec_rows(const at::BFloat16* w, int64_t out, int64_t in, const at::BFloat16* x, int64_t rows, float* y,
                 int64_t ldy) {
  const auto* wb = reinterpret_cast<const uint16_t*>(w);
  const auto* xb = reinterpret_cast<const uint16_t*>(x);
  if (matvec_detail::isa() == matvec_detail::Isa::Avx512Bf16)
    return matvec_detail::run_kernel(wb, in, xb, rows, 0, out, y, ldy);
  matvec_detail::run_kernel(wb, in, widened(x, rows * in), rows, 0, out, y, ldy);
}

namespace {

template <typename W>
void vecmat_portable(const W* v, int64_t slots, int64_t d, const float* p, int64_t rows, int64_t ldp, float* y) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t s = 0; s < slots; ++s) {
      const float w = p[r * ldp + s];
      const W* vs = v + s * d;
      for (int64_t j = 0; j < d; ++j) y[r * d + j] += w * matvec_detail::widen(vs[j]);
    }
}

template <typename W>
void vecmat_dispatch(const W* v, int64_t slots, int64_t d, const float* p, int64_t rows, int64_t ldp, float* y) {
#if defined(__x86_64__) || defined(__i386__)
  if (matvec_detail::isa() >= matvec_detail::Isa::Avx512) return matvec_detail::avx512_vecmat(v, slots, d, p, rows, ldp, y);
#endif
  vecmat_portable(v, slots, d, p, rows, ldp, y);
}

}  // namespace

void vecmat_rows(const float* v, int64_t slots, int64_t d, const float* p, int64_t rows, int64_t ldp, float* y) {
  vecmat_dispatch(v, slots, d, p, rows, ldp, y);
}

void vecmat_rows(const at::BFloat16* v, int64_t slots, int64_t d, const float* p, int64_t rows, int64_t ldp,
                 float* y) {
  vecmat_dispatch(reinterpret_cast<const uint16_t*>(v), slots, d, p, rows, ldp, y);
}


namespace {
// The kernel levels by name, in the order of matvec_detail::Isa.
constexpr const char* kIsaNames[] = {"portable", "avx2", "avx512", "avx512-bf16"};
}  // namespace

bool set_matvec_isa(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kIsaNames)); ++i) {
    if (name != kIsaNames[i]) continue;
    const auto level = static_cast<matvec_detail::Isa>(i);
    if (!matvec_detail::supported(level)) return false;
    matvec_detail::chosen_isa().store(level);
    return true;
  }
  return false;
}

bool matvec_has_avx512() { return matvec_detail::isa() >= matvec_detail::Isa::Avx512; }
bool matvec_has_avx2() { return matvec_detail::isa() >= matvec_detail::Isa::Avx2; }

std::string matvec_isa() { return kIsaNames[static_cast<int>(matvec_detail::isa())]; }

}  // namespace swarmt::ops
