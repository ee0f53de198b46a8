// Gated DeltaNet kernels: chunkwise (UT transform) == recurrent, decode == chunkwise, continuation,
// document resets, and the manual chunkwise backward against autograd through the recurrent reference
// and finite differences. All in fp64.
#include <gtest/gtest.h>

#include "ops/kernel_levels.h"
#include "ops/recurrent_test_inputs.h"
#include "swarmt/core/error.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/gated_delta_cpu.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

using swarmt::testing::finite_difference;
using swarmt::testing::GatedDeltaInputs;
using swarmt::testing::random_gated_delta_inputs;
using swarmt::testing::resets_at;

using testing::kTol;

GatedDeltaState random_state(int64_t batch, int64_t heads, int64_t k_dim, int64_t v_dim, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return {at::randn({batch, heads, k_dim, v_dim}, gen, swarmt::testing::f64())};
}

GatedDeltaOptions with_chunk(int64_t chunk) {
  GatedDeltaOptions options;
  options.chunk_size = chunk;
  return options;
}

TEST(GatedDeltaKernel, chunkwise_equals_recurrent_for_any_length_and_chunk) {
  for (int64_t length : {1, 3, 16, 37}) {
    for (int64_t chunk : {1, 4, 16, 64}) {
      SCOPED_TRACE("N=" + std::to_string(length) + " L=" + std::to_string(chunk));
      GatedDeltaInputs in = random_gated_delta_inputs(2, 3, length, 4, 5, 200 + length);
      auto [o_ref, s_ref] = gated_delta_recurrent_reference(in.q, in.k, in.v, in.beta, in.g, std::nullopt, 0.0);
      auto [o, s] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, with_chunk(chunk));
      EXPECT_TENSORS_CLOSE(o, o_ref, kTol);
      EXPECT_TENSORS_CLOSE(s.S, s_ref.S, kTol);
    }
  }
}

TEST(GatedDeltaKernel, chunkwise_with_initial_state_and_custom_scale_equals_recurrent) {
  GatedDeltaInputs in = random_gated_delta_inputs(2, 2, 21, 4, 3, 211);
  GatedDeltaState initial = random_state(2, 2, 4, 3, 212);
  auto [o_ref, s_ref] = gated_delta_recurrent_reference(in.q, in.k, in.v, in.beta, in.g, initial, 0.3);
  for (int64_t chunk : {1, 4, 16}) {
    GatedDeltaOptions options = with_chunk(chunk);
    options.scale = 0.3;
    auto [o, s] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, initial, options);
    EXPECT_TENSORS_CLOSE(o, o_ref, kTol);
    EXPECT_TENSORS_CLOSE(s.S, s_ref.S, kTol);
  }
}

TEST(GatedDeltaKernel, chunkwise_with_resets_equals_recurrent) {
  // Resets at position 0, two in one chunk (5, 6), one at a chunk boundary (8), one near the end.
  const int64_t length = 19;
  GatedDeltaInputs in = random_gated_delta_inputs(2, 2, length, 4, 3, 213);
  at::Tensor resets = resets_at(2, length, {0, 5, 6, 8, 17});
  GatedDeltaState initial = random_state(2, 2, 4, 3, 214);
  auto [o_ref, s_ref] = gated_delta_recurrent_reference(in.q, in.k, in.v, in.beta, in.g, initial, 0.0, resets);
  for (int64_t chunk : {1, 4, 16, 64}) {
    SCOPED_TRACE("L=" + std::to_string(chunk));
    auto [o, s] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, initial, with_chunk(chunk), resets);
    EXPECT_TENSORS_CLOSE(o, o_ref, kTol);
    EXPECT_TENSORS_CLOSE(s.S, s_ref.S, kTol);
  }
}

