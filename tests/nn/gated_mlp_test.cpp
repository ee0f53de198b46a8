// The gated MLP's decode path (gate and up in one pass, the activation and product in one loop) gives
// the values of the unfused ops it replaces, for both activations, in fp32 and bf16.
#include <gtest/gtest.h>

#include <cmath>

#include "swarmt/nn/gated_mlp.h"

namespace swarmt::nn {
namespace {

TEST(GatedMLP, decode_path_equals_the_unfused_ops) {
  torch::manual_seed(3);
  for (auto act : {Activation::SiLU, Activation::GeluTanh})
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      GatedMLP mlp(48, 136, act);
      mlp->to(dtype);
      for (auto& p : mlp->parameters()) p.set_requires_grad(false);
      auto x = at::randn({2, 1, 48}).to(dtype);
      at::Tensor fused;
      {
        at::NoGradGuard no_grad;
        fused = mlp->forward(x);
      }
      // With autograd recording on x, the module takes at::linear and the ATen activation.
      auto unfused = mlp->forward(x.clone().requires_grad_(true)).detach();
      EXPECT_EQ(fused.scalar_type(), dtype);
      EXPECT_EQ(fused.sizes(), unfused.sizes());
      if (dtype == at::kFloat) {  // the same products summed in another order
        EXPECT_TRUE(at::allclose(fused, unfused, 1e-5, 1e-6)) << (act == Activation::SiLU ? "silu" : "gelu");
        continue;
      }
      // bf16: both round the same intermediate values, but the down projection sums in another order and
      // the activation's exp/tanh comes from another library, so single bf16 roundings may differ. The
      // fused path must be as close to the exact fp64 result as the unfused one.
      auto w = [&](const torch::nn::Linear& l) { return l->weight.to(at::kDouble); };
      auto xd = x.to(at::kDouble);
      auto gate = at::linear(xd, w(mlp->gate_proj));
      auto activated = act == Activation::SiLU ? at::silu(gate) : at::gelu(gate, "tanh");
      auto exact = at::linear(activated * at::linear(xd, w(mlp->up_proj)), w(mlp->down_proj));
      const double fused_error = (fused.to(at::kDouble) - exact).abs().max().item<double>();
      const double unfused_error = (unfused.to(at::kDouble) - exact).abs().max().item<double>();
      EXPECT_LE(fused_error, 2.0 * unfused_error + 1e-6)
          << (act == Activation::SiLU ? "silu" : "gelu") << ": fused " << fused_error << ", unfused " << unfused_error;
    }
}

}  // namespace
}  // namespace swarmt::nn
