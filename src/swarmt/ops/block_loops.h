// The elementwise loops of the block-by-block CPU kernels (chunkwise recurrences), written so that the
// compiler vectorises them: restrict-qualified pointers (the kernels' blocks never overlap), and dot
// products over eight partial sums (one running sum waits on the adder's latency at every element).
#pragma once

#include <algorithm>
#include <cstdint>

// A function of elementwise loops, compiled once per vector width: the build targets baseline x86-64
// (SSE2, four lanes), and the loader picks the AVX-512 or AVX2 clone where the CPU has it (ifunc).
// For loops whose rounding does not depend on the width: each element's value is the same on every
// clone, up to the fused multiply-adds the wider targets may contract. GCC only: other compilers (the
// sanitizer build's clang) compile the baseline loop.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define SWARMT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SWARMT_VECTOR_CLONES
#endif

namespace swarmt::ops::loops {

// y = s · x
template <typename T>
inline void scaled(const T* __restrict x, T s, int64_t n, T* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = s * x[i];
}

// x = s · x
template <typename T>
inline void scale(T* __restrict x, T s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

// y += s · x
template <typename T>
inline void add_scaled(const T* __restrict x, T s, int64_t n, T* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] += s * x[i];
}

// x ⊙= y
template <typename T>
inline void multiply(T* __restrict x, const T* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= y[i];
}

template <typename T>
inline T dot(const T* __restrict a, const T* __restrict b, int64_t n) {
  constexpr int kLanes = 8;
  T part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += a[i + j] * b[i + j];
  T sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (int j = 0; j < kLanes; ++j) sum += part[j];
  return sum;
}

// Σ x, over eight running sums as dot.
template <typename T>
inline T sum(const T* __restrict x, int64_t n) {
  constexpr int kLanes = 8;
  T part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += x[i + j];
  T total = 0;
  for (; i < n; ++i) total += x[i];
  for (int j = 0; j < kLanes; ++j) total += part[j];
  return total;
}

// Σ x² of fp32 values summed in fp64 (norms and gradient norms), over eight running sums.
inline double squared_sum_fp64(const float* __restrict x, int64_t n) {
  constexpr int kLanes = 8;
  double part[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += static_cast<double>(x[i + j]) * static_cast<double>(x[i + j]);
  double sum = 0;
  for (; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  for (int j = 0; j < kLanes; ++j) sum += part[j];
  return sum;
}

// dst (cols × rows, row stride ld_dst) = srcᵀ, src (rows × cols, row stride ld_src); by 8 × 8 tiles, so
// that the strided writes of a tile land in eight cache lines.
template <typename T>
inline void transpose(const T* __restrict src, int64_t rows, int64_t cols, int64_t ld_src, T* __restrict dst,
                      int64_t ld_dst) {
  constexpr int64_t kTile = 8;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * ld_dst + r] = src[r * ld_src + c];
    }
}

}  // namespace swarmt::ops::loops
