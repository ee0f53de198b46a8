// `swarmt bench memory`: the bound of decoding and how close the decode kernels come to it.
//
//   swarmt bench memory [--mib M] [--isa LEVEL] [--json]
// Memory read bandwidth (GB/s, ATen's intra-op threads), and the rate at which the matrix-vector kernels
// of decoding (ops/matvec.h) read an M MiB weight matrix of 960 columns, in fp32 and bf16: a model of W
// bytes of weights cannot decode faster than bandwidth / W tokens per second.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "swarmt/cli/bench_command.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/ops/matvec.h"
#include "swarmt/ops/memory_bandwidth.h"

namespace swarmt::cli {
namespace {

struct BenchMemoryOptions {
  int mib = 1024;
  bool json = false;
  std::string isa;  // empty: the CPU's best kernel level
};

// GB/s of matvec_linear over a weight matrix of about `bytes` bytes: best of 5 after one warm-up.
double matvec_rate(int64_t bytes, at::ScalarType dtype) {
  at::NoGradGuard no_grad;
  const int64_t in = 960, out = std::max<int64_t>(bytes / (in * at::elementSize(dtype)), 4);
  at::Tensor w = at::randn({out, in}).to(dtype);
  at::Tensor x = at::randn({1, in}).to(dtype);
  ops::matvec_linear(x, w);
  double best = 0.0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    ops::matvec_linear(x, w);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(w.numel() * w.element_size()) / seconds / 1e9);
  }
  return best;
}

int run_bench_memory(const BenchMemoryOptions& o) {
  SWARMT_CHECK_INPUT(o.mib >= 64 && o.mib <= 65536, "--mib must be 64..65536 (a buffer far larger than the caches), got ",
                     o.mib);
  SWARMT_CHECK_INPUT(o.isa.empty() || ops::set_matvec_isa(o.isa), "--isa: '", o.isa,
                     "' is not a kernel level this CPU has (avx512-bf16, avx512, avx2, portable; best here: ",
                     ops::matvec_isa(), ")");
  const int64_t bytes = int64_t(o.mib) << 20;
  Json j = {{"threads", at::get_num_threads()},
            {"mib", o.mib},
            {"read_gb_s", measure_read_bandwidth(bytes)},
            {"matvec_isa", ops::matvec_isa()},
            {"matvec_fp32_gb_s", matvec_rate(bytes, at::kFloat)},
            {"matvec_bf16_gb_s", matvec_rate(bytes, at::kBFloat16)}};
  if (o.json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "threads          " << j["threads"].get<int>() << "\n"
            << "read             " << j["read_gb_s"].get<double>() << " GB/s\n"
            << "matvec (" << j["matvec_isa"].get<std::string>() << ")\n"
            << "  fp32 weights   " << j["matvec_fp32_gb_s"].get<double>() << " GB/s\n"
            << "  bf16 weights   " << j["matvec_bf16_gb_s"].get<double>() << " GB/s\n";
  return 0;
}

}  // namespace

void register_bench_memory(CLI::App& bench, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<BenchMemoryOptions>();
  CLI::App* cmd = bench.add_subcommand("memory", "Memory read bandwidth and the decode kernels' rate (GB/s)");
  cmd->add_option("--mib", opts->mib, "Buffer size in MiB")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  cmd->add_option("--isa", opts->isa, "Kernel level of the matvec rates (default: the CPU's best)");
  commands.push_back({cmd, [opts]() { return run_bench_memory(*opts); }});
}

}  // namespace swarmt::cli
