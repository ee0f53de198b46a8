#include "swarmt/ops/gemm_rate.h"

#include <chrono>

namespace swarmt {

double measure_gemm_gflops(int n, double min_seconds) {
  at::NoGradGuard no_grad;
  auto a = at::randn({n, n});
  auto b = at::randn({n, n});
  auto c = at::mm(a, b);  // warm-up: first call allocates and spins up the BLAS threads
  int iterations = 0;
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0.0;
  do {
    at::mm_out(c, a, b);
    ++iterations;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < min_seconds);
  return 2.0 * n * static_cast<double>(n) * n * iterations / elapsed / 1e9;
}

}  // namespace swarmt
