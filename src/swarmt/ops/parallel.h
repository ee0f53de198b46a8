// at::parallel_for for swarmt's kernels, with the caller's thread-local state in every task.
//
// OpenMP worker threads do not inherit ATen's thread-local state: grad mode, inference mode, autocast,
// dispatch-key exclusions. A kernel that runs ATen ops inside its tasks (the blocked attention does)
// would record autograd graphs, or refuse out= ops, on the workers while the caller had turned grad off;
// each task here runs under the state of the thread that called parallel_for.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>

#include <cstdint>

namespace swarmt::ops {

template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  const at::ThreadLocalState state;
  at::parallel_for(begin, end, grain_size, [&](int64_t b, int64_t e) {
    at::ThreadLocalStateGuard guard(state);
    f(b, e);
  });
}

// The threads parallel_for spreads its tasks over, counted by running one task per intra-op thread and
// collecting their thread ids: 1 in a build without OpenMP (SWARMT_OPENMP), whose parallel_for is serial.
int parallel_for_threads();

}  // namespace swarmt::ops
