// `swarmt info`: what is in a checkpoint, and what this machine runs.
//   swarmt info --system [--json]       CPU features, BLAS library and core, threads, libtorch, GEMM rate
#include <iostream>
#include <memory>

#include "swarmt/cli/command.h"
#include "swarmt/core/blas_check.h"
#include "swarmt/core/json.h"
#include "swarmt/core/threads.h"
#include "swarmt/ops/gemm_rate.h"

namespace swarmt::cli {
namespace {

struct InfoOptions {
  std::string path;
  bool system = false;
  bool json = false;
};

int run_system_info(const InfoOptions& opts) {
  CpuFeatures cpu = detect_cpu_features();
  BlasReport blas = current_blas_report();
  double gemm = measure_gemm_gflops(/*n=*/1024, /*min_seconds=*/0.3);
  Json out = {
      {"swarmt_version", SWARMT_VERSION},
      {"torch_version", TORCH_VERSION},
      {"cpu_features", cpu.summary()},
      {"cores", available_cores()},
      {"intra_op_threads", at::get_num_threads()},
      {"blas_library", blas.library},
      {"blas_is_openblas", blas.is_openblas},
      {"openblas_core", blas.corename},
      {"openblas_core_switched_from", blas.original_core},
      {"openblas_core_switch_rejected", blas.switch_rejected},
      {"openblas_coretype_env", blas.coretype_env},
      {"gemm_check_rel_error", verify_blas_gemm()},
      {"fp32_gemm_gflops", gemm},
      {"cuda_available", torch::cuda::is_available()},
  };
  if (opts.json) {
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << "swarmt        " << SWARMT_VERSION << " (libtorch " << TORCH_VERSION << ")\n"
            << "cpu           " << cpu.summary() << "\n"
            << "cores         " << available_cores() << " (libtorch intra-op threads: " << at::get_num_threads()
            << ")\n"
            << "blas          " << blas.describe() << "\n"
            << "fp32 gemm     " << static_cast<int>(gemm) << " GFLOP/s (1024x1024, measured now)\n"
            << "cuda          " << (torch::cuda::is_available() ? "available" : "not available") << std::endl;
  return 0;
}

}  // namespace

void register_info(CLI::App& app, const GlobalOptions& globals, CommandList& commands) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a safetensors file / model directory, or this machine");
  cmd->add_option("path", opts->path, "A .safetensors file or a model directory");
  cmd->add_flag("--system", opts->system, "Describe the machine: CPU, BLAS kernels, threads, GEMM rate");
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  commands.push_back({cmd, [opts]() -> int {
                        if (opts->system || opts->path.empty()) return run_system_info(*opts);
                        return run_system_info(*opts);
                      }});
}

}  // namespace swarmt::cli
