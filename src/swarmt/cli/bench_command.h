// `swarmt bench`: the benchmark command group. Each benchmark is one subcommand in its own file, added to
// the group by a register_bench_<name> function declared here and called from register_bench
// (bench_command.cpp). To add one: declare it below, define it in its file, add one call.
#pragma once

#include "swarmt/cli/command.h"

namespace swarmt::cli {

// `swarmt bench gemm`: the machine's fp32 GEMM rate, and a reproducible product for comparing BLAS kernels.
void register_bench_gemm(CLI::App& bench, const GlobalOptions& globals, CommandList& commands);

// `swarmt bench memory`: memory read bandwidth and the decode kernels' rate.
void register_bench_memory(CLI::App& bench, const GlobalOptions& globals, CommandList& commands);

// `swarmt bench peak`: the machine's FMA / bf16 dot / GEMM peaks and read bandwidth, measured now.
void register_bench_peak(CLI::App& bench, const GlobalOptions& globals, CommandList& commands);

// `swarmt bench kernels`: sequence-mixing kernels (SWA, full attention, mLSTM, GDN) against N.
void register_bench_kernels(CLI::App& bench, const GlobalOptions& globals, CommandList& commands);

}  // namespace swarmt::cli
