#include "swarmt/ops/hot_pool.h"

#include <ATen/Parallel.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace swarmt::ops {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

std::chrono::microseconds spin_window() {
  static const std::chrono::microseconds window = [] {
    const char* s = std::getenv("SWARMT_SPIN_US");
    long us = 1000;
    if (s != nullptr && *s != '\0') {
      char* end = nullptr;
      const long v = std::strtol(s, &end, 10);
      if (end != s && *end == '\0' && v >= 0 && v <= 1000000)
        us = v;
      else  // an environment variable cannot fail a run from deep inside a kernel: say so once
        std::fprintf(stderr, "swarmt: SWARMT_SPIN_US='%s' is not a number of microseconds in 0..1000000; using 1000\n", s);
    }
    return std::chrono::microseconds(us);
  }();
  return window;
}

// One job at a time. `claim_` packs the job's generation (high 32 bits) with the index of the next
// unclaimed chunk (low 32 bits), so a worker that wakes late can never take a chunk of a later job with
// the function of an earlier one: its compare-exchange fails once the generation has moved on.
class HotPool {
 public:
  explicit HotPool(int workers) {
    threads_.reserve(static_cast<size_t>(workers));
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }

  ~HotPool() {
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  int workers() const { return static_cast<int>(threads_.size()); }

  // Chunk i is [bounds[i], bounds[i + 1]); bounds stays alive until run returns.
  void run(const int64_t* bounds, int64_t chunks, const std::function<void(int64_t, int64_t)>& f) {
    bounds_.store(bounds, std::memory_order_relaxed);
    chunks_.store(chunks, std::memory_order_relaxed);
    f_.store(&f, std::memory_order_relaxed);
    error_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    generation_ = (generation_ + 1) & 0xffffffffu;
    claim_.store(generation_ << 32);  // seq_cst: pairs with a sleeping worker's count, see work()
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      wake_.notify_all();
    }
    run_chunks(generation_);
    while (done_.load(std::memory_order_acquire) < chunks) cpu_relax();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Runs chunks of job `generation` until none is left. The job's fields are read again after each
  // successful claim: a claim of generation g happens-after the caller published job g, and the caller
  // cannot publish another until this chunk is done.
  void run_chunks(uint64_t generation) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    while ((c >> 32) == generation && static_cast<int64_t>(c & 0xffffffffu) < chunks_.load(std::memory_order_relaxed)) {
      if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
      const int64_t i = static_cast<int64_t>(c & 0xffffffffu);
      const int64_t* bounds = bounds_.load(std::memory_order_relaxed);
      const int64_t b = bounds[i], e = bounds[i + 1];
      try {
        (*f_.load(std::memory_order_relaxed))(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_acq_rel);
      c = claim_.load(std::memory_order_acquire);
    }
  }

  void work() {
    uint64_t seen = claim_.load() >> 32;
    while (true) {
      // Spin for the window, then sleep until the generation moves.
      auto start = std::chrono::steady_clock::now();
      uint64_t now_gen = seen;
      for (unsigned spins = 0;; ++spins) {
        now_gen = claim_.load(std::memory_order_acquire) >> 32;
        if (now_gen != seen || stop_.load(std::memory_order_relaxed)) break;
        cpu_relax();
        if ((spins & 255u) == 255u && std::chrono::steady_clock::now() - start > spin_window()) {
          std::unique_lock<std::mutex> lock(sleep_mutex_);
          sleepers_.fetch_add(1);  // seq_cst: either run() sees the sleeper or this sees the new job
          wake_.wait(lock, [&] { return (claim_.load() >> 32) != seen || stop_.load(); });
          sleepers_.fetch_sub(1);
          start = std::chrono::steady_clock::now();
        }
      }
      if (stop_.load()) return;
      seen = now_gen;
      run_chunks(seen);
    }
  }

  std::vector<std::thread> threads_;
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  uint64_t generation_ = 0;  // the caller's alone
  // The current job, written by the caller before it publishes the job's generation in claim_.
  std::atomic<const int64_t*> bounds_{nullptr};
  std::atomic<int64_t> chunks_{0};
  std::atomic<const std::function<void(int64_t, int64_t)>*> f_{nullptr};
};

std::mutex& pool_mutex() {
  static std::mutex m;
  return m;
}

// The pool for this process, sized to the current thread count. After a fork the child has none of
// the parent's threads: the parent's pool is abandoned (never joined) and a new one started.
HotPool* pool_for(int threads) {
  static HotPool* pool = nullptr;
  static pid_t owner = 0;
  if (owner != getpid()) {
    pool = nullptr;  // leaked on purpose: its threads do not exist in this process
    owner = getpid();
  }
  if (pool != nullptr && pool->workers() != threads - 1) {
    delete pool;
    pool = nullptr;
  }
  if (pool == nullptr && threads > 1) pool = new HotPool(threads - 1);
  return pool;
}

}  // namespace

int hot_pool_threads() { return std::max(1, at::get_num_threads()); }

void hot_parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (end <= begin) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t range = end - begin;
  const int threads = hot_pool_threads();
  if (threads <= 1 || range <= grain) return f(begin, end);
  std::unique_lock<std::mutex> lock(pool_mutex(), std::try_to_lock);
  if (!lock.owns_lock()) return f(begin, end);  // nested, or another thread holds the pool
  // Guided chunks: each takes 1/(2·threads) of what is left, rounded up to a multiple of the grain (so
  // kernels that work in blocks of rows keep whole blocks), down to one grain. A thread that starts
  // late (a worker waking up) takes fewer chunks, and the threads finish within about one grain of
  // each other instead of one equal chunk (a token's hundred-odd products each paid that wait).
  thread_local std::vector<int64_t> bounds;
  bounds.clear();
  for (int64_t at = begin; at < end;) {
    bounds.push_back(at);
    const int64_t left = end - at;
    const int64_t share = (left + 2 * threads - 1) / (2 * threads);
    at += std::min(left, std::max<int64_t>(1, (share + grain - 1) / grain) * grain);
  }
  bounds.push_back(end);
  const int64_t chunks = static_cast<int64_t>(bounds.size()) - 1;
  if (chunks <= 1) return f(begin, end);
  HotPool* pool = pool_for(threads);
  pool->run(bounds.data(), chunks, f);
}

}  // namespace swarmt::ops
