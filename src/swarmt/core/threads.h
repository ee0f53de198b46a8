// Thread configuration for libtorch and OpenBLAS.
//
// libtorch's intra-op pool defaulted to 1 thread on our machines; swarmt sets it to --threads, else to
// OMP_NUM_THREADS (as PyTorch does), else to the number of cores this process may run on (sched_getaffinity).
#pragma once

#include <string>

namespace swarmt {

// Cores this process may run on.
int available_cores();

// Most threads --threads accepts: kThreadsPerCore per available core. Beyond a few per core threads only
// contend for the cores (--threads 1000 took 52 s for what one thread did in 0.8 s), and 100000 would
// start that many OS threads.
constexpr int kThreadsPerCore = 4;
int max_thread_count();

// Why `text` is not a thread count in 1..max_thread_count() (the whole text an integer), or "" if it is
// one: the one rule of --threads and OMP_NUM_THREADS.
std::string thread_count_problem(const std::string& text);

// The thread count of a command without --threads: OMP_NUM_THREADS when set (its first entry: OpenMP
// allows a comma list, one count per nesting level), else available_cores(). A value that is not a count
// in 1..max_thread_count() is an input error naming the variable; an empty one counts as unset.
int default_thread_count();
// The same, from the variable's text (nullptr: unset): the parsing, testable without the environment.
int thread_count_from_env(const char* omp_num_threads);
// Whether OMP_NUM_THREADS chooses the thread count (set and not empty; an empty one counts as unset).
bool thread_count_set_by_env();

// Sets libtorch's intra-op threads (and inter-op threads, once) to `threads` (<= 0: default_thread_count()).
void configure_threads(int threads);

}  // namespace swarmt
