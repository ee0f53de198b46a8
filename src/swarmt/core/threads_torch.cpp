#include "swarmt/core/threads.h"

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

void configure_threads(int threads) {
  int n = threads > 0 ? threads : available_cores();
  at::set_num_threads(n);
  // The inter-op pool can be sized only before its first use; ignore the error if it is too late.
  try {
    at::set_num_interop_threads(1);
  } catch (const c10::Error&) {
  }
}

}  // namespace swarmt
