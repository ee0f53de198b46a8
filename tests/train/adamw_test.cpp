#include "swarmt/train/adamw.h"

#include <gtest/gtest.h>

#include "swarmt/train/lr_schedule.h"
#include "test_util.h"

namespace swarmt::train {
namespace {

// Two steps of AdamW on a 2x2 weight equal the update written out by hand.
TEST(AdamW, update_matches_the_written_out_formula) {
  auto w = at::tensor(std::vector<double>{1.0, -2.0, 0.5, 3.0}, at::kDouble).view({2, 2}).clone().requires_grad_(true);
  AdamWOptions o;
  o.beta1 = 0.9;
  o.beta2 = 0.99;
  o.eps = 1e-8;
  o.weight_decay = 0.1;
  AdamW opt(std::vector<NamedParameter>{{"layer.weight", w}}, o);
  auto expected = w.detach().clone();
  at::Tensor m = at::zeros_like(expected), v = at::zeros_like(expected);
  const double lr = 0.01;
  for (int t = 1; t <= 2; ++t) {
    auto g = at::tensor(std::vector<double>{0.3 * t, -0.1, 0.2, 0.05 * t}, at::kDouble).view({2, 2});
    w.mutable_grad() = g.clone();
    opt.step(lr);
    m = 0.9 * m + 0.1 * g;
    v = 0.99 * v + 0.01 * g * g;
    at::Tensor mhat = m / (1 - std::pow(0.9, t)), vhat = v / (1 - std::pow(0.99, t));
    expected = expected * (1 - lr * 0.1) - lr * mhat / (vhat.sqrt() + 1e-8);
    EXPECT_TENSORS_CLOSE(w.detach(), expected, 1e-14);
  }
}

// fp32 parameters take the fused one-pass update; it equals the written-out formula to fp32 accuracy,
// with and without weight decay, over sizes that fill and miss the vector width.
TEST(AdamW, fused_fp32_update_matches_the_written_out_formula) {
  for (int64_t n : {1, 13, 70000}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(n));
    auto w = at::randn({n}, gen).requires_grad_(true);     // 1-D: no decay
    auto m2 = at::randn({2, n}, gen).requires_grad_(true);  // a matrix: decays
    AdamWOptions o;
    o.weight_decay = 0.1;
    AdamW opt(std::vector<NamedParameter>{{"norm.weight", w}, {"layer.weight", m2}}, o);
    std::vector<at::Tensor> expected{w.detach().to(at::kDouble), m2.detach().to(at::kDouble)};
    std::vector<at::Tensor> m{at::zeros_like(expected[0]), at::zeros_like(expected[1])};
    std::vector<at::Tensor> v{at::zeros_like(expected[0]), at::zeros_like(expected[1])};
    const double lr = 0.003;
    for (int t = 1; t <= 3; ++t) {
      const std::vector<at::Tensor> grads{at::randn({n}, gen), at::randn({2, n}, gen)};
      w.mutable_grad() = grads[0].clone();
      m2.mutable_grad() = grads[1].clone();
      opt.step(lr);
      for (size_t i = 0; i < 2; ++i) {
        const at::Tensor g = grads[i].to(at::kDouble);
        m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
        v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
        const at::Tensor mhat = m[i] / (1 - std::pow(o.beta1, t)), vhat = v[i] / (1 - std::pow(o.beta2, t));
        const double decay = i == 1 ? 1 - lr * o.weight_decay : 1.0;
        expected[i] = expected[i] * decay - lr * mhat / (vhat.sqrt() + o.eps);
      }
      EXPECT_TRUE(TensorsClose(w.detach(), expected[0].to(at::kFloat), 1e-6, 1e-6));
      EXPECT_TRUE(TensorsClose(m2.detach(), expected[1].to(at::kFloat), 1e-6, 1e-6));
    }
  }
}

TEST(AdamW, norms_biases_gates_and_embeddings_get_no_weight_decay) {
  auto matrix = at::zeros({2, 2});
  EXPECT_TRUE(default_decays("model.layers.0.mlp.up_proj.weight", matrix, false));
  EXPECT_FALSE(default_decays("model.layers.0.input_layernorm.weight", at::zeros({2}), false));
  EXPECT_FALSE(default_decays("model.layers.0.mlstm.igate_proj.bias", at::zeros({2}), false));
  EXPECT_FALSE(default_decays("model.layers.0.gdn.A_log", at::zeros({2}), false));
  EXPECT_FALSE(default_decays("model.embed_tokens.weight", matrix, false));
  EXPECT_TRUE(default_decays("model.embed_tokens.weight", matrix, true));
}

TEST(AdamW, state_round_trips_by_name) {
  auto w = at::randn({3, 2}).requires_grad_(true);
  AdamW a({{"w", w}}, AdamWOptions{});
  w.mutable_grad() = at::randn({3, 2});
  a.step(0.1);
  auto saved = a.state_tensors();
  AdamW b({{"w", w}}, AdamWOptions{});
  b.load_state_tensors([&](const std::string& n) {
    for (auto& [k, t] : saved) if (k == n) return t;
    return at::Tensor();
  }, "opt.safetensors");
  EXPECT_EQ(b.steps(), 1);
  EXPECT_TENSORS_CLOSE(b.state_tensors()[0].second, saved[0].second, 0.0);
}

TEST(ClipGradNorm, scales_to_the_maximum_and_reports_the_norm) {
  auto w = at::zeros({2}).requires_grad_(true);
  w.mutable_grad() = at::tensor({3.0f, 4.0f});
  double norm = clip_grad_norm({{"w", w}}, 1.0);
  EXPECT_NEAR(norm, 5.0, 1e-6);
  EXPECT_NEAR(w.grad().norm().item<double>(), 1.0, 1e-5);
}

TEST(LrSchedule, warmup_cosine_and_wsd_shapes) {
  LrSchedule cosine;
  cosine.type = "cosine";
  cosine.warmup_steps = 10;
  cosine.min_ratio = 0.1;
  EXPECT_NEAR(cosine.multiplier(0, 100), 0.1, 1e-12);
  EXPECT_NEAR(cosine.multiplier(9, 100), 1.0, 1e-12);
  EXPECT_NEAR(cosine.multiplier(99, 100), 0.1, 1e-12);
  EXPECT_GT(cosine.multiplier(40, 100), cosine.multiplier(60, 100));
  LrSchedule wsd;
  wsd.type = "wsd";
  wsd.warmup_steps = 0;
  wsd.decay_fraction = 0.2;
  wsd.min_ratio = 0.0;
  EXPECT_EQ(wsd.multiplier(79, 100), 1.0);
  EXPECT_NEAR(wsd.multiplier(99, 100), 0.0, 1e-12);
  EXPECT_NEAR(wsd.multiplier(89, 100), 0.5, 1e-12);
}

}  // namespace
}  // namespace swarmt::train
