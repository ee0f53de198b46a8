// The decoding matrix-vector kernels: every SIMD level this CPU has (and the portable one) computes
// at::linear for fp32 and bf16 weights, at the shapes with tails (in, out not multiples of the vector
// width or of the 4-row block), and the GEMM path keeps everything the kernels do not cover.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "swarmt/ops/matvec.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

const std::vector<std::string> kLevels = {"portable", "avx2", "avx512", "avx512-bf16"};

// Runs `check` once per kernel level this CPU supports, restoring the best level afterwards.
template <typename F>
void for_each_level(F check) {
  const std::string best = matvec_isa();
  int ran = 0;
  for (const auto& level : kLevels) {
    if (!set_matvec_isa(level)) continue;
    SCOPED_TRACE("kernel level " + level);
    check();
    ++ran;
  }
  ASSERT_TRUE(set_matvec_isa(best));
  EXPECT_GE(ran, 1);  // the portable level exists everywhere
}

struct Shape {
  int64_t rows, in, out;
};
const std::vector<Shape> kShapes = {{1, 1, 1},   {1, 7, 3},    {2, 16, 4},   {1, 33, 5},  {3, 64, 9},
                                    {4, 100, 67}, {1, 960, 130}, {1, 1000, 7}, {2, 2560, 12}};

TEST(Matvec, fp32_equals_the_exact_product_to_fp32_rounding) {
  at::NoGradGuard no_grad;
  for_each_level([] {
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
  for_each_level([] {
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
  for_each_level([] {
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
