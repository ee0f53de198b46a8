// glibc malloc settings for tensor workloads.
//
// By default glibc serves every allocation above 128 KiB-32 MiB (its dynamic mmap threshold) with a
// fresh mmap and returns it with munmap, so every large temporary tensor is page-faulted in again; on
// our VMs a 4 KiB fault costs 15-20 µs and this dominated the recurrent kernels (mLSTM fwd+bwd at
// N = 16384: 13.9 s instead of 2.0 s). Raising the mmap threshold and disabling trimming keeps freed
// blocks in the heap for reuse. Peak RSS is unchanged; memory that was freed is simply kept for reuse
// instead of being returned to the kernel between steps.
#pragma once

namespace swarmt {

// Sets M_MMAP_THRESHOLD to 1 GiB and disables trimming, unless SWARMT_SYSTEM_MALLOC=1.
void tune_malloc_for_tensors();

}  // namespace swarmt
