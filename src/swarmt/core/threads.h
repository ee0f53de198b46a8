// Thread configuration for libtorch and OpenBLAS.
//
// libtorch's intra-op pool defaulted to 1 thread on our machines; swarmt sets it to the number of cores
// this process may run on (sched_getaffinity), or to --threads.
#pragma once

namespace swarmt {

// Cores this process may run on.
int available_cores();

// Most threads --threads accepts: kThreadsPerCore per available core. Beyond a few per core threads only
// contend for the cores (--threads 1000 took 52 s for what one thread did in 0.8 s), and 100000 would
// start that many OS threads.
constexpr int kThreadsPerCore = 4;
int max_thread_count();

// Sets libtorch's intra-op threads (and inter-op threads, once) to `threads` (<= 0: available_cores()).
void configure_threads(int threads);

}  // namespace swarmt
