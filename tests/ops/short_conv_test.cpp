// Short causal depthwise convolution: the vectorised kernel against a naive per-output loop, decode-cache
// continuation, and document resets.
#include <gtest/gtest.h>

#include "ops/recurrent_test_inputs.h"
#include "swarmt/core/error.h"
#include "swarmt/ops/gated_delta.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

using swarmt::testing::resets_at;

// y[b, t, c] = Σ_j w[c, j] x[b, t-(K-1)+j, c], positions < 0 read the cache (or zero), and a position
// before the document of t (the last reset <= t) is not seen.
at::Tensor naive_short_conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& cache, const at::Tensor& resets) {
  const int64_t B = x.size(0), N = x.size(1), C = x.size(2), K = w.size(1);
  at::Tensor y = at::zeros_like(x);
  for (int64_t b = 0; b < B; ++b) {
    int64_t doc_start = -1000000;  // no reset yet: the cache is visible
    for (int64_t t = 0; t < N; ++t) {
      if (resets.defined() && resets[b][t].item<bool>()) doc_start = t;
      for (int64_t j = 0; j < K; ++j) {
        int64_t p = t - (K - 1) + j;
        if (p < doc_start) continue;
        at::Tensor input = p >= 0 ? x[b][p] : (cache.defined() ? cache[b][K - 1 + p] : at::zeros({C}, x.options()));
        y[b][t] += w.select(1, j) * input;
      }
    }
  }
  return y;
}

struct ConvInputs {
  at::Tensor x, w;
};

ConvInputs random_conv_inputs(int64_t batch, int64_t length, int64_t channels, int64_t taps, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return {at::randn({batch, length, channels}, gen, swarmt::testing::f64()),
          at::randn({channels, taps}, gen, swarmt::testing::f64())};
}

TEST(ShortConv, equals_naive_loop) {
  ConvInputs in = random_conv_inputs(2, 9, 3, 4, 1);
  auto [y, cache] = short_conv(in.x, in.w);
  EXPECT_TENSORS_CLOSE(y, naive_short_conv(in.x, in.w, {}, {}), 1e-12);
  EXPECT_TENSORS_CLOSE(cache, in.x.narrow(1, 6, 3), 0.0);
}

TEST(ShortConv, cache_continuation_equals_one_pass) {
  ConvInputs in = random_conv_inputs(2, 11, 3, 4, 2);
  auto [y_all, cache_all] = short_conv(in.x, in.w);
  for (int64_t split : {1, 2, 3, 7}) {
    SCOPED_TRACE("split=" + std::to_string(split));
    auto [y1, c1] = short_conv(in.x.narrow(1, 0, split), in.w);
    auto [y2, c2] = short_conv(in.x.narrow(1, split, 11 - split), in.w, c1);
    EXPECT_TENSORS_CLOSE(at::cat({y1, y2}, 1), y_all, 1e-12);
    EXPECT_TENSORS_CLOSE(c2, cache_all, 0.0);
  }
}

TEST(ShortConv, token_by_token_decode_equals_one_pass) {
  ConvInputs in = random_conv_inputs(1, 6, 2, 4, 3);
  auto [y_all, unused] = short_conv(in.x, in.w);
  at::Tensor cache;
  for (int64_t t = 0; t < 6; ++t) {
    auto [y, next] = short_conv(in.x.narrow(1, t, 1), in.w, cache);
    EXPECT_TENSORS_CLOSE(y, y_all.narrow(1, t, 1), 1e-12);
    cache = next;
  }
}

TEST(ShortConv, short_input_pads_the_cache_with_zeros_on_the_left) {
  ConvInputs in = random_conv_inputs(1, 2, 2, 4, 4);
  auto [y, cache] = short_conv(in.x, in.w);
  EXPECT_TENSORS_CLOSE(cache.narrow(1, 0, 1), at::zeros({1, 1, 2}, in.x.options()), 0.0);
  EXPECT_TENSORS_CLOSE(cache.narrow(1, 1, 2), in.x, 0.0);
}

TEST(ShortConv, resets_hide_inputs_of_earlier_documents) {
  ConvInputs in = random_conv_inputs(2, 12, 3, 4, 5);
  at::Tensor cache = at::randn({2, 3, 3}, swarmt::testing::f64());
  at::Tensor resets = resets_at(2, 12, {0, 4, 5, 10});
  auto [y, unused] = short_conv(in.x, in.w, cache, resets);
  EXPECT_TENSORS_CLOSE(y, naive_short_conv(in.x, in.w, cache, resets), 1e-12);
}

TEST(ShortConv, continuation_after_a_reset_does_not_see_the_previous_document) {
  ConvInputs in = random_conv_inputs(1, 10, 2, 4, 6);
  at::Tensor resets = resets_at(1, 10, {4});
  auto [y_all, c_all] = short_conv(in.x, in.w, {}, resets);
  // Split one token after the reset: the cache carries positions 3, 4, 5, of which 3 is another document.
  auto [y1, c1] = short_conv(in.x.narrow(1, 0, 6), in.w, {}, resets.narrow(1, 0, 6));
  auto [y2, c2] = short_conv(in.x.narrow(1, 6, 4), in.w, c1, resets.narrow(1, 6, 4));
  EXPECT_TENSORS_CLOSE(at::cat({y1, y2}, 1), y_all, 1e-12);
}

TEST(ShortConv, weight_gradient_is_the_input_correlation) {
  ConvInputs in = random_conv_inputs(2, 7, 3, 4, 7);
  at::Tensor w = in.w.clone().requires_grad_();
  at::Tensor x = in.x.clone().requires_grad_();
  at::Tensor upstream = at::randn({2, 7, 3}, swarmt::testing::f64());
  auto [y, unused] = short_conv(x, w);
  (y * upstream).sum().backward();
  // dW[c, j] = Σ_{b,t} dy[b, t, c] x[b, t-(K-1)+j, c];  dx[b, p, c] = Σ_j w[c, j] dy[b, p+(K-1)-j, c]
  at::Tensor padded = at::constant_pad_nd(in.x, {0, 0, 3, 0});
  at::Tensor up_padded = at::constant_pad_nd(upstream, {0, 0, 0, 3});
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_TENSORS_CLOSE(w.grad().select(1, j), (upstream * padded.narrow(1, j, 7)).sum(at::IntArrayRef{0, 1}), 1e-12);
  }
  at::Tensor dx = at::zeros_like(in.x);
  for (int64_t j = 0; j < 4; ++j) dx += in.w.select(1, j) * up_padded.narrow(1, 3 - j, 7);
  EXPECT_TENSORS_CLOSE(x.grad(), dx, 1e-12);
}

TEST(ShortConv, bad_shapes_are_rejected) {
  ConvInputs in = random_conv_inputs(1, 5, 3, 4, 8);
  EXPECT_THROW(short_conv(in.x, in.w.narrow(0, 0, 2)), swarmt::Error);
  EXPECT_THROW(short_conv(in.x, in.w, at::zeros({1, 2, 3}, in.x.options())), swarmt::Error);
  EXPECT_THROW(short_conv(in.x, in.w, {}, at::zeros({1, 4}, at::kBool)), swarmt::Error);
}

}  // namespace
}  // namespace swarmt::ops