TEST(GatedDeltaKernel, reset_at_start_ignores_the_initial_state) {
  GatedDeltaInputs in = random_gated_delta_inputs(2, 2, 9, 4, 3, 215);
  at::Tensor resets = at::zeros({2, 9}, at::kBool);
  resets.select(1, 0).fill_(true);
  auto [o_fresh, s_fresh] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, with_chunk(4));
  auto [o_reset, s_reset] =
      gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, random_state(2, 2, 4, 3, 216), with_chunk(4), resets);
  EXPECT_TENSORS_CLOSE(o_reset, o_fresh, kTol);
  EXPECT_TENSORS_CLOSE(s_reset.S, s_fresh.S, kTol);
}

TEST(GatedDeltaKernel, step_by_step_decode_equals_chunkwise) {
  GatedDeltaInputs in = random_gated_delta_inputs(2, 3, 13, 4, 5, 217);
  GatedDeltaState initial = random_state(2, 3, 4, 5, 218);
  auto [o_chunk, s_chunk] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, initial, with_chunk(4));
  GatedDeltaState state = initial;
  for (int64_t t = 0; t < 13; ++t) {
    auto [o, next] = gated_delta_step(in.q.select(2, t), in.k.select(2, t), in.v.select(2, t), in.beta.select(2, t),
                                      in.g.select(2, t), state, 0.0);
    EXPECT_TENSORS_CLOSE(o, o_chunk.select(2, t), kTol);
    state = next;
  }
  EXPECT_TENSORS_CLOSE(state.S, s_chunk.S, kTol);
}

TEST(GatedDeltaKernel, continuing_from_final_state_equals_one_long_run) {
  GatedDeltaInputs in = random_gated_delta_inputs(1, 2, 30, 4, 3, 219);
  auto [o_all, s_all] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, with_chunk(8));
  for (int64_t split : {1, 8, 13}) {
    SCOPED_TRACE("split=" + std::to_string(split));
    auto part = [&](const at::Tensor& x, int64_t start, int64_t len) { return x.narrow(2, start, len); };
    const int64_t rest = 30 - split;
    auto [o1, s1] = gated_delta_chunkwise(part(in.q, 0, split), part(in.k, 0, split), part(in.v, 0, split),
                                          part(in.beta, 0, split), part(in.g, 0, split), std::nullopt, with_chunk(8));
    auto [o2, s2] = gated_delta_chunkwise(part(in.q, split, rest), part(in.k, split, rest), part(in.v, split, rest),
                                          part(in.beta, split, rest), part(in.g, split, rest), s1, with_chunk(8));
    EXPECT_TENSORS_CLOSE(at::cat({o1, o2}, 2), o_all, kTol);
    EXPECT_TENSORS_CLOSE(s2.S, s_all.S, kTol);
  }
}

struct GatedDeltaGrads {
  at::Tensor q, k, v, beta, g, S0;
};

// Gradients of L = Σ o·R + Σ S_N·R_S wrt every input.
GatedDeltaGrads gated_delta_grads(bool chunkwise, const GatedDeltaInputs& in, const GatedDeltaState& initial,
                                  int64_t chunk, const at::Tensor& resets, uint64_t seed) {
  at::Tensor q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_(), v = in.v.clone().requires_grad_();
  at::Tensor beta = in.beta.clone().requires_grad_(), g = in.g.clone().requires_grad_();
  at::Tensor S0 = initial.S.clone().requires_grad_();
  std::pair<at::Tensor, GatedDeltaState> out =
      chunkwise ? gated_delta_chunkwise(q, k, v, beta, g, GatedDeltaState{S0}, with_chunk(chunk), resets)
                : gated_delta_recurrent_reference(q, k, v, beta, g, GatedDeltaState{S0}, 0.0, resets);
  at::Generator gen = at::detail::createCPUGenerator(seed);
  at::Tensor loss = (out.first * at::randn(out.first.sizes(), gen, out.first.options())).sum() +
                    (out.second.S * at::randn(out.second.S.sizes(), gen, out.first.options())).sum();
  loss.backward();
  return {q.grad(), k.grad(), v.grad(), beta.grad(), g.grad(), S0.grad()};
}

