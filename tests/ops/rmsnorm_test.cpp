// RMSNorm: the formula, the two cast orders of HF Llama and Gemma-3, and the gradient.
#include <gtest/gtest.h>

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/ops/rmsnorm.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

TEST(RmsNormTest, matches_the_formula) {
  auto x = at::randn({3, 5, 16}, at::kDouble);
  auto weight = at::randn({16}, at::kDouble);
  auto expected = x / at::sqrt((x * x).mean(-1, true) + 1e-6) * weight;
  EXPECT_TENSORS_CLOSE(rms_norm(x, weight, 1e-6), expected, 1e-14);
  EXPECT_TENSORS_CLOSE(rms_norm(x, {}, 1e-6), x / at::sqrt((x * x).mean(-1, true) + 1e-6), 1e-14);
}

TEST(RmsNormTest, cast_modes_round_before_or_after_the_weight) {
  auto x = (at::randn({64, 32}) * 3).to(at::kBFloat16);
  auto weight = (at::randn({32}) + 1).to(at::kBFloat16);
  auto xf = x.to(at::kFloat);
  auto normed = xf * at::rsqrt((xf * xf).mean(-1, true) + 1e-5);
  auto llama = normed.to(at::kBFloat16) * weight;                   // cast, then multiply in bf16
  auto gemma = (normed * weight.to(at::kFloat)).to(at::kBFloat16);  // multiply in fp32, cast at the end
  auto cast_first = rms_norm(x, weight, 1e-5, /*cast_before_weight=*/true);
  auto cast_last = rms_norm(x, weight, 1e-5, /*cast_before_weight=*/false);
  EXPECT_EQ(cast_first.scalar_type(), at::kBFloat16);
  EXPECT_EQ(cast_last.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(cast_first, llama));
  EXPECT_TRUE(at::equal(cast_last, gemma));
  EXPECT_FALSE(at::equal(cast_first, cast_last));  // the order is observable in bf16
}

TEST(RmsNormTest, decode_loop_equals_the_aten_ops) {
  // A few rows without autograd take a loop; with autograd recording, the ATen ops. Same values.
  for (auto dtype : {at::kFloat, at::kBFloat16})
    for (auto wdtype : {at::kFloat, at::kBFloat16})
      for (bool cast_first : {true, false}) {
        auto x = (at::randn({2, 1, 96}) * 3).to(dtype);
        auto weight = (at::randn({96}) + 1).to(wdtype);
        at::Tensor loop;
        {
          at::NoGradGuard no_grad;
          loop = rms_norm(x, weight, 1e-6, cast_first);
        }
        auto aten = rms_norm(x.clone().requires_grad_(true), weight, 1e-6, cast_first).detach();
        EXPECT_EQ(loop.scalar_type(), dtype);
        const double tol = dtype == at::kFloat ? 1e-6 : std::ldexp(1.0, -7);  // fp32 sum order; 1 bf16 ulp
        EXPECT_TRUE(at::allclose(loop.to(at::kDouble), aten.to(at::kDouble), tol, 1e-7))
            << c10::toString(dtype) << " weight " << c10::toString(wdtype) << " cast_first " << cast_first;
      }
}

TEST(RmsNormTest, gradient_matches_finite_differences) {
  auto x = at::randn({2, 6}, at::kDouble).requires_grad_(true);
  auto weight = at::randn({6}, at::kDouble).requires_grad_(true);
  auto upstream = at::randn({2, 6}, at::kDouble);
  auto grads = torch::autograd::grad({rms_norm(x, weight, 1e-3)}, {x, weight}, {upstream});
  at::NoGradGuard no_grad;
  const double h = 1e-6;
  for (int which = 0; which < 2; ++which) {
    auto flat = (which == 0 ? x : weight).view(-1);
    auto numeric = at::zeros_like(flat);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double saved = flat[i].item<double>();
      flat[i] = saved + h;
      const double plus = (rms_norm(x, weight, 1e-3) * upstream).sum().item<double>();
      flat[i] = saved - h;
      const double minus = (rms_norm(x, weight, 1e-3) * upstream).sum().item<double>();
      flat[i] = saved;
      numeric[i] = (plus - minus) / (2 * h);
    }
    EXPECT_TENSORS_CLOSE(grads[which].view(-1), numeric, 1e-8);
  }
}

TEST(RmsNormTest, wrong_weight_shape_is_an_input_error) {
  try {
    rms_norm(at::randn({2, 8}), at::ones({7}), 1e-6);
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos);
  }
}

}  // namespace
}  // namespace swarmt::ops
