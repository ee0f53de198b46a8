// The decoding matrix-vector kernels: every SIMD level this CPU has (and the portable one) computes
// at::linear for fp32 and bf16 weights, at the shapes with tails (in, out not multiples of the vector
// width or of the 4-row block), and the GEMM path keeps everything the kernels do not cover.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/kernel_levels.h"
#include "swarmt/ops/matvec.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

struct Shape {
  int64_t rows, in, out;
};
const std::vector<Shape> kShapes = {{1, 1, 1},   {1, 7, 3},    {2, 16, 4},   {1, 33, 5},  {3, 64, 9},
                                    {4, 100, 67}, {1, 960, 130}, {1, 1000, 7}, {2, 2560, 12},
                                    // long rows, enough per task for the spread groups, with remainders
                                    {1, 960, 4099}, {2, 600, 2051}};

TEST(Matvec, fp32_equals_the_exact_product_to_fp32_rounding) {
  at::NoGradGuard no_grad;
  for_each_kernel_level([] {
    for (const auto& s : kShapes) {
      auto x = at::randn({s.rows, s.in});
      auto w = at::randn({s.out, s.in});
      ASSERT_TRUE(matvec_applies(x, w, {}));
      auto y = matvec_linear(x, w);
      auto exact = at::matmul(x.to(at::kDouble), w.to(at::kDouble).t());
      // fp32 summation error grows like sqrt(in) ulps of the sum of |terms|.
      auto bound = at::matmul(x.abs().to(at::kDouble), w.abs().to(at::kDouble).t()) * 1e-6 + 1e-30;
      EXPECT_EQ(y.scalar_type(), at::kFloat);
      EXPECT_TRUE(((y.to(at::kDouble) - exact).abs() <= bound).all().item<bool>())
          << "rows " << s.rows << " in " << s.in << " out " << s.out;
    }
  });
}

TEST(Matvec, bf16_is_the_product_of_the_stored_values_rounded_once_to_bf16) {
  at::NoGradGuard no_grad;
  for_each_kernel_level([] {
    for (const auto& s : kShapes) {
      auto x = at::randn({s.rows, s.in}).to(at::kBFloat16);
      auto w = at::randn({s.out, s.in}).to(at::kBFloat16);
      auto y = matvec_linear(x, w);
      EXPECT_EQ(y.scalar_type(), at::kBFloat16);
      auto exact = at::matmul(x.to(at::kDouble), w.to(at::kDouble).t());
      // One rounding to bf16 (relative 2^-9) on top of an fp32 sum (relative ~1e-6 of Σ|terms|).
      auto scale = at::matmul(x.abs().to(at::kDouble), w.abs().to(at::kDouble).t());
      auto bound = exact.abs() * std::ldexp(1.0, -8) + scale * 1e-6 + 1e-30;
      EXPECT_TRUE(((y.to(at::kDouble) - exact).abs() <= bound).all().item<bool>())
          << "rows " << s.rows << " in " << s.in << " out " << s.out;
    }
  });
}

TEST(Matvec, bias_and_leading_dimensions_follow_at_linear) {
  at::NoGradGuard no_grad;
  for_each_kernel_level([] {
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      auto x = at::randn({2, 1, 48}).to(dtype);
      auto w = at::randn({20, 48}).to(dtype);
      auto b = at::randn({20}).to(dtype);
      auto y = ops::linear(x, w, b);
      auto reference = at::linear(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble));
      EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 1, 20}));
      const double tol = dtype == at::kFloat ? 1e-4 : 0.1;
      EXPECT_TENSORS_CLOSE(y.to(at::kDouble), reference, tol);
    }
  });
}

TEST(Matvec, autograd_many_rows_and_other_layouts_take_the_gemm_path) {
  auto w = at::randn({8, 16});
  auto x = at::randn({1, 16});
  {
    at::NoGradGuard no_grad;
    EXPECT_FALSE(matvec_applies(at::randn({kMatvecMaxRows + 1, 16}), w, {}));  // a GEMM reuses W
    EXPECT_FALSE(matvec_applies(x, at::randn({16, 8}).t(), {}));             // W not row-major
    EXPECT_FALSE(matvec_applies(x.to(at::kBFloat16), w, {}));               // mixed dtypes
    EXPECT_FALSE(matvec_applies(x.to(at::kDouble), w.to(at::kDouble), {}));  // no double kernel
    EXPECT_TRUE(matvec_applies(x, w, {}));
  }
  // With autograd recording, linear is at::linear and gradients flow.
  auto wg = w.clone().requires_grad_(true);
  EXPECT_FALSE(matvec_applies(x, wg, {}));
  auto y = ops::linear(x, wg);
  y.sum().backward();
  EXPECT_TENSORS_CLOSE(wg.grad(), x.expand({8, 16}), 1e-6);
}