void expect_grads_close(const GatedDeltaGrads& a, const GatedDeltaGrads& b, double tol) {
  EXPECT_TENSORS_CLOSE(a.q, b.q, tol);
  EXPECT_TENSORS_CLOSE(a.k, b.k, tol);
  EXPECT_TENSORS_CLOSE(a.v, b.v, tol);
  EXPECT_TENSORS_CLOSE(a.beta, b.beta, tol);
  EXPECT_TENSORS_CLOSE(a.g, b.g, tol);
  EXPECT_TENSORS_CLOSE(a.S0, b.S0, tol);
}

TEST(GatedDeltaKernel, backward_equals_autograd_through_recurrent_reference) {
  for (int64_t chunk : {1, 4, 16}) {
    for (int64_t length : {5, 16, 19}) {
      SCOPED_TRACE("L=" + std::to_string(chunk) + " N=" + std::to_string(length));
      GatedDeltaInputs in = random_gated_delta_inputs(2, 2, length, 4, 3, 230 + length);
      GatedDeltaState initial = random_state(2, 2, 4, 3, 231);
      GatedDeltaGrads ref = gated_delta_grads(false, in, initial, chunk, {}, 232);
      GatedDeltaGrads got = gated_delta_grads(true, in, initial, chunk, {}, 232);
      expect_grads_close(got, ref, 1e-9);
    }
  }
}

TEST(GatedDeltaKernel, backward_with_resets_equals_autograd_through_recurrent_reference) {
  const int64_t length = 19;
  GatedDeltaInputs in = random_gated_delta_inputs(2, 2, length, 4, 3, 233);
  at::Tensor resets = resets_at(2, length, {0, 5, 6, 8, 17});
  GatedDeltaState initial = random_state(2, 2, 4, 3, 234);
  GatedDeltaGrads ref = gated_delta_grads(false, in, initial, 4, resets, 235);
  for (int64_t chunk : {1, 4, 16}) {
    SCOPED_TRACE("L=" + std::to_string(chunk));
    GatedDeltaGrads got = gated_delta_grads(true, in, initial, chunk, resets, 235);
    expect_grads_close(got, ref, 1e-9);
    EXPECT_EQ(got.g.masked_select(resets.unsqueeze(1).expand_as(got.g)).abs().max().item<double>(), 0.0);
  }
}

TEST(GatedDeltaKernel, backward_through_the_final_state_alone_equals_autograd) {
  GatedDeltaInputs in = random_gated_delta_inputs(1, 2, 11, 4, 3, 236);
  auto grads = [&](bool chunkwise) {
    at::Tensor k = in.k.clone().requires_grad_(), v = in.v.clone().requires_grad_();
    at::Tensor beta = in.beta.clone().requires_grad_(), g = in.g.clone().requires_grad_();
    auto [o, s] = chunkwise ? gated_delta_chunkwise(in.q, k, v, beta, g, std::nullopt, with_chunk(4))
                            : gated_delta_recurrent_reference(in.q, k, v, beta, g, std::nullopt, 0.0);
    s.S.pow(2).sum().backward();
    return std::vector<at::Tensor>{k.grad(), v.grad(), beta.grad(), g.grad()};
  };
  std::vector<at::Tensor> ref = grads(false), got = grads(true);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TENSORS_CLOSE(got[i], ref[i], 1e-9);
}

