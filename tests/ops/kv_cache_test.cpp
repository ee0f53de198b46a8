// Streaming attention over a KV cache (ring for sliding windows, growing for full attention) must equal
// the full-sequence kernel, whatever the mix of decode steps and prefill chunks.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ops/kernel_levels.h"
#include "swarmt/core/error.h"
#include "swarmt/ops/attention.h"
#include "swarmt/ops/rope.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

struct Sequence {
  at::Tensor q, k, v;  // (B, Hq, T, D), (B, Hkv, T, D), (B, Hkv, T, D)
};

Sequence random_sequence(int64_t batch, int64_t query_heads, int64_t kv_heads, int64_t length, int64_t head_dim) {
  return {at::randn({batch, query_heads, length, head_dim}, at::kDouble),
          at::randn({batch, kv_heads, length, head_dim}, at::kDouble),
          at::randn({batch, kv_heads, length, head_dim}, at::kDouble)};
}

AttentionOptions window_of(int64_t window) {
  AttentionOptions options;
  options.window = window;
  options.block_size = 4;
  return options;
}

// Feeds the sequence through the cache in chunks of the given sizes (cycled until T tokens are in) and
// returns the concatenated outputs (B, Hq, T, D).
at::Tensor stream(KVCache& cache, const Sequence& s, const std::vector<int64_t>& chunks,
                  const AttentionOptions& options) {
  std::vector<at::Tensor> outputs;
  const int64_t length = s.q.size(2);
  for (int64_t start = 0, i = 0; start < length; ++i) {
    const int64_t n = std::min(chunks[i % chunks.size()], length - start);
    outputs.push_back(attend_with_cache(cache, s.q.narrow(2, start, n), s.k.narrow(2, start, n),
                                        s.v.narrow(2, start, n), options));
    start += n;
  }
  return at::cat(outputs, 2);
}

// Port of specs/verify_equations.py check 6, literally: one head, T = 16, dk = 4, dv = 3; the ring of w
// slots gets the current key written first, then the query attends over all filled slots.
TEST(KVCacheTest, ring_buffer_decode_equals_masked_full_attention_check6) {
  const int64_t length = 16, key_dim = 4, value_dim = 3;
  auto q = at::randn({length, key_dim}, at::kDouble), k = at::randn({length, key_dim}, at::kDouble),
       v = at::randn({length, value_dim}, at::kDouble);
  for (int64_t w : {1, 3, 5}) {
    auto full = at::empty({length, value_dim}, at::kDouble);  // swa_full: keys 0 <= i - j < w
    auto decoded = at::empty({length, value_dim}, at::kDouble);
    auto ring_k = at::zeros({w, key_dim}, at::kDouble), ring_v = at::zeros({w, value_dim}, at::kDouble);
    for (int64_t i = 0; i < length; ++i) {
      const int64_t first = std::max<int64_t>(0, i - w + 1);
      auto p = at::softmax(at::mv(k.narrow(0, first, i - first + 1), q[i]) / std::sqrt(4.0), 0);
      full[i] = at::mv(v.narrow(0, first, i - first + 1).t(), p);
      ring_k[i % w] = k[i];  // swa_ring_decode
      ring_v[i % w] = v[i];
      const int64_t filled = std::min(i + 1, w);
      auto p_ring = at::softmax(at::mv(ring_k.narrow(0, 0, filled), q[i]) / std::sqrt(4.0), 0);
      decoded[i] = at::mv(ring_v.narrow(0, 0, filled).t(), p_ring);
    }
    SCOPED_TRACE(str_cat("w = ", w));
    EXPECT_TENSORS_CLOSE(decoded, full, 1e-14);
    // The library's ring equals both.
    KVCache cache = make_kv_cache(1, 1, key_dim, w, at::kDouble, at::kCPU);
    Sequence s{q.view({1, 1, length, key_dim}), k.view({1, 1, length, key_dim}),
               at::cat({v, at::zeros({length, key_dim - value_dim}, at::kDouble)}, 1).view({1, 1, length, key_dim})};
    auto out = stream(cache, s, {1}, window_of(w)).view({length, key_dim}).narrow(1, 0, value_dim);
    EXPECT_TENSORS_CLOSE(out, full, 1e-14);
  }
}

