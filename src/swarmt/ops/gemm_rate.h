// The machine's measured fp32 GEMM rate, the yardstick every benchmark reports against.
#pragma once

namespace swarmt {

// GFLOP/s of an n x n x n fp32 matmul through libtorch (and so the BLAS it calls), timed for at least
// `min_seconds` after one warm-up.
double measure_gemm_gflops(int n = 2048, double min_seconds = 1.0);

}  // namespace swarmt
