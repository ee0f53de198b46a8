// The machine's arithmetic peaks, measured: the yardsticks kernel rates are reported against
// (`swarmt bench peak`, `swarmt bench kernels`). Machines differ from one run to the next, so a kernel's
// rate means something only as a fraction of these, measured in the same run.
#pragma once

#include <string>

namespace swarmt::ops {

struct ComputePeak {
  int threads = 0;
  std::string isa;                // "avx512-bf16", "avx512", "avx2" or "portable": the instructions timed
  double fp32_fma_gflops = 0;     // fused multiply-adds on registers, 2 FLOPs per lane
  double bf16_dot_gflops = 0;     // AVX-512 BF16 dot products (2 FLOPs per bf16 pair); 0 without them
};

// Each of `threads` threads runs independent chains of register-only FMAs (and bf16 dot products where
// the CPU has them) at the widest vectors it has, for about `seconds` in all; the rates are the FLOPs
// of all threads over the wall time. Nothing is read from memory, so this is the arithmetic ceiling.
ComputePeak measure_compute_peak(int threads, double seconds = 0.5);

}  // namespace swarmt::ops
