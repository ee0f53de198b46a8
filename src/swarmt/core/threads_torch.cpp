#include "swarmt/core/threads.h"

#include <dlfcn.h>
#include <sched.h>

#include <thread>

namespace swarmt {

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

int max_thread_count() { return kThreadsPerCore * available_cores(); }

namespace {

// OpenBLAS keeps its own thread pool (as many threads as cores), which at::set_num_threads does not
// size. Left alone, two data-parallel workers with one thread each still run two GEMM threads each on
// two cores. The symbol is looked up at run time: libtorch may use another BLAS, or none.
void set_blas_threads(int n) {
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(n);
}

}  // namespace

void configure_threads(int threads) {
  int n = threads > 0 ? threads : available_cores();
  at::set_num_threads(n);
  set_blas_threads(n);
  // The inter-op pool can be sized only before its first use; ignore the error if it is too late.
  try {
    at::set_num_interop_threads(1);
  } catch (const c10::Error&) {
  }
}

}  // namespace swarmt
