#include "swarmt/ops/memory_bandwidth.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace swarmt {
namespace {

// Sum of p[0, n) read as four streams at once (its quarters, side by side), 16 partial sums each. One
// stream per thread leaves the memory system idle between the hardware prefetcher's requests; the decode
// kernels read four weight rows at once, and a yardstick slower than the kernels it bounds would say
// nothing.
float stream_sum(const float* p, int64_t n) {
  constexpr int kStreams = 4;
  const int64_t quarter = n / kStreams / 16 * 16;
  float part[kStreams][16] = {};
  for (int64_t i = 0; i < quarter; i += 16)
    for (int s = 0; s < kStreams; ++s)
      for (int j = 0; j < 16; ++j) part[s][j] += p[s * quarter + i + j];
  float total = 0;
  for (int64_t i = kStreams * quarter; i < n; ++i) total += p[i];
  for (const auto& stream : part)
    for (float x : stream) total += x;
  return total;
}

}  // namespace

double measure_read_bandwidth(int64_t bytes, int passes) {
  const int64_t n = std::max<int64_t>(bytes / 4, 1 << 16) / 64 * 64;
  at::Tensor buffer = at::ones({n}, at::kFloat);  // written once: every page resident before timing
  const float* p = buffer.data_ptr<float>();
  // Plain threads, as many as ATen's intra-op threads: the machine's bandwidth, whatever threading the
  // kernels themselves were built with.
  const int threads = std::max(1, at::get_num_threads());
  const int64_t share = n / threads / 16 * 16;
  std::vector<float> sums(static_cast<size_t>(threads));
  double best = 0.0;
  for (int pass = 0; pass < std::max(passes, 1); ++pass) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      const int64_t begin = t * share, count = t + 1 == threads ? n - begin : share;
      workers.emplace_back([&sums, p, t, begin, count] { sums[t] = stream_sum(p + begin, count); });
    }
    for (auto& w : workers) w.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(n) * 4.0 / seconds / 1e9);
  }
  float total = 0;
  for (float s : sums) total += s;
  return total > 0 ? best : 0.0;  // the sums are used, so the reads cannot be dropped
}

}  // namespace swarmt
