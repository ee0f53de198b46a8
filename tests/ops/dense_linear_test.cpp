// The training linear path (ops/dense_linear.h) against at::linear in fp64: values and every gradient,
// at the demo's shapes and at odd ones (rows and widths that are not multiples of the tiles), and the
// places where it must not apply.
#include <gtest/gtest.h>

#include "swarmt/ops/dense_linear.h"
#include "swarmt/ops/gemm_small.h"
#include "swarmt/ops/matvec.h"
#include "swarmt/train/autocast.h"
#include "test_util.h"

namespace swarmt::ops::dense_linear_test {
namespace {

struct Shape {
  std::vector<int64_t> x;  // (..., in)
  int64_t out;
  bool bias;
};

TEST(DenseLinear, forward_and_gradients_equal_at_linear_in_fp64) {
  if (!gemm_small_is_vectorized()) GTEST_SKIP() << "the path needs gemm_small's AVX-512 kernel";
  const std::vector<Shape> shapes = {
      {{8, 512, 128}, 384, false},  // the demo's MLP up projection
      {{4096, 384}, 128, false},    // its down projection, 2-D input
      {{3, 67, 40}, 24, true},      // rows, in and out off every tile, with a bias
      {{1, 70, 17}, 33, true},      // out just past a 32-wide tile
      {{2, 300, 64}, 16, false},    // the narrowest out, dW's sum over 64-row blocks and a tail
  };
  for (const Shape& s : shapes) {
    const int64_t in = s.x.back();
    SCOPED_TRACE("x " + std::to_string(s.x.front()) + "x...x" + std::to_string(in) + " out " + std::to_string(s.out));
    const at::Tensor x0 = SeededRandn(s.x, 1), w0 = SeededRandn({s.out, in}, 2) / std::sqrt(double(in)), b0 = SeededRandn({s.out}, 3);
    at::Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true),
               b = b0.clone().requires_grad_(true);
    at::Tensor x64 = x0.to(at::kDouble).requires_grad_(true), w64 = w0.to(at::kDouble).requires_grad_(true),
               b64 = b0.to(at::kDouble).requires_grad_(true);
    ASSERT_TRUE(dense_linear_applies(x, w, s.bias ? b : at::Tensor()));
    const at::Tensor y = linear(x, w, s.bias ? b : at::Tensor());  // ops::linear takes the path
    ASSERT_NE(y.grad_fn()->name().find("DenseLinearFunction"), std::string::npos) << y.grad_fn()->name();
    const at::Tensor y64 = at::linear(x64, w64, s.bias ? b64 : at::Tensor());
    EXPECT_EQ(y.sizes(), y64.sizes());
    EXPECT_TRUE(TensorsClose(y, y64.to(at::kFloat), 1e-5, 1e-4));
    const at::Tensor up = SeededRandn(y.sizes(), 4);
    std::vector<at::Tensor> in32{x, w}, in64{x64, w64};
    if (s.bias) {
      in32.push_back(b);
      in64.push_back(b64);
    }
    const auto g32 = GradientsOf(y, in32, up), g64 = GradientsOf(y64, in64, up);
    ASSERT_EQ(g32.size(), g64.size());
    for (size_t i = 0; i < g32.size(); ++i) {
      SCOPED_TRACE("gradient " + std::to_string(i));
      ASSERT_TRUE(g32[i].defined());
      EXPECT_EQ(g32[i].sizes(), g64[i].sizes());
      EXPECT_TRUE(TensorsClose(g32[i], g64[i].to(at::kFloat), 1e-4, 1e-3));
    }
  }
}

// q/k/v-like pieces of one product (ops::linear_group): values, and gradients of a piece used through a
// per-head transpose (as q is), of an unused piece, and of a piece whose gradient is a strided slice.
TEST(DenseLinearGroup, pieces_and_gradients_equal_separate_products_in_fp64) {
  if (!gemm_small_is_vectorized()) GTEST_SKIP() << "the path needs gemm_small's AVX-512 kernel";
  const int64_t B = 3, N = 50, in = 40;
  const std::vector<int64_t> outs = {24, 2, 37};  // 24 = 4 heads of 6; 2 like the mLSTM's gates
  for (bool bias : {false, true}) {
    SCOPED_TRACE("bias=" + std::to_string(bias));
    const at::Tensor x0 = SeededRandn({B, N, in}, 30);
    std::vector<at::Tensor> w32, w64, b32, b64;
    for (size_t j = 0; j < outs.size(); ++j) {
      const at::Tensor w = SeededRandn({outs[j], in}, 31 + j) / std::sqrt(double(in));
      w32.push_back(w.clone().requires_grad_(true));
      w64.push_back(w.to(at::kDouble).requires_grad_(true));
      if (bias && j != 1) {  // mixed: the middle piece has no bias
        const at::Tensor b = SeededRandn({outs[j]}, 41 + j);
        b32.push_back(b.clone().requires_grad_(true));
        b64.push_back(b.to(at::kDouble).requires_grad_(true));
      } else if (bias) {
        b32.emplace_back();
        b64.emplace_back();
      }
    }
    at::Tensor x32 = x0.clone().requires_grad_(true), x64 = x0.to(at::kDouble).requires_grad_(true);
    const auto ys = linear_group(x32, w32, b32);
    ASSERT_EQ(ys.size(), outs.size());
    ASSERT_TRUE(AutogradGraphHas(ys[0], "DenseLinearGroupFunction"));
    std::vector<at::Tensor> expected;
    for (size_t j = 0; j < outs.size(); ++j) {
      expected.push_back(at::linear(x64, w64[j], bias && j != 1 ? b64[j] : at::Tensor()));
      EXPECT_TRUE(TensorsClose(ys[j], expected[j].to(at::kFloat), 1e-5, 1e-4));
    }
    // Piece 0 as (B, heads, N, 6) through a transpose; piece 1 unused; piece 2 beside 5 more columns, so
    // that its gradient arrives as a slice of a wider one (rows 42 floats apart).
    auto heads = [&](const at::Tensor& y) { return y.view({B, N, 4, 6}).transpose(1, 2); };
    auto widened = [&](const at::Tensor& y) { return at::cat({y, at::ones({B, N, 5}, y.options())}, -1); };
    const at::Tensor up0 = SeededRandn({B, 4, N, 6}, 50), up2 = SeededRandn({B, N, outs[2] + 5}, 51);
    const at::Tensor loss32 = (heads(ys[0]) * up0).sum() + (widened(ys[2]) * up2).sum();
    const at::Tensor loss64 = (heads(expected[0]) * up0.to(at::kDouble)).sum() +
                              (widened(expected[2]) * up2.to(at::kDouble)).sum();
    std::vector<at::Tensor> in32{x32, w32[0], w32[1], w32[2]}, in64{x64, w64[0], w64[1], w64[2]};
    if (bias) {
      in32.insert(in32.end(), {b32[0], b32[2]});
      in64.insert(in64.end(), {b64[0], b64[2]});
    }
    const auto g32 = torch::autograd::grad({loss32}, in32, {}, false, false, true);
    const auto g64 = torch::autograd::grad({loss64}, in64, {}, false, false, true);
    for (size_t i = 0; i < g32.size(); ++i) {
      SCOPED_TRACE("gradient " + std::to_string(i));
      ASSERT_TRUE(g32[i].defined());
      const at::Tensor reference = g64[i].defined() ? g64[i].to(at::kFloat) : at::zeros_like(g32[i]);
      EXPECT_TRUE(TensorsClose(g32[i], reference, 1e-4, 1e-3));
    }
    EXPECT_EQ(g32[2].abs().max().item<float>(), 0.0f);  // the unused piece's weight
  }
}

// The grouped product's gradients go to the arguments that record a graph, and only to them: data x
// (dW and db only), frozen weights and biases (dX only), frozen biases beside trainable weights.
TEST(DenseLinearGroup, only_the_arguments_that_record_a_graph_get_gradients) {
  if (!gemm_small_is_vectorized()) GTEST_SKIP() << "the path needs gemm_small's AVX-512 kernel";
  const at::Tensor x0 = SeededRandn({2, 40, 32}, 60), wa = SeededRandn({24, 32}, 61), wb = SeededRandn({16, 32}, 62);
  const at::Tensor ba = SeededRandn({24}, 63), bb = SeededRandn({16}, 64);
  const at::Tensor up = SeededRandn({2, 40, 40}, 65);
  const at::Tensor up_a = up.narrow(-1, 0, 24), up_b = up.narrow(-1, 24, 16);
  auto loss = [&](const std::vector<at::Tensor>& ys) { return (ys[0] * up_a).sum() + (ys[1] * up_b).sum(); };
  const at::Tensor x2 = x0.reshape({80, 32}), up2a = up_a.reshape({80, 24}), up2b = up_b.reshape({80, 16});
  struct Case {
    bool x, w, b;
  };
  for (const Case c : {Case{false, true, true}, Case{true, false, false}, Case{true, true, false}}) {
    SCOPED_TRACE("x " + std::to_string(c.x) + " w " + std::to_string(c.w) + " b " + std::to_string(c.b));
    at::Tensor x = x0.clone().requires_grad_(c.x), w1 = wa.clone().requires_grad_(c.w),
               w2 = wb.clone().requires_grad_(c.w), b1 = ba.clone().requires_grad_(c.b),
               b2 = bb.clone().requires_grad_(c.b);
    const auto ys = linear_group(x, {w1, w2}, {b1, b2});
    ASSERT_TRUE(AutogradGraphHas(ys[0], "DenseLinearGroupFunction"));
    loss(ys).backward();
    EXPECT_EQ(x.grad().defined(), c.x);
    EXPECT_EQ(w1.grad().defined(), c.w);
    EXPECT_EQ(b1.grad().defined(), c.b);
    if (c.x) {
      EXPECT_TRUE(TensorsClose(x.grad().reshape({80, 32}), up2a.mm(wa) + up2b.mm(wb), 1e-4, 1e-3));
    }
    if (c.w) {
      EXPECT_TRUE(TensorsClose(w1.grad(), up2a.t().mm(x2), 1e-4, 1e-3));
      EXPECT_TRUE(TensorsClose(w2.grad(), up2b.t().mm(x2), 1e-4, 1e-3));
    }
    if (c.b) {
      EXPECT_TRUE(TensorsClose(b2.grad(), up2b.sum(0), 1e-4, 1e-3));
    }
  }
}

TEST(DenseLinear, a_frozen_input_or_weight_gets_no_gradient) {
  if (!gemm_small_is_vectorized()) GTEST_SKIP() << "the path needs gemm_small's AVX-512 kernel";
  const at::Tensor x = SeededRandn({128, 32}, 5), w0 = SeededRandn({48, 32}, 6);
  at::Tensor w = w0.clone().requires_grad_(true);
  const at::Tensor y = dense_linear(x, w);  // x is data: only dW
  const at::Tensor up = SeededRandn({128, 48}, 7);
  y.backward(up);
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(TensorsClose(w.grad(), up.t().mm(x), 1e-4, 1e-3));

  at::Tensor x2 = x.clone().requires_grad_(true);
  const at::Tensor y2 = dense_linear(x2, w0);  // a frozen weight: only dX
  y2.backward(up);
  ASSERT_TRUE(x2.grad().defined());
  EXPECT_TRUE(TensorsClose(x2.grad(), up.mm(w0), 1e-4, 1e-3));
}

TEST(DenseLinear, applies_only_to_fp32_training_products_of_small_weights) {
  if (!gemm_small_is_vectorized()) GTEST_SKIP() << "the path needs gemm_small's AVX-512 kernel";
  const at::Tensor x = SeededRandn({4, 64, 128}, 8).requires_grad_(true);
  const at::Tensor w = SeededRandn({384, 128}, 9).requires_grad_(true);
  EXPECT_TRUE(dense_linear_applies(x, w));
  {
    at::NoGradGuard no_grad;  // nothing to record: at::linear (or the matvec kernel)
    EXPECT_FALSE(dense_linear_applies(x, w));
  }
  EXPECT_FALSE(dense_linear_applies(x.detach(), w.detach()));
  EXPECT_FALSE(dense_linear_applies(x.to(at::kBFloat16), w.to(at::kBFloat16)));
  EXPECT_FALSE(dense_linear_applies(x.narrow(1, 0, 8), w));  // 32 rows: too few
  EXPECT_FALSE(dense_linear_applies(x, w.narrow(0, 0, 8)));  // 8 outputs: mostly masked lanes
  EXPECT_FALSE(dense_linear_applies(x, SeededRandn({4096, 128}, 10).requires_grad_(true)));  // 2 MiB of weight
  EXPECT_FALSE(dense_linear_applies(x, w, SeededRandn({383}, 11)));                          // a bias of the wrong size
  {
    train::AutocastGuard autocast(at::kCPU, true);  // the product would run in bf16
    EXPECT_FALSE(dense_linear_applies(x, w));
  }
  EXPECT_TRUE(dense_linear_applies(x, w));
  set_dense_linear_kernels(false);
  EXPECT_FALSE(dense_linear_applies(x, w));
  set_dense_linear_kernels(true);
  EXPECT_TRUE(dense_linear_applies(x, w));
}

}  // namespace
}  // namespace swarmt::ops::dense_linear_test