TEST(KVCacheTest, ring_decode_matches_full_forward) {
  auto s = random_sequence(2, 4, 2, 37, 8);
  for (int64_t w : {1, 3, 5, 7, 40}) {
    SCOPED_TRACE(str_cat("window ", w));
    KVCache cache = make_kv_cache(2, 2, 8, w, at::kDouble, at::kCPU);
    EXPECT_TENSORS_CLOSE(stream(cache, s, {1}, window_of(w)), causal_attention(s.q, s.k, s.v, window_of(w)), 1e-12);
    EXPECT_EQ(cache.seen, 37);
  }
}

// Decoding in fp32 and bf16 takes the CPU decode kernel (scores as a matrix-vector product with each kv
// head's keys, softmax and the value pass in fp32): it equals fp64 attention over the same (rounded)
// inputs, for a ring, a ring larger than the window (masked slots), a growing cache, GQA, softcap and a
// batch of two, on every matvec kernel level this CPU has.
TEST(KVCacheTest, fp32_and_bf16_decoding_equals_fp64_attention) {
  auto s = random_sequence(2, 6, 2, 41, 12);
  for_each_kernel_level([&] {
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      Sequence rounded{s.q.to(dtype), s.k.to(dtype), s.v.to(dtype)};
      Sequence exact{rounded.q.to(at::kDouble), rounded.k.to(at::kDouble), rounded.v.to(at::kDouble)};
      const double tol = dtype == at::kFloat ? 1e-5 : 2e-2;
      struct Case {
        int64_t capacity, window;
        double softcap;
      };
      for (const Case c : {Case{5, 5, 0.0}, Case{9, 4, 0.0}, Case{0, 0, 0.0}, Case{0, 0, 2.0}}) {
        SCOPED_TRACE(str_cat(dtype == at::kFloat ? "fp32" : "bf16", " capacity ", c.capacity, " window ",
                             c.window, " softcap ", c.softcap));
        AttentionOptions options = window_of(c.window);
        options.softcap = c.softcap;
        KVCache cache = make_kv_cache(2, 2, 12, c.capacity, dtype, at::kCPU);
        auto decoded = stream(cache, rounded, {1}, options);
        EXPECT_EQ(decoded.scalar_type(), dtype);
        EXPECT_TENSORS_CLOSE(decoded.to(at::kDouble), causal_attention(exact.q, exact.k, exact.v, options), tol);
      }
    }
  });
}

TEST(KVCacheTest, ring_larger_than_window_ignores_keys_outside_the_window) {
  auto s = random_sequence(1, 2, 1, 30, 8);
  KVCache cache = make_kv_cache(1, 1, 8, /*capacity=*/10, at::kDouble, at::kCPU);
  EXPECT_TENSORS_CLOSE(stream(cache, s, {1, 1, 7, 1, 3}, window_of(4)), causal_attention(s.q, s.k, s.v, window_of(4)),
                       1e-12);
}

TEST(KVCacheTest, chunked_prefill_matches_full_forward) {
  auto s = random_sequence(2, 6, 3, 61, 8);
  const int64_t w = 8;
  const std::vector<std::vector<int64_t>> schedules = {{3}, {8}, {20}, {61}, {1, 13, 2, 30, 1}, {7, 9}};
  for (const auto& chunks : schedules) {
    SCOPED_TRACE(str_cat("first chunk ", chunks[0], ", ", chunks.size(), " sizes"));
    KVCache cache = make_kv_cache(2, 3, 8, w, at::kDouble, at::kCPU);
    EXPECT_TENSORS_CLOSE(stream(cache, s, chunks, window_of(w)), causal_attention(s.q, s.k, s.v, window_of(w)),
                         1e-12);
  }
}

TEST(KVCacheTest, ring_slots_hold_the_last_positions_modulo_capacity) {
  auto s = random_sequence(1, 1, 1, 23, 4);
  KVCache cache = make_kv_cache(1, 1, 4, 5, at::kDouble, at::kCPU);
  stream(cache, s, {3, 1, 11}, window_of(5));  // ends with a chunk longer than the ring
  ASSERT_EQ(cache.seen, 23);
  for (int64_t slot = 0; slot < 5; ++slot) {
    const int64_t position = cache.positions[slot].item<int64_t>();
    EXPECT_GE(position, 18);
    EXPECT_EQ(position % 5, slot);
    EXPECT_TENSORS_CLOSE(cache.k.select(2, slot), s.k.select(2, position), 0.0);
    EXPECT_TENSORS_CLOSE(cache.v.select(2, slot), s.v.select(2, position), 0.0);
  }
}

