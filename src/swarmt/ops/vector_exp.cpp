// e^x, e^(x − shift) with its sum, and the maximum of a row (see vector_exp.h).
//
// e^x = 2^n · e^r with n = round(x / ln2) and r = x − n ln2, |r| <= ln2 / 2 (ln2 split in two so that
// n · ln2_hi is exact); e^r by Cephes' degree-6 polynomial (within ~1 ulp in fp32). x is clamped to
// [−104, 88.7] first (e^x below 2^−149 is 0, above 88.7 it overflows), and x < −104 (−inf included)
// gives 0.
#include "swarmt/ops/vector_exp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmt/ops/matvec.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace swarmt::ops {
namespace {

constexpr float kExpMax = 88.7f, kExpMin = -104.0f;
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f, kP3 = 4.1665795894e-2f,
                kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's intrinsics (_mm512_roundscale_ps and others) pass an "undefined" register that its own
// -Wmaybe-uninitialized then reports; the values are fully defined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define SWARMT_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define SWARMT_TARGET_AVX2 __attribute__((target("avx2,fma")))

// ---- AVX-512: 16 lanes, 2^n by scalef, tails by lane masks

SWARMT_TARGET_AVX512 inline __m512 exp16(__m512 x) {
  const __m512 clamped = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(kExpMax)), _mm512_set1_ps(kExpMin));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), clamped);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 poly = _mm512_set1_ps(kP0);
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(kP1));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(kP2));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(kP3));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(kP4));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(kP5));
  const __m512 e = _mm512_add_ps(_mm512_fmadd_ps(poly, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __m512 result = _mm512_scalef_ps(e, n);
  const __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpMin), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(below, result, _mm512_setzero_ps());
}

inline __mmask16 tail_mask16(int64_t left) { return static_cast<__mmask16>((1u << left) - 1); }

SWARMT_TARGET_AVX512 void avx512_exp(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, exp16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask16(n - i);
    _mm512_mask_storeu_ps(x + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

SWARMT_TARGET_AVX512 float avx512_exp_shifted_sum(float* x, int64_t n, float shift) {
  const __m512 vshift = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vshift));
    _mm512_storeu_ps(x + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < n) {
    const __mmask16 m = tail_mask16(n - i);
    const __m512 e = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vshift)));
    _mm512_mask_storeu_ps(x + i, m, e);
    sum = _mm512_add_ps(sum, e);
  }
  return _mm512_reduce_add_ps(sum);
}

SWARMT_TARGET_AVX512 float avx512_max(const float* x, int64_t n) {
  __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) best = _mm512_max_ps(best, _mm512_loadu_ps(x + i));
  if (i < n) {
    const __mmask16 m = tail_mask16(n - i);
    best = _mm512_mask_max_ps(best, m, best, _mm512_maskz_loadu_ps(m, x + i));
  }
  return _mm512_reduce_max_ps(best);
}

// ---- AVX2: 8 lanes; 2^n built in the exponent bits, as 2^(n − h) · 2^h with h = n / 2 so that both
// factors are normal floats for every n in [−150, 128] (one factor would overflow at 128 and be
// subnormal, not representable that way, below −126); tails by lane masks.

SWARMT_TARGET_AVX2 inline __m256 pow2(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

SWARMT_TARGET_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 clamped = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(kExpMax)), _mm256_set1_ps(kExpMin));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), clamped);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 poly = _mm256_set1_ps(kP0);
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(kP1));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(kP2));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(kP3));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(kP4));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(kP5));
  const __m256 e = _mm256_add_ps(_mm256_fmadd_ps(poly, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  const __m256 result = _mm256_mul_ps(_mm256_mul_ps(e, pow2(_mm256_sub_epi32(ni, half))), pow2(half));
  const __m256 below = _mm256_cmp_ps(x, _mm256_set1_ps(kExpMin), _CMP_LT_OQ);
  return _mm256_andnot_ps(below, result);
}

// The first `left` of 8 lanes (0 < left < 8) as a mask.
SWARMT_TARGET_AVX2 inline __m256i tail_mask8(int64_t left) {
  alignas(32) static const int32_t kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - left));
}

SWARMT_TARGET_AVX2 inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

SWARMT_TARGET_AVX2 inline float max8(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}

SWARMT_TARGET_AVX2 void avx2_exp(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, exp8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = tail_mask8(n - i);
    _mm256_maskstore_ps(x + i, m, exp8(_mm256_maskload_ps(x + i, m)));
  }
}

SWARMT_TARGET_AVX2 float avx2_exp_shifted_sum(float* x, int64_t n, float shift) {
  const __m256 vshift = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vshift));
    _mm256_storeu_ps(x + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (i < n) {
    const __m256i m = tail_mask8(n - i);
    const __m256 e = _mm256_and_ps(_mm256_castsi256_ps(m), exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), vshift)));
    _mm256_maskstore_ps(x + i, m, e);
    sum = _mm256_add_ps(sum, e);
  }
  return sum8(sum);
}

SWARMT_TARGET_AVX2 float avx2_max(const float* x, int64_t n) {
  const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 best = lowest;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) best = _mm256_max_ps(best, _mm256_loadu_ps(x + i));
  if (i < n) {
    const __m256i m = tail_mask8(n - i);
    best = _mm256_max_ps(best, _mm256_blendv_ps(lowest, _mm256_maskload_ps(x + i, m), _mm256_castsi256_ps(m)));
  }
  return max8(best);
}

#undef SWARMT_TARGET_AVX512
#undef SWARMT_TARGET_AVX2
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // x86

}  // namespace

void exp_inplace(float* x, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (matvec_has_avx512()) return avx512_exp(x, n);
  if (matvec_has_avx2()) return avx2_exp(x, n);
#endif
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

float exp_shifted_sum(float* x, int64_t n, float shift) {
#if defined(__x86_64__) || defined(__i386__)
  if (matvec_has_avx512()) return avx512_exp_shifted_sum(x, n, shift);
  if (matvec_has_avx2()) return avx2_exp_shifted_sum(x, n, shift);
#endif
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}

float max_of(const float* x, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (matvec_has_avx512()) return avx512_max(x, n);
  if (matvec_has_avx2()) return avx2_max(x, n);
#endif
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) best = std::max(best, x[i]);
  return best;
}

}  // namespace swarmt::ops