TEST(GatedDeltaKernel, backward_matches_finite_differences_on_a_tiny_case) {
  GatedDeltaInputs in = random_gated_delta_inputs(1, 1, 6, 3, 2, 240);
  GatedDeltaState initial = random_state(1, 1, 3, 2, 241);
  at::Tensor resets = resets_at(1, 6, {3});
  GatedDeltaGrads got = gated_delta_grads(true, in, initial, 4, resets, 242);
  auto loss = [&]() {
    at::NoGradGuard no_grad;
    auto [o, s] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, initial, with_chunk(4), resets);
    at::Generator gen = at::detail::createCPUGenerator(242);
    return ((o * at::randn(o.sizes(), gen, o.options())).sum() + (s.S * at::randn(s.S.sizes(), gen, o.options())).sum())
        .item<double>();
  };
  EXPECT_TENSORS_CLOSE(got.q, finite_difference(loss, in.q), 1e-6);
  EXPECT_TENSORS_CLOSE(got.k, finite_difference(loss, in.k), 1e-6);
  EXPECT_TENSORS_CLOSE(got.v, finite_difference(loss, in.v), 1e-6);
  EXPECT_TENSORS_CLOSE(got.beta, finite_difference(loss, in.beta), 1e-6);
  EXPECT_TENSORS_CLOSE(got.g, finite_difference(loss, in.g), 1e-6);
  EXPECT_TENSORS_CLOSE(got.S0, finite_difference(loss, initial.S), 1e-6);
}

// The raw-buffer CPU kernels against the batched-op path: outputs, final state and every gradient, with
// and without resets and an initial state, chunk sizes that do and do not divide N, dims that are not
// multiples of the SIMD width; fp64 and fp32 (fp32 on every kernel level: small GEMMs with AVX-512, BLAS
// below it).
TEST(GatedDeltaKernel, cpu_kernels_equal_the_batched_ops_forward_and_backward) {
  struct Case {
    int64_t batch, heads, length, k_dim, v_dim, chunk;
    std::vector<int64_t> resets;
  };
  const std::vector<Case> cases = {{2, 2, 19, 4, 3, 4, {0, 5, 6, 8, 17}}, {1, 3, 40, 16, 33, 16, {}},
                                   {2, 1, 70, 20, 40, 64, {1, 63, 64, 66}}, {1, 1, 1, 5, 7, 64, {}},
                                   {1, 2, 130, 32, 64, 64, {}}};
  ASSERT_TRUE(detail::gated_delta_cpu_kernels()) << "no BLAS GEMM found: the CPU kernels would not run";
  for (auto dtype : {at::kDouble, at::kFloat}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "B " << c.batch << " H " << c.heads << " N " << c.length << " Dk "
                                        << c.k_dim << " Dv " << c.v_dim << " L " << c.chunk << " resets "
                                        << c.resets.size() << " " << dtype);
      GatedDeltaInputs in = random_gated_delta_inputs(c.batch, c.heads, c.length, c.k_dim, c.v_dim, 250 + c.length);
      in = {in.q.to(dtype), in.k.to(dtype), in.v.to(dtype), in.beta.to(dtype), in.g.to(dtype)};
      GatedDeltaState initial{random_state(c.batch, c.heads, c.k_dim, c.v_dim, 251).S.to(dtype)};
      at::Tensor resets = c.resets.empty() ? at::Tensor() : resets_at(c.batch, c.length, c.resets);
      auto run = [&](bool cpu_kernels) {
        detail::set_gated_delta_cpu_kernels(cpu_kernels);
        EXPECT_EQ(detail::gated_delta_cpu_kernels(), cpu_kernels);
        at::Tensor q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_();
        at::Tensor v = in.v.clone().requires_grad_(), beta = in.beta.clone().requires_grad_();
        at::Tensor g = in.g.clone().requires_grad_(), s0 = initial.S.clone().requires_grad_();
        auto [o, state] = gated_delta_chunkwise(q, k, v, beta, g, GatedDeltaState{s0}, with_chunk(c.chunk), resets);
        at::Generator gen = at::detail::createCPUGenerator(252);
        ((o * at::randn(o.sizes(), gen, o.options())).sum() +
         (state.S * at::randn(state.S.sizes(), gen, o.options())).sum())
            .backward();
        detail::set_gated_delta_cpu_kernels(true);
        return std::vector<at::Tensor>{o, state.S, q.grad(), k.grad(), v.grad(), beta.grad(), g.grad(), s0.grad()};
      };
      const std::vector<at::Tensor> batched = run(false);
      for_each_kernel_level([&] {
        const std::vector<at::Tensor> fused = run(true);
        const double tolerance = dtype == at::kDouble ? 1e-10 : 2e-4;
        for (size_t i = 0; i < fused.size(); ++i) {
          SCOPED_TRACE("output " + std::to_string(i));
          EXPECT_EQ(fused[i].scalar_type(), dtype);
          EXPECT_TENSORS_CLOSE(fused[i], batched[i], tolerance);
        }
      });
    }
  }
}

