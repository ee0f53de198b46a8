// `swarmt bench peak`: the machine's ceilings, measured now, that every kernel rate is a fraction of.
//
//   swarmt bench peak [--seconds S] [--json]
// fp32 FMA peak and AVX-512 BF16 dot-product peak (register-only loops on ATen's intra-op thread count,
// ops/compute_peak.h), the fp32 GEMM rate of the BLAS libtorch calls (2048³), and the memory read
// bandwidth (1 GiB). Machines differ from one run to the next: compare kernels with these numbers from
// the same run, never with another day's.
#include <iostream>
#include <memory>

#include "swarmt/cli/bench_command.h"
#include "swarmt/cli/cli_util.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/ops/compute_peak.h"
#include "swarmt/ops/gemm_rate.h"
#include "swarmt/ops/memory_bandwidth.h"
#include "swarmt/report/markdown_table.h"

namespace swarmt::cli {
namespace {

struct BenchPeakOptions {
  double seconds = 1.0;
  bool json = false;
};

int run_bench_peak(const BenchPeakOptions& o) {
  SWARMT_CHECK_INPUT(o.seconds > 0 && o.seconds <= 600, "--seconds must be in (0, 600], got ", o.seconds);
  const ops::ComputePeak peak = ops::measure_compute_peak(at::get_num_threads(), o.seconds);
  Json j = {{"threads", peak.threads},
            {"isa", peak.isa},
            {"fp32_fma_gflops", peak.fp32_fma_gflops},
            {"bf16_dot_gflops", peak.bf16_dot_gflops},
            {"fp32_gemm_gflops", measure_gemm_gflops(2048, o.seconds)},
            {"read_gb_s", measure_read_bandwidth()}};
  if (o.json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "threads            " << peak.threads << " (" << peak.isa << ")\n"
            << "fp32 FMA peak      " << format_fixed(peak.fp32_fma_gflops, 1) << " GFLOP/s\n"
            << "bf16 dot peak      "
            << (peak.bf16_dot_gflops > 0 ? format_fixed(peak.bf16_dot_gflops, 1) + " GFLOP/s" : "- (no AVX-512 BF16)")
            << "\n"
            << "fp32 GEMM          " << format_fixed(j["fp32_gemm_gflops"].get<double>(), 1) << " GFLOP/s\n"
            << "memory read        " << format_fixed(j["read_gb_s"].get<double>(), 1) << " GB/s\n";
  return 0;
}

}  // namespace

void register_bench_peak(CLI::App& bench, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<BenchPeakOptions>();
  CLI::App* cmd = bench.add_subcommand("peak", "The machine's FMA, bf16 dot and GEMM peaks and read bandwidth, now");
  cmd->add_option("--seconds", opts->seconds, "Time per measurement")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  commands.push_back({cmd, [opts]() { return run_bench_peak(*opts); }});
}

}  // namespace swarmt::cli
