// The gated MLP's fused act(g) ⊙ u (training on CPU) against the ATen activation and product in fp64.
#include "swarmt/nn/gated_product_cpu.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace swarmt::nn {
namespace {

TEST(GatedProductCpu, fused_forward_and_backward_equal_the_aten_ops_for_silu_and_gelu) {
  for (Activation act : {Activation::SiLU, Activation::GeluTanh}) {
    for (int64_t n : {384, 13}) {
      SCOPED_TRACE("act=" + std::to_string(static_cast<int>(act)) + " n=" + std::to_string(n));
      at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(n));
      // Values out to ±12 reach both tails of the activations.
      const at::Tensor value = at::randn({3, 5, 2 * n}, gen, at::TensorOptions().dtype(at::kFloat)) * 4.0;
      const at::Tensor gu32 = value.clone().requires_grad_(true), gu64 = value.to(at::kDouble).requires_grad_(true);
      const at::Tensor h32 = gated_product_cpu(gu32, act);
      const at::Tensor h64 = apply_activation(gu64.narrow(-1, 0, n), act) * gu64.narrow(-1, n, n);
      EXPECT_TRUE(TensorsClose(h32, h64.to(at::kFloat), 1e-5, 1e-5));
      const at::Tensor up = at::randn({3, 5, n}, gen, at::TensorOptions().dtype(at::kFloat));
      const at::Tensor g32 = torch::autograd::grad({h32}, {gu32}, {up})[0];
      const at::Tensor g64 = torch::autograd::grad({h64}, {gu64}, {up.to(at::kDouble)})[0];
      EXPECT_TRUE(TensorsClose(g32, g64.to(at::kFloat), 1e-5, 1e-5));
    }
  }
}

TEST(GatedMLP, training_path_equals_the_unfused_ops_and_their_gradients) {
  at::manual_seed(3);
  GatedMLP mlp(16, 24, Activation::SiLU);
  const at::Tensor x = at::randn({2, 5, 16}).requires_grad_(true);
  const at::Tensor y = mlp->forward(x);  // fused: gate and up in one GEMM
  EXPECT_TRUE(AutogradGraphHas(y, "GatedProductFunction"));
  const at::Tensor expected = at::linear(at::silu(at::linear(x, mlp->gate_proj->weight)) * at::linear(x, mlp->up_proj->weight),
                                         mlp->down_proj->weight);
  EXPECT_TRUE(TensorsClose(y, expected, 1e-6, 1e-5));
  const at::Tensor up = at::randn({2, 5, 16});
  const std::vector<at::Tensor> inputs{x, mlp->gate_proj->weight, mlp->up_proj->weight, mlp->down_proj->weight};
  const auto g = torch::autograd::grad({y}, inputs, {up});
  const auto e = torch::autograd::grad({expected}, inputs, {up});
  for (size_t i = 0; i < g.size(); ++i) EXPECT_TRUE(TensorsClose(g[i], e[i], 1e-6, 1e-5));
}

}  // namespace
}  // namespace swarmt::nn
