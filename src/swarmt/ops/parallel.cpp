#include "swarmt/ops/parallel.h"

#include <mutex>
#include <set>
#include <thread>

namespace swarmt::ops {

int parallel_for_threads() {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // One task per thread: ATen's OpenMP loop gives each thread its own chunk of the range.
  parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  return static_cast<int>(threads.size());
}

}  // namespace swarmt::ops
