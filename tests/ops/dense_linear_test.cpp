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
