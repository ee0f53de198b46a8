// Thread configuration for libtorch and OpenBLAS.
//
// libtorch's intra-op pool defaulted to 1 thread on our machines; swarmt sets it to the number of cores
// this process may run on (sched_getaffinity), or to --threads.
#pragma once

namespace swarmt {

// Cores this process may run on.
int available_cores();

// Sets libtorch's intra-op threads (and inter-op threads, once) to `threads` (<= 0: available_cores()).
void configure_threads(int threads);

}  // namespace swarmt