TEST(KVCacheTest, ring_memory_is_independent_of_context_length) {
  KVCache cache = make_kv_cache(1, 2, 8, 16, at::kFloat, at::kCPU);
  const int64_t expected = 2 * (2 * 16 * 8 * 4) + 16 * 8;  // k and v in fp32, positions in int64
  EXPECT_EQ(cache.bytes(), expected);
  auto q = at::randn({1, 4, 1, 8}), k = at::randn({1, 2, 1, 8});
  for (int i = 0; i < 200; ++i) attend_with_cache(cache, q, k, k, window_of(16));
  EXPECT_EQ(cache.bytes(), expected);
}

TEST(KVCacheTest, growing_cache_matches_full_attention) {
  auto s = random_sequence(1, 4, 2, 70, 8);
  for (int64_t window : {0, 6}) {
    for (const auto& chunks : std::vector<std::vector<int64_t>>{{1}, {5, 1, 20}}) {
      SCOPED_TRACE(str_cat("window ", window, ", first chunk ", chunks[0]));
      KVCache cache = make_kv_cache(1, 2, 8, /*capacity=*/0, at::kDouble, at::kCPU);
      EXPECT_TENSORS_CLOSE(stream(cache, s, chunks, window_of(window)),
                           causal_attention(s.q, s.k, s.v, window_of(window)), 1e-12);
      EXPECT_TENSORS_CLOSE(cache.k.narrow(2, 0, 70), s.k, 0.0);
    }
  }
}

TEST(KVCacheTest, growing_cache_grows_geometrically) {
  KVCache cache = make_kv_cache(1, 1, 4, 0, at::kFloat, at::kCPU);
  std::set<int64_t> sizes;
  auto q = at::randn({1, 1, 1, 4});
  for (int i = 0; i < 1000; ++i) {
    attend_with_cache(cache, q, q, q, window_of(0));
    sizes.insert(cache.k.size(2));
    EXPECT_LE(cache.k.size(2), std::max<int64_t>(16, 2 * cache.seen));
  }
  EXPECT_LE(sizes.size(), 8u);  // 16, 32, ..., 1024: a logarithmic number of reallocations
}

TEST(KVCacheTest, decode_with_post_rope_keys_matches_full_forward) {
  // Keys are rotated once, at their absolute position, before entering the cache; the ring never
  // re-rotates them, even after wrapping many times.
  auto s = random_sequence(1, 2, 1, 50, 8);
  auto inv_freq = rope_inv_freq(8, 10000.0);
  auto [cos, sin] = rope_cos_sin(at::arange(50, at::kLong), inv_freq, at::kDouble);
  Sequence rotated{apply_rope(s.q, cos, sin), apply_rope(s.k, cos, sin), s.v};
  KVCache cache = make_kv_cache(1, 1, 8, 4, at::kDouble, at::kCPU);
  std::vector<at::Tensor> outputs;
  for (int64_t t = 0; t < 50; ++t) {
    auto [c, sn] = rope_cos_sin(at::full({1}, t, at::kLong), inv_freq, at::kDouble);
    outputs.push_back(attend_with_cache(cache, apply_rope(s.q.narrow(2, t, 1), c, sn),
                                        apply_rope(s.k.narrow(2, t, 1), c, sn), s.v.narrow(2, t, 1), window_of(4)));
  }
  EXPECT_TENSORS_CLOSE(at::cat(outputs, 2), causal_attention(rotated.q, rotated.k, rotated.v, window_of(4)), 1e-12);
}

TEST(KVCacheTest, bad_inputs_are_rejected_with_input_errors) {
  auto expect_input_error = [](const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "no error thrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    }
  };
  KVCache ring = make_kv_cache(1, 2, 8, 4, at::kFloat, at::kCPU);
  auto q = at::randn({1, 4, 1, 8}), k = at::randn({1, 2, 1, 8});
  expect_input_error([&] { attend_with_cache(ring, q, k, k, window_of(5)); });  // window beyond the ring
  expect_input_error([&] { attend_with_cache(ring, q, k, k, window_of(0)); });  // full attention needs capacity 0
  expect_input_error([&] { attend_with_cache(ring, q, at::randn({1, 1, 1, 8}), at::randn({1, 1, 1, 8}), window_of(4)); });
  expect_input_error([&] { attend_with_cache(ring, at::randn({1, 4, 2, 8}), k, k, window_of(4)); });
  expect_input_error([&] { make_kv_cache(1, 2, 8, -1, at::kFloat, at::kCPU); });
  KVCache empty;
  expect_input_error([&] { attend_with_cache(empty, q, k, k, window_of(4)); });
  EXPECT_EQ(ring.seen, 0);  // nothing was written by the rejected calls
}

}  // namespace
}  // namespace swarmt::ops
