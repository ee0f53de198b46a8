// The fused CPU training ops (one pass forward, one backward) against the ATen ops they replace, run in
// fp64 as the reference: values and every gradient, with the shapes the models use and odd ones.
#include <gtest/gtest.h>

#include "ops/recurrent_test_inputs.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/matvec.h"
#include "swarmt/ops/rmsnorm.h"
#include "swarmt/ops/rmsnorm_cpu.h"
#include "swarmt/ops/rope.h"
#include "swarmt/ops/rope_cpu.h"
#include "swarmt/ops/short_conv_cpu.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

using swarmt::testing::resets_at;

// An fp32 leaf and its fp64 twin, both requiring grad.
struct Pair {
  at::Tensor f32, f64;
  explicit Pair(const at::Tensor& value)
      : f32(value.clone().requires_grad_(true)), f64(value.to(at::kDouble).requires_grad_(true)) {}
};

TEST(RmsNormCpu, fused_forward_and_backward_equal_the_aten_ops_in_fp64) {
  for (int64_t d : {128, 37}) {
    for (bool with_weight : {true, false}) {
      SCOPED_TRACE("d=" + std::to_string(d) + " weight=" + std::to_string(with_weight));
      Pair x(SeededRandn({3, 5, d}, 1) * 3.0), w(SeededRandn({d}, 2));
      ASSERT_TRUE(rms_norm_cpu_applies(x.f32, with_weight ? w.f32 : at::Tensor()));
      const at::Tensor y32 = rms_norm(x.f32, with_weight ? w.f32 : at::Tensor(), 1e-6);  // takes the fused path
      const at::Tensor y64 = rms_norm(x.f64, with_weight ? w.f64 : at::Tensor(), 1e-6);  // the ATen ops
      EXPECT_NE(y32.grad_fn()->name().find("RmsNormFunction"), std::string::npos) << y32.grad_fn()->name();
      EXPECT_TRUE(TensorsClose(y32, y64.to(at::kFloat), 1e-6, 1e-6));
      const at::Tensor up = SeededRandn({3, 5, d}, 3);
      std::vector<at::Tensor> in32{x.f32}, in64{x.f64};
      if (with_weight) {
        in32.push_back(w.f32);
        in64.push_back(w.f64);
      }
      const auto g32 = GradientsOf(y32, in32, up), g64 = GradientsOf(y64, in64, up);
      for (size_t i = 0; i < g32.size(); ++i) EXPECT_TRUE(TensorsClose(g32[i], g64[i].to(at::kFloat), 1e-5, 1e-5));
    }
  }
}

TEST(RmsNormCpu, a_weight_without_gradient_gets_none) {
  Pair x(SeededRandn({4, 8}, 4));
  const at::Tensor w = SeededRandn({8}, 5);
  const at::Tensor y = rms_norm_cpu(x.f32, w, 1e-6);
  const auto g = GradientsOf(y, {x.f32}, SeededRandn({4, 8}, 6));
  const at::Tensor expected = GradientsOf(rms_norm(x.f64, w.to(at::kDouble), 1e-6), {x.f64}, SeededRandn({4, 8}, 6))[0];
  EXPECT_TRUE(TensorsClose(g[0], expected.to(at::kFloat), 1e-5, 1e-5));
}

TEST(ShortConvSiluCpu, fused_forward_and_backward_equal_silu_of_short_conv_with_resets) {
  struct Case { int64_t batch, length, channels, taps; bool resets; };
  for (const Case c : {Case{2, 70, 96, 4, false}, Case{3, 33, 5, 4, true}, Case{2, 9, 7, 1, true}, Case{1, 3, 4, 4, false}}) {
    SCOPED_TRACE("N=" + std::to_string(c.length) + " C=" + std::to_string(c.channels) + " K=" + std::to_string(c.taps));
    Pair x(SeededRandn({c.batch, c.length, c.channels}, 7)), w(SeededRandn({c.channels, c.taps}, 8));
    const at::Tensor resets = c.resets ? resets_at(c.batch, c.length, {0, 2, 5, 17}) : at::Tensor();
    const at::Tensor y32 = short_conv_silu_cpu(x.f32, w.f32, resets);
    const at::Tensor y64 = at::silu(short_conv(x.f64, w.f64, {}, resets).first);
    EXPECT_TRUE(TensorsClose(y32, y64.to(at::kFloat), 1e-5, 1e-5));
    const at::Tensor up = SeededRandn({c.batch, c.length, c.channels}, 9);
    const auto g32 = GradientsOf(y32, {x.f32, w.f32}, up), g64 = GradientsOf(y64, {x.f64, w.f64}, up);
    EXPECT_TRUE(TensorsClose(g32[0], g64[0].to(at::kFloat), 1e-5, 1e-5));
    EXPECT_TRUE(TensorsClose(g32[1], g64[1].to(at::kFloat), 1e-4, 1e-5));
  }
}

