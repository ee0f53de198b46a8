// Sliding-window vs full causal attention (blocked kernel), forward and forward+backward, fp32,
// B = 1, H = 8, D = 64. GFLOP/s counts the needed FLOPs only (ops/flops.h), so it is directly
// comparable with the machine's GEMM rate printed in the context header.
//
//   build/bench/attention_bench                                   the N x {SWA w=128, full} matrix
//   build/bench/attention_bench --benchmark_filter=BlockSweep     block_size tuning at N = 4096
// On shared or oversubscribed machines run with OMP_WAIT_POLICY=PASSIVE: spinning OpenMP workers
// otherwise starve OpenBLAS's threads and the wall time measures the scheduler, not the kernel.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "swarmt/core/blas_check.h"
#include "swarmt/core/threads.h"
#include "swarmt/ops/attention.h"
#include "swarmt/ops/flops.h"
#include "swarmt/ops/gemm_rate.h"

namespace {

constexpr int64_t kBatch = 1, kHeads = 8, kHeadDim = 64;

// range(0) = N, range(1) = window (0: full), range(2) = block_size, range(3) = 1 with backward.
void attention(benchmark::State& state) {
  const int64_t n = state.range(0), window = state.range(1), block = state.range(2);
  const bool backward = state.range(3) != 0;
  swarmt::ops::AttentionOptions options;
  options.window = window;
  options.block_size = block;
  auto q = at::randn({kBatch, kHeads, n, kHeadDim}).requires_grad_(backward);
  auto k = at::randn({kBatch, kHeads, n, kHeadDim}).requires_grad_(backward);
  auto v = at::randn({kBatch, kHeads, n, kHeadDim}).requires_grad_(backward);
  auto upstream = at::randn({kBatch, kHeads, n, kHeadDim});
  for (auto _ : state) {
    if (backward) {
      auto out = swarmt::ops::causal_attention(q, k, v, options);
      auto grads = torch::autograd::grad({out}, {q, k, v}, {upstream});
      benchmark::DoNotOptimize(grads[0].data_ptr());
    } else {
      at::NoGradGuard no_grad;
      auto out = swarmt::ops::causal_attention(q, k, v, options);
      benchmark::DoNotOptimize(out.data_ptr());
    }
  }
  double flops = swarmt::ops::attention_forward_flops(kBatch, kHeads, n, n, kHeadDim, window);
  if (backward) flops += swarmt::ops::attention_backward_flops(kBatch, kHeads, n, n, kHeadDim, window);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_case(const std::string& name, int64_t n, int64_t window, int64_t block, bool backward) {
  benchmark::RegisterBenchmark(name.c_str(), attention)
      ->Args({n, window, block, backward ? 1 : 0})
      ->ArgNames({"N", "window", "block", "bwd"})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  swarmt::ensure_best_blas_kernels(argc, argv);  // may restart once with the right OpenBLAS kernels
  swarmt::configure_threads(0);
  benchmark::Initialize(&argc, argv);
  const int64_t default_block = swarmt::ops::AttentionOptions{}.block_size;
  benchmark::AddCustomContext("fp32_gemm_gflops", std::to_string(swarmt::measure_gemm_gflops(1024, 0.5)));
  benchmark::AddCustomContext("intra_op_threads", std::to_string(at::get_num_threads()));
  for (bool backward : {false, true}) {
    const std::string pass = backward ? "FwdBwd" : "Fwd";
    for (int64_t n : {1024, 4096, 8192, 16384}) register_case("SWA128/" + pass, n, 128, default_block, backward);
    for (int64_t n : {1024, 4096, 16384}) register_case("Full/" + pass, n, 0, default_block, backward);
  }
  for (int64_t block : {16, 32, 64, 128, 256}) {
    register_case("BlockSweep/SWA128/FwdBwd", 4096, 128, block, true);
    register_case("BlockSweep/SWA512/FwdBwd", 4096, 512, block, true);
    register_case("BlockSweep/Full/FwdBwd", 4096, 0, block, true);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
