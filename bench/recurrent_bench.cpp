// Chunkwise recurrent kernels: mLSTM (H=4, Dqk=128, Dv=256) and Gated DeltaNet (H=4, Dk=Dv=128), B=1,
// forward and forward+backward, over the sequence length N and the chunk size L (args N/L).
//
// Reported per benchmark: wall time per iteration and GFLOP/s (FLOPs from ops/recurrent_flops.h); CPU
// time per iteration, GFLOP/s per CPU-second and that as a percentage of this machine's fp32 GEMM rate
// measured the same way at start-up (context block); and the process's peak RSS. Peak RSS only grows,
// so measure memory against N with one process per N, e.g.
//   for n in 4096 16384 65536; do build/bench/recurrent_bench --benchmark_filter="MLSTM_FwdBwd/$n/64/"; done
// On a shared machine pin to one core (taskset -c 0, OPENBLAS_NUM_THREADS=1) for stable numbers.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "swarmt/core/blas_check.h"
#include "swarmt/core/threads.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/mlstm.h"
#include "swarmt/ops/recurrent_flops.h"

namespace {

using namespace swarmt::ops;

// This machine's fp32 GEMM rate (1024³ through libtorch), per wall second and per second of process CPU
// time, measured at start-up with the same threads as the kernels.
double g_gemm_gflops = 0.0;
double g_gemm_cpu_gflops = 0.0;
constexpr int64_t kHeads = 4;

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void measure_gemm_rates(int64_t n, double min_seconds) {
  at::Tensor a = at::randn({n, n}), b = at::randn({n, n}), c = at::mm(a, b);
  const double flops = 2.0 * n * n * n;
  int iterations = 0;
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  double elapsed = 0.0;
  do {
    at::mm_out(c, a, b);
    ++iterations;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < min_seconds);
  g_gemm_gflops = flops * iterations / elapsed / 1e9;
  g_gemm_cpu_gflops = flops * iterations / (process_cpu_seconds() - cpu_start) / 1e9;
}

// Times `step` once per benchmark iteration and reports: GFLOP/s per wall second and its percentage of
// the GEMM rate; the same per second of process CPU time (robust when other processes share the cores,
// since both sides are measured the same way); and peak RSS.
template <typename Step>
void run_timed(benchmark::State& state, double flops, Step&& step) {
  step();  // warm-up: first-touch allocations, thread pool start
  double cpu_seconds = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    step();
    cpu_seconds += process_cpu_seconds() - cpu_start;
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["cpu_ms"] = 1e3 * cpu_seconds / iterations;
  state.counters["cpu_GFLOP/s"] = flops * iterations / cpu_seconds / 1e9;
  state.counters["cpu_pct_of_gemm"] = 100.0 * flops * iterations / cpu_seconds / 1e9 / g_gemm_cpu_gflops;
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

struct MLSTMBenchInputs {
  at::Tensor q, k, v, igate, fgate, upstream;
};

MLSTMBenchInputs mlstm_inputs(int64_t length, bool requires_grad) {
  const int64_t qk_dim = 128, v_dim = 256;
  MLSTMBenchInputs in;
  in.q = at::randn({1, kHeads, length, qk_dim});
  in.k = at::randn({1, kHeads, length, qk_dim});
  in.v = at::randn({1, kHeads, length, v_dim});
  in.igate = at::randn({1, kHeads, length});
  in.fgate = at::randn({1, kHeads, length}) + 3.0;
  in.upstream = at::randn({1, kHeads, length, v_dim});
  for (at::Tensor* t : {&in.q, &in.k, &in.v, &in.igate, &in.fgate}) t->requires_grad_(requires_grad);
  return in;
}

void MLSTM_Fwd(benchmark::State& state) {
  const int64_t length = state.range(0);
  MLSTMOptions options;
  options.chunk_size = state.range(1);
  MLSTMBenchInputs in = mlstm_inputs(length, false);
  at::NoGradGuard no_grad;
  run_timed(state, mlstm_chunkwise_flops(1, kHeads, length, 128, 256, options.chunk_size).forward, [&] {
    benchmark::DoNotOptimize(mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options).first);
  });
}

void MLSTM_FwdBwd(benchmark::State& state) {
  const int64_t length = state.range(0);
  MLSTMOptions options;
  options.chunk_size = state.range(1);
  MLSTMBenchInputs in = mlstm_inputs(length, true);
  run_timed(state, mlstm_chunkwise_flops(1, kHeads, length, 128, 256, options.chunk_size).total(), [&] {
    at::Tensor h = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options).first;
    h.backward(in.upstream);
    for (at::Tensor* t : {&in.q, &in.k, &in.v, &in.igate, &in.fgate}) t->mutable_grad().reset();
  });
}