TEST(Matvec, a_group_of_weights_equals_each_product_alone) {
  at::NoGradGuard no_grad;
  for_each_kernel_level([] {
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      auto x = at::randn({1, 2, 100}).to(dtype);  // two rows: the group splits them like one weight does
      std::vector<at::Tensor> weights = {at::randn({67, 100}).to(dtype), at::randn({5, 100}).to(dtype),
                                         at::randn({130, 100}).to(dtype)};
      std::vector<at::Tensor> biases = {at::randn({67}).to(dtype), at::Tensor(), at::randn({130}).to(dtype)};
      auto group = linear_group(x, weights, biases);
      ASSERT_EQ(group.size(), 3u);
      for (size_t j = 0; j < 3; ++j) {
        auto alone = ops::linear(x, weights[j], biases[j]);
        EXPECT_EQ(group[j].sizes(), alone.sizes());
        EXPECT_TRUE(group[j].is_contiguous());
        EXPECT_TRUE(at::equal(group[j], alone)) << "weight " << j << " in " << c10::toString(dtype);
      }
      // Unrounded: the fp32 products side by side.
      auto fp32 = matvec_group_fp32(x, weights);
      EXPECT_EQ(fp32.sizes(), (std::vector<int64_t>{2, 67 + 5 + 130}));
      auto exact = at::matmul(x.reshape({2, 100}).to(at::kDouble), at::cat(weights).to(at::kDouble).t());
      EXPECT_TENSORS_CLOSE(fp32.to(at::kDouble), exact, 1e-3);
    }
  });
}

TEST(Matvec, a_group_outside_the_matvec_path_falls_back_to_at_linear) {
  auto x = at::randn({1, 16});
  auto wg = at::randn({8, 16}).requires_grad_(true);
  auto w = at::randn({4, 16});
  auto outs = linear_group(x, {wg, w});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TENSORS_CLOSE(outs[1], at::linear(x, w), 1e-6);
  outs[0].sum().backward();  // the gradient flows through the fallback
  EXPECT_TENSORS_CLOSE(wg.grad(), x.expand({8, 16}), 1e-6);
}

TEST(Matvec, vecmat_accumulates_probability_weighted_rows) {
  for_each_kernel_level([] {
    for (auto [slots, d, rows] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {7, 64, 3}, {33, 80, 5}, {512, 16, 4}}) {
      auto p = at::rand({rows, slots});
      for (auto dtype : {at::kFloat, at::kBFloat16}) {
        auto v = at::randn({slots, d}).to(dtype);
        auto y = at::randn({rows, d});  // accumulated into
        auto expected = y.to(at::kDouble) + at::matmul(p.to(at::kDouble), v.to(at::kDouble));
        if (dtype == at::kFloat)
          vecmat_rows(v.data_ptr<float>(), slots, d, p.data_ptr<float>(), rows, slots, y.data_ptr<float>());
        else
          vecmat_rows(v.data_ptr<at::BFloat16>(), slots, d, p.data_ptr<float>(), rows, slots, y.data_ptr<float>());
        EXPECT_TENSORS_CLOSE(y.to(at::kDouble), expected, 1e-4);
      }
    }
  });
}

TEST(Matvec, unknown_or_unsupported_levels_are_refused_and_change_nothing) {
  const std::string before = matvec_isa();
  EXPECT_FALSE(set_matvec_isa("avx1024"));
  EXPECT_EQ(matvec_isa(), before);
  EXPECT_TRUE(set_matvec_isa("portable"));
  EXPECT_EQ(matvec_isa(), "portable");
  EXPECT_TRUE(set_matvec_isa(before));
}

}  // namespace
}  // namespace swarmt::ops
