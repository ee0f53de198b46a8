// Deterministic random draws for the synthetic task generators (NIAH, MQAR, passkey, essay text).
//
// The engine is std::mt19937_64, whose output sequence the C++ standard fixes. The distributions are our
// own (std::uniform_int_distribution and friends differ between standard libraries), so a task generated
// from a seed is the same on every compiler and machine.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "swarmt/core/error.h"

namespace swarmt::data {

// SplitMix64 finaliser of (seed, stream): independent-looking seeds for sample i of a run, so any
// sample can be generated alone and in any order.
uint64_t mix_seed(uint64_t seed, uint64_t stream);

class TaskRng {
 public:
  explicit TaskRng(uint64_t seed) : engine_(seed) {}

  uint64_t next_u64() { return engine_(); }

  // Uniform integer in [lo, hi] (both inclusive), without modulo bias (rejection sampling).
  int64_t uniform_int(int64_t lo, int64_t hi);

  // Uniform double in [0, 1) with 53 random bits.
  double uniform_real();

  // k distinct values of [0, n), in the order drawn (uniform over ordered k-subsets).
  std::vector<int64_t> sample_without_replacement(int64_t n, int64_t k);

  // Fisher-Yates shuffle.
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) {
      auto j = static_cast<size_t>(uniform_int(0, static_cast<int64_t>(i) - 1));
      std::swap(items[i - 1], items[j]);
    }
  }

  template <typename T>
  const T& choice(const std::vector<T>& items) {
    SWARMT_CHECK(!items.empty(), "choice from an empty list");
    return items[static_cast<size_t>(uniform_int(0, static_cast<int64_t>(items.size()) - 1))];
  }

  // A random 128-bit number rendered as a version-4 UUID ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", y in
  // 8..b), as Python's str(uuid.UUID(int=getrandbits(128), version=4)).
  std::string uuid4();

 private:
  std::mt19937_64 engine_;
};

}  // namespace swarmt::data