struct GatedDeltaBenchInputs {
  at::Tensor q, k, v, beta, g, upstream;
};

GatedDeltaBenchInputs gated_delta_inputs(int64_t length, bool requires_grad) {
  const int64_t dim = 128;
  auto l2 = [](const at::Tensor& x) { return x / at::sqrt((x * x).sum(-1, true) + 1e-6); };
  GatedDeltaBenchInputs in;
  in.q = l2(at::randn({1, kHeads, length, dim}));
  in.k = l2(at::randn({1, kHeads, length, dim}));
  in.v = at::randn({1, kHeads, length, dim});
  in.beta = at::sigmoid(at::randn({1, kHeads, length}));
  in.g = -at::softplus(at::randn({1, kHeads, length})) * 0.1;
  in.upstream = at::randn({1, kHeads, length, dim});
  for (at::Tensor* t : {&in.q, &in.k, &in.v, &in.beta, &in.g}) t->requires_grad_(requires_grad);
  return in;
}

void GDN_Fwd(benchmark::State& state) {
  const int64_t length = state.range(0);
  GatedDeltaOptions options;
  options.chunk_size = state.range(1);
  GatedDeltaBenchInputs in = gated_delta_inputs(length, false);
  at::NoGradGuard no_grad;
  run_timed(state, gated_delta_chunkwise_flops(1, kHeads, length, 128, 128, options.chunk_size).forward, [&] {
    benchmark::DoNotOptimize(gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, options).first);
  });
}

void GDN_FwdBwd(benchmark::State& state) {
  const int64_t length = state.range(0);
  GatedDeltaOptions options;
  options.chunk_size = state.range(1);
  GatedDeltaBenchInputs in = gated_delta_inputs(length, true);
  run_timed(state, gated_delta_chunkwise_flops(1, kHeads, length, 128, 128, options.chunk_size).total(), [&] {
    at::Tensor o = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, options).first;
    o.backward(in.upstream);
    for (at::Tensor* t : {&in.q, &in.k, &in.v, &in.beta, &in.g}) t->mutable_grad().reset();
  });
}

// Scaling in N at the default chunk, plus a chunk-size sweep at N = 16384.
void sequence_and_chunk_args(benchmark::internal::Benchmark* b) {
  for (int64_t length : {1024, 4096, 16384, 65536}) b->Args({length, 64});
  for (int64_t chunk : {32, 128, 256}) b->Args({16384, chunk});
}

void FP32_Gemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  at::Tensor a = at::randn({n, n}), b = at::randn({n, n}), c = at::mm(a, b);
  for (auto _ : state) at::mm_out(c, a, b);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(FP32_Gemm)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(MLSTM_Fwd)->Apply(sequence_and_chunk_args)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(MLSTM_FwdBwd)->Apply(sequence_and_chunk_args)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GDN_Fwd)->Apply(sequence_and_chunk_args)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GDN_FwdBwd)->Apply(sequence_and_chunk_args)->UseManualTime()->Unit(benchmark::kMillisecond);

// glibc returns every freed block above the mmap threshold (at most 32 MiB by default) to the kernel, so
// each large tensor of each iteration is page-faulted in afresh; on this kind of (virtualised) machine
// that cost dominated the kernels at N >= 16384 (e.g. mLSTM fwd+bwd at 16384: 13.9 s instead of 2.0 s).
// Keeping freed memory in the heap makes the steady state allocation-free, as a caching allocator would.
// SWARMT_BENCH_SYSTEM_MALLOC=1 measures the default behaviour instead.
void keep_freed_memory_in_heap() {
#if defined(__GLIBC__)
  const char* env = std::getenv("SWARMT_BENCH_SYSTEM_MALLOC");
  if (env && std::string(env) == "1") return;
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // blocks up to 1 GiB come from the heap...
  mallopt(M_TRIM_THRESHOLD, -1);        // ...and the heap is never given back (-1: no trimming)
#endif
}

int main(int argc, char** argv) {
  swarmt::ensure_best_blas_kernels(argc, argv);
  keep_freed_memory_in_heap();
  swarmt::configure_threads(0);
  measure_gemm_rates(1024, 1.0);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("fp32_gemm_gflops_1024", std::to_string(g_gemm_gflops));
  benchmark::AddCustomContext("fp32_gemm_cpu_gflops_1024", std::to_string(g_gemm_cpu_gflops));
  benchmark::AddCustomContext("intra_op_threads", std::to_string(at::get_num_threads()));
  const char* system_malloc = std::getenv("SWARMT_BENCH_SYSTEM_MALLOC");
  benchmark::AddCustomContext("freed_memory_kept_in_heap", system_malloc && std::string(system_malloc) == "1" ? "no" : "yes");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