// Without gradients the CPU kernels keep no per-chunk states: the outputs and the final state are the
// very same as with them.
TEST(GatedDeltaKernel, forward_without_gradients_equals_the_forward_with_them) {
  const int64_t length = 150;
  GatedDeltaInputs in = random_gated_delta_inputs(2, 2, length, 8, 12, 272);
  GatedDeltaState initial = random_state(2, 2, 8, 12, 273);
  at::Tensor resets = resets_at(2, length, {3, 70});
  std::pair<at::Tensor, GatedDeltaState> without;
  {
    at::NoGradGuard no_grad;
    without = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, initial, with_chunk(32), resets);
  }
  auto with = gated_delta_chunkwise(in.q.clone().requires_grad_(), in.k, in.v, in.beta, in.g, initial, with_chunk(32),
                                    resets);
  EXPECT_FALSE(without.first.requires_grad());
  EXPECT_TRUE(with.first.requires_grad());
  EXPECT_TRUE(at::equal(without.first, with.first.detach()));
  EXPECT_TRUE(at::equal(without.second.S, with.second.S.detach()));
}

TEST(GatedDeltaKernel, fp32_inputs_run_in_fp32_and_match_fp64) {
  GatedDeltaInputs in = random_gated_delta_inputs(1, 2, 40, 8, 8, 243);
  auto [o64, s64] = gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, with_chunk(16));
  auto [o32, s32] = gated_delta_chunkwise(in.q.to(at::kFloat), in.k.to(at::kFloat), in.v.to(at::kFloat),
                                          in.beta.to(at::kFloat), in.g.to(at::kFloat), std::nullopt, with_chunk(16));
  EXPECT_EQ(o32.scalar_type(), at::kFloat);
  EXPECT_EQ(s32.S.scalar_type(), at::kFloat);
  EXPECT_TENSORS_CLOSE(o32.to(at::kDouble), o64, 1e-4);
}

TEST(GatedDeltaKernel, state_bytes_counts_the_matrix) {
  EXPECT_EQ(gated_delta_zero_state(2, 3, 4, 5, at::kFloat, at::kCPU).bytes(), 2 * 3 * 4 * 5 * 4);
}

TEST(GatedDeltaKernel, mismatched_shapes_are_rejected) {
  GatedDeltaInputs in = random_gated_delta_inputs(1, 2, 5, 4, 3, 244);
  EXPECT_THROW(gated_delta_chunkwise(in.q, in.k, in.v.narrow(2, 0, 4), in.beta, in.g, std::nullopt, with_chunk(4)),
               swarmt::Error);
  EXPECT_THROW(gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, random_state(1, 2, 3, 3, 1), with_chunk(4)),
               swarmt::Error);
  EXPECT_THROW(gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, with_chunk(4),
                                     at::zeros({1, 5}, at::kLong)),
               swarmt::Error);
  EXPECT_THROW(gated_delta_step(in.q.select(2, 0), in.k.select(2, 0), in.v.select(2, 0), in.beta.select(2, 0),
                                in.g.select(2, 0), random_state(1, 2, 4, 4, 2), 0.0),
               swarmt::Error);
}

}  // namespace
}  // namespace swarmt::ops
