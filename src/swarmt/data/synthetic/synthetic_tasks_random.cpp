#include "swarmt/data/synthetic/synthetic_tasks_random.h"

#include <cstdio>
#include <unordered_set>

namespace swarmt::data {

uint64_t mix_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int64_t TaskRng::uniform_int(int64_t lo, int64_t hi) {
  SWARMT_CHECK(lo <= hi, "empty range [", lo, ", ", hi, "]");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // hi - lo, may be 2^64 - 1
  if (span == UINT64_MAX) return static_cast<int64_t>(engine_());
  const uint64_t range = span + 1;
  // Accept only draws below the largest multiple of `range`, so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range + 1) % range;
  uint64_t x;
  do {
    x = engine_();
  } while (x > limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
}

double TaskRng::uniform_real() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

std::vector<int64_t> TaskRng::sample_without_replacement(int64_t n, int64_t k) {
  SWARMT_CHECK(k >= 0 && k <= n, "cannot draw ", k, " distinct values from ", n);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(k));
  if (k * 4 >= n) {
    // Dense: partial Fisher-Yates over the whole range.
    std::vector<int64_t> pool(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) pool[static_cast<size_t>(i)] = i;
    for (int64_t i = 0; i < k; ++i) {
      auto j = static_cast<size_t>(uniform_int(i, n - 1));
      std::swap(pool[static_cast<size_t>(i)], pool[j]);
      out.push_back(pool[static_cast<size_t>(i)]);
    }
    return out;
  }
  // Sparse: redraw on collision (expected < 4/3 draws per value).
  std::unordered_set<int64_t> seen;
  while (static_cast<int64_t>(out.size()) < k) {
    int64_t v = uniform_int(0, n - 1);
    if (seen.insert(v).second) out.push_back(v);
  }
  return out;
}

std::string TaskRng::uuid4() {
  uint64_t hi = engine_(), lo = engine_();
  hi = (hi & ~(0xFULL << 12)) | (0x4ULL << 12);   // version nibble (bits 76..79 of the 128-bit number) = 4
  lo = (lo & ~(0x3ULL << 62)) | (0x2ULL << 62);   // variant bits = 10 (RFC 4122)
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(hi >> 32), static_cast<unsigned long long>((hi >> 16) & 0xFFFF),
                static_cast<unsigned long long>(hi & 0xFFFF), static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

}  // namespace swarmt::data
