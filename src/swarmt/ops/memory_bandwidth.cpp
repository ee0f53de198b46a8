#include "swarmt/ops/memory_bandwidth.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace swarmt {

double measure_read_bandwidth(int64_t bytes, int passes) {
  const int64_t n = std::max<int64_t>(bytes / 4, 1 << 16) / 64 * 64;
  at::Tensor buffer = at::ones({n}, at::kFloat);  // written once: every page resident before timing
  const float* p = buffer.data_ptr<float>();
  double best = 0.0;
  std::atomic<int64_t> sink{0};
  for (int pass = 0; pass < std::max(passes, 1); ++pass) {
    const auto start = std::chrono::steady_clock::now();
    at::parallel_for(0, n / 64, 1, [&](int64_t b0, int64_t b1) {
      float part[16] = {};  // independent partial sums: the loop vectorises and streams the buffer
      for (int64_t i = b0 * 64; i < b1 * 64; i += 16)
        for (int j = 0; j < 16; ++j) part[j] += p[i + j];
      float total = 0;
      for (float x : part) total += x;
      sink += static_cast<int64_t>(total);  // the sums are used, so the reads cannot be dropped
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(n) * 4.0 / seconds / 1e9);
  }
  return sink.load() >= 0 ? best : 0.0;
}

}  // namespace swarmt
