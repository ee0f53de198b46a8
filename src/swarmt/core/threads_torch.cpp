#include "swarmt/core/threads.h"

#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>
#include <thread>

#include "swarmt/core/error.h"

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

std::string thread_count_problem(const std::string& text) {
  const int most = max_thread_count();
  long long n = 0;
  size_t used = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used > 0 && used == text.size() && n >= 1 && n <= most) return "";
  return "'" + text + "' is not a thread count in 1.." + std::to_string(most) + " (" + std::to_string(kThreadsPerCore) +
         " per core of the " + std::to_string(available_cores()) + " this process may use)";
}

namespace {
bool chooses_count(const char* omp_num_threads) { return omp_num_threads != nullptr && *omp_num_threads != '\0'; }
}  // namespace

bool thread_count_set_by_env() { return chooses_count(std::getenv("OMP_NUM_THREADS")); }

int thread_count_from_env(const char* omp_num_threads) {
  if (!chooses_count(omp_num_threads)) return available_cores();
  const std::string text(omp_num_threads);
  const std::string first = text.substr(0, text.find(','));  // OpenMP's list: one count per nesting level
  const std::string problem = thread_count_problem(first);
  SWARMT_CHECK_INPUT(problem.empty(), "environment variable OMP_NUM_THREADS: ", problem,
                     "; unset it or pass --threads");
  return std::stoi(first);
}

int default_thread_count() { return thread_count_from_env(std::getenv("OMP_NUM_THREADS")); }

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
  int n = threads > 0 ? threads : default_thread_count();
  at::set_num_threads(n);
  set_blas_threads(n);
  // The inter-op pool can be sized only before its first use; ignore the error if it is too late.
  try {
    at::set_num_interop_threads(1);
  } catch (const c10::Error&) {
  }
}

}  // namespace swarmt
