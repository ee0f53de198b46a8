// Reproducible randomness that does not depend on the standard library's distribution implementations
// (std::uniform_int_distribution differs between libstdc++ and libc++): keyed hashing for per-step /
// per-sample draws, and a small seeded generator.
#pragma once

#include <cstdint>

namespace swarmt {

// splitmix64 finaliser of a combined key: a well-mixed 64-bit value for (a, b).
inline uint64_t mix_key(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform double in [0, 1) from a key.
inline double uniform_from_key(uint64_t key) { return static_cast<double>(mix_key(key, 0x5EEDull) >> 11) * 0x1.0p-53; }

// Sequential generator (splitmix64 stream).
class KeyedRng {
 public:
  explicit KeyedRng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix_key(state_, counter_++); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n) (n > 0), unbiased by rejection.
  uint64_t below(uint64_t n) {
    const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % n);
    uint64_t x;
    do x = next(); while (x >= limit);
    return x % n;
  }

 private:
  uint64_t state_;
  uint64_t counter_ = 0;
};

}  // namespace swarmt
