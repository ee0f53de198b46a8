#include "swarmt/ops/compute_peak.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "swarmt/core/error.h"
#include "swarmt/ops/matvec.h"

namespace swarmt::ops {
namespace {

// Twelve independent accumulators: enough chains to keep two FMA ports busy through a 4-cycle latency.
constexpr int kChains = 12;
std::atomic<float> sink{0};  // keeps the loops' results alive

#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 flags the intrinsics headers themselves
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

__attribute__((target("avx512f"))) double fma_avx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * static_cast<float>(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  sink.store(_mm512_reduce_add_ps(total), std::memory_order_relaxed);
  return 2.0 * 16 * kChains * static_cast<double>(iterations);
}

__attribute__((target("avx512bf16,avx512f,avx512bw"))) double dot_bf16(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * static_cast<float>(c));
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3380);  // 1, ~6e-8
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  sink.store(_mm512_reduce_add_ps(total), std::memory_order_relaxed);
  return 2.0 * 32 * kChains * static_cast<double>(iterations);
}

__attribute__((target("avx2,fma"))) double fma_avx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * static_cast<float>(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  __m256 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm256_add_ps(total, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  sink.store(lanes[0] + lanes[7], std::memory_order_relaxed);
  return 2.0 * 8 * kChains * static_cast<double>(iterations);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // x86

double fma_portable(int64_t iterations) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = 0.001f * static_cast<float>(c);
  for (int64_t i = 0; i < iterations; ++i)
    for (float& x : acc) x = x * 0.999999f + 1e-7f;
  float total = 0;
  for (float x : acc) total += x;
  sink.store(total, std::memory_order_relaxed);
  return 2.0 * kChains * static_cast<double>(iterations);
}

// FLOPs per second of `loop` on `threads` threads started together: the sum of each thread's own rate,
// so that a thread the machine descheduled for a moment (a shared host) lowers only its own part.
template <typename Loop>
double rate(Loop loop, int threads, int64_t iterations) {
  std::vector<double> rates(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const auto start = std::chrono::steady_clock::now();
      const double flops = loop(iterations);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rates[t] = flops / std::max(seconds, 1e-9);
    });
  for (auto& th : pool) th.join();
  double total = 0;
  for (double r : rates) total += r;
  return total;
}

// Best rate of a few runs sized to take about `seconds` together (the first, short run calibrates).
template <typename Loop>
double peak_gflops(Loop loop, int threads, double seconds) {
  const int64_t probe = 1 << 16;
  const double probe_rate = rate(loop, threads, probe);
  const double flops_per_iteration = loop(1);
  const int64_t iterations = std::max<int64_t>(
      probe, static_cast<int64_t>(seconds / 5 * probe_rate / threads / std::max(flops_per_iteration, 1.0)));
  double best = probe_rate;
  for (int run = 0; run < 5; ++run) best = std::max(best, rate(loop, threads, iterations));
  return best / 1e9;
}

}  // namespace

ComputePeak measure_compute_peak(int threads, double seconds) {
  SWARMT_CHECK_INPUT(threads >= 1 && threads <= 1024, "compute peak: threads must be 1..1024, got ", threads);
  SWARMT_CHECK_INPUT(seconds > 0 && seconds <= 600, "compute peak: seconds must be in (0, 600], got ", seconds);
  ComputePeak peak;
  peak.threads = threads;
  peak.isa = matvec_isa();
#if defined(__x86_64__) || defined(__i386__)
  if (peak.isa == "avx512-bf16" || peak.isa == "avx512") {
    peak.fp32_fma_gflops = peak_gflops(fma_avx512, threads, seconds / 2);
    if (peak.isa == "avx512-bf16") peak.bf16_dot_gflops = peak_gflops(dot_bf16, threads, seconds / 2);
    return peak;
  }
  if (peak.isa == "avx2") {
    peak.fp32_fma_gflops = peak_gflops(fma_avx2, threads, seconds);
    return peak;
  }
#endif
  peak.fp32_fma_gflops = peak_gflops(fma_portable, threads, seconds);
  return peak;
}

}  // namespace swarmt::ops
