#include "swarmt/ops/flops.h"

#include <algorithm>

#include "swarmt/core/error.h"

namespace swarmt::ops {

int64_t attention_visible_pairs(int64_t n_queries, int64_t n_keys, int64_t window) {
  SWARMT_CHECK_INPUT(n_queries >= 0 && n_keys >= n_queries && window >= 0,
                     "attention FLOPs: need 0 <= n_queries <= n_keys and window >= 0 (got n_queries=", n_queries,
                     ", n_keys=", n_keys, ", window=", window, ")");
  // Query i sits at key index i + past and sees min(i + past + 1, window) keys. Sum over i in closed form:
  // the first queries (index + 1 <= window) see index + 1 keys, the rest see exactly `window`.
  const int64_t past = n_keys - n_queries;
  auto triangle = [](int64_t a, int64_t b) { return (b * (b + 1) - a * (a + 1)) / 2; };  // sum of a+1..b
  if (window == 0 || window >= n_keys) return triangle(past, n_keys);
  const int64_t last_growing = std::clamp<int64_t>(window, past, n_keys);  // key indices < window grow
  return triangle(past, last_growing) + (n_keys - last_growing) * window;
}

double attention_forward_flops(int64_t batch, int64_t query_heads, int64_t n_queries, int64_t n_keys,
                               int64_t head_dim, int64_t window) {
  return 4.0 * static_cast<double>(head_dim) * static_cast<double>(batch) * static_cast<double>(query_heads) *
         static_cast<double>(attention_visible_pairs(n_queries, n_keys, window));
}

double attention_backward_flops(int64_t batch, int64_t query_heads, int64_t n_queries, int64_t n_keys,
                                int64_t head_dim, int64_t window) {
  return 2.0 * attention_forward_flops(batch, query_heads, n_queries, n_keys, head_dim, window);
}

}  // namespace swarmt::ops