TEST(RopeCpu, fused_rotation_of_a_strided_view_equals_the_aten_ops_forward_and_backward) {
  // x laid out (B, N, H, D) and seen as (B, H, N, D), as the attention layer's projections are.
  for (int64_t rotary : {16, 10}) {
    for (bool batched : {false, true}) {
      SCOPED_TRACE("rotary=" + std::to_string(rotary) + " batched tables=" + std::to_string(batched));
      const int64_t B = 2, N = 7, H = 3, D = 16;
      Pair base(SeededRandn({B, N, H, D}, 10));
      const at::Tensor x32 = base.f32.transpose(1, 2), x64 = base.f64.transpose(1, 2);
      const at::Tensor inv_freq = rope_inv_freq(rotary, 10000.0);
      const at::Tensor positions =
          batched ? at::arange(2 * N, at::kLong).view({2, N}) * 3 : at::arange(N, at::kLong) + 5;
      const auto [c32, s32] = rope_cos_sin(positions, inv_freq, at::kFloat);
      const auto [c64, s64] = rope_cos_sin(positions, inv_freq, at::kDouble);
      ASSERT_TRUE(apply_rope_cpu_applies(x32, c32, s32));
      const at::Tensor y32 = apply_rope(x32, c32, s32);
      const at::Tensor y64 = apply_rope(x64, c64, s64);
      EXPECT_NE(y32.grad_fn()->name().find("RopeFunction"), std::string::npos) << y32.grad_fn()->name();
      EXPECT_TRUE(y32.is_contiguous());
      EXPECT_TRUE(TensorsClose(y32, y64.to(at::kFloat), 1e-5, 1e-6));
      const at::Tensor up = SeededRandn({B, H, N, D}, 11);
      const auto g32 = GradientsOf(y32, {base.f32}, up), g64 = GradientsOf(y64, {base.f64}, up);
      EXPECT_TRUE(TensorsClose(g32[0], g64[0].to(at::kFloat), 1e-5, 1e-6));
    }
  }
}

TEST(LinearGroup, training_through_one_gemm_equals_separate_products_and_their_gradients) {
  for (bool bias : {false, true}) {
    SCOPED_TRACE("bias=" + std::to_string(bias));
    Pair x(SeededRandn({2, 9, 12}, 12)), w1(SeededRandn({5, 12}, 13)), w2(SeededRandn({2, 12}, 14)), w3(SeededRandn({7, 12}, 15));
    Pair b1(SeededRandn({5}, 16)), b2(SeededRandn({2}, 17)), b3(SeededRandn({7}, 18));
    const std::vector<at::Tensor> biases32 = bias ? std::vector<at::Tensor>{b1.f32, b2.f32, b3.f32} : std::vector<at::Tensor>{};
    const auto ys = linear_group(x.f32, {w1.f32, w2.f32, w3.f32}, biases32);
    ASSERT_EQ(ys.size(), 3u);
    EXPECT_TRUE(AutogradGraphHas(ys[0], "SplitWithSizesBackward"));  // views of one product
    const std::vector<Pair*> ws{&w1, &w2, &w3}, bs{&b1, &b2, &b3};
    at::Tensor loss32 = at::zeros({}, at::kFloat), loss64 = at::zeros({}, at::kDouble);
    for (size_t j = 0; j < 3; ++j) {
      const at::Tensor expected = at::linear(x.f64, ws[j]->f64, bias ? bs[j]->f64 : at::Tensor());
      EXPECT_TRUE(TensorsClose(ys[j], expected.to(at::kFloat), 1e-5, 1e-5));
      const at::Tensor up = SeededRandn(ys[j].sizes(), 20 + j);
      loss32 = loss32 + (ys[j] * up).sum();
      loss64 = loss64 + (expected * up.to(at::kDouble)).sum();
    }
    std::vector<at::Tensor> in32{x.f32, w1.f32, w2.f32, w3.f32}, in64{x.f64, w1.f64, w2.f64, w3.f64};
    if (bias)
      for (auto* b : bs) {
        in32.push_back(b->f32);
        in64.push_back(b->f64);
      }
    const auto g32 = torch::autograd::grad({loss32}, in32), g64 = torch::autograd::grad({loss64}, in64);
    for (size_t i = 0; i < g32.size(); ++i) EXPECT_TRUE(TensorsClose(g32[i], g64[i].to(at::kFloat), 1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace swarmt::ops
