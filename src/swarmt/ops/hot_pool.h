// A parallel loop for short kernels called many times a second: the decode step's matrix-vector
// products and its attention over the KV cache.
//
// Why not at::parallel_for: decoding one token calls ~200 such kernels of 20-200 µs each. Waking
// sleeping OpenMP workers for each costs about what the second thread saves (docs/performance.md), and
// OpenMP workers that spin (OMP_WAIT_POLICY=ACTIVE) take the cores from the BLAS threads of the prompt's
// GEMMs. The workers here spin only for a short while after their last task (SWARMT_SPIN_US, default
// 1000 µs), so they stay hot across one decode step and the next, then block on a condition variable:
// during a prefill or a training step, which call no hot kernel, they sleep.
//
// The loop runs on at::get_num_threads() threads: the caller and that many minus one workers. Tasks run
// without ATen's thread-local state (grad mode and the like), so they must be raw loops over buffers,
// never ATen ops. A call made while another is running (from a task, or from a second thread) runs
// on its own thread alone.
#pragma once

#include <cstdint>
#include <functional>

namespace swarmt::ops {

// Calls f(b, e) on disjoint ranges covering [begin, end), each at least `grain` long (but the last),
// and returns when all have run. An exception from f is rethrown here (the first one).
void hot_parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

// The number of threads hot_parallel_for would use now (the caller included).
int hot_pool_threads();

}  // namespace swarmt::ops
