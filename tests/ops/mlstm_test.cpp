// mLSTM kernels: chunkwise == recurrent == parallel, decode == chunkwise, state continuation, document
// resets, and the custom chunkwise backward against autograd through the recurrent reference and finite
// differences. All in fp64.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/kernel_levels.h"
#include "ops/recurrent_test_inputs.h"
#include "swarmt/core/error.h"
#include "swarmt/ops/mlstm.h"
#include "swarmt/ops/mlstm_cpu.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

using swarmt::testing::finite_difference;
using swarmt::testing::MLSTMInputs;
using swarmt::testing::random_mlstm_inputs;
using swarmt::testing::resets_at;

using testing::kTol;

MLSTMState random_state(int64_t batch, int64_t heads, int64_t qk_dim, int64_t v_dim, double m0, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  auto opts = swarmt::testing::f64();
  return {at::randn({batch, heads, qk_dim, v_dim}, gen, opts), at::randn({batch, heads, qk_dim}, gen, opts),
          at::full({batch, heads}, m0, opts)};
}

// Chunkwise and recurrent runs compute the same stabiliser m, so C and n agree in stabilised units too.
void expect_states_close(const MLSTMState& actual, const MLSTMState& expected, double tol) {
  EXPECT_TENSORS_CLOSE(actual.m, expected.m, tol);
  EXPECT_TENSORS_CLOSE(actual.C, expected.C, tol);
  EXPECT_TENSORS_CLOSE(actual.n, expected.n, tol);
}

TEST(MLSTMKernel, chunkwise_equals_recurrent_for_any_length_and_chunk) {
  for (int64_t length : {1, 3, 16, 37}) {
    for (int64_t chunk : {1, 4, 16, 64}) {
      SCOPED_TRACE("N=" + std::to_string(length) + " L=" + std::to_string(chunk));
      MLSTMInputs in = random_mlstm_inputs(2, 3, length, 4, 5, 100 + length);
      auto [h_ref, s_ref] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, 1e-6);
      MLSTMOptions options;
      options.chunk_size = chunk;
      auto [h, s] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options);
      EXPECT_TENSORS_CLOSE(h, h_ref, kTol);
      expect_states_close(s, s_ref, kTol);
    }
  }
}

TEST(MLSTMKernel, parallel_equals_recurrent) {
  MLSTMInputs in = random_mlstm_inputs(2, 2, 23, 4, 3, 7);
  for (double eps : {0.0, 1e-6}) {
    auto [h_ref, s_ref] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, eps);
    EXPECT_TENSORS_CLOSE(mlstm_parallel_reference(in.q, in.k, in.v, in.igate, in.fgate, eps), h_ref, kTol);
  }
  at::Tensor resets = resets_at(2, 23, {0, 5, 6, 17});
  auto [h_ref, s_ref] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, 1e-6, resets);
  EXPECT_TENSORS_CLOSE(mlstm_parallel_reference(in.q, in.k, in.v, in.igate, in.fgate, 1e-6, resets), h_ref, kTol);
}

TEST(MLSTMKernel, chunkwise_with_initial_state_equals_recurrent_for_several_m0) {
  MLSTMInputs in = random_mlstm_inputs(2, 2, 21, 4, 3, 11);
  for (double m0 : {0.0, -7.0, 4.0}) {
    SCOPED_TRACE("m0=" + std::to_string(m0));
    MLSTMState initial = random_state(2, 2, 4, 3, m0, 12);
    auto [h_ref, s_ref] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, initial, 1e-6);
    for (int64_t chunk : {1, 4, 16}) {
      MLSTMOptions options;
      options.chunk_size = chunk;
      auto [h, s] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, initial, options);
      EXPECT_TENSORS_CLOSE(h, h_ref, kTol);
      expect_states_close(s, s_ref, kTol);
    }
  }
}

TEST(MLSTMKernel, stabiliser_choice_does_not_change_outputs) {
  // Same state expressed with m0 = 0 and m0 = -7 (C, n rescaled by e^7): identical h (eps = 0).
  MLSTMInputs in = random_mlstm_inputs(1, 2, 12, 4, 3, 13);
  MLSTMState a = random_state(1, 2, 4, 3, 0.0, 14);
  MLSTMState b{a.C * std::exp(7.0), a.n * std::exp(7.0), a.m - 7.0};
  MLSTMOptions options;
  options.chunk_size = 4;
  options.eps = 0.0;
  auto [ha, sa] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, a, options);
  auto [hb, sb] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, b, options);
  EXPECT_TENSORS_CLOSE(ha, hb, 1e-9);
  EXPECT_TENSORS_CLOSE(sa.C * at::exp(sa.m).unsqueeze(-1).unsqueeze(-1), sb.C * at::exp(sb.m).unsqueeze(-1).unsqueeze(-1),
                       1e-8);
}

TEST(MLSTMKernel, chunkwise_with_resets_equals_recurrent_and_parallel) {
  // Resets at position 0, two in one chunk (5, 6), one at a chunk boundary (8), one near the end.
  const int64_t length = 19;
  MLSTMInputs in = random_mlstm_inputs(2, 2, length, 4, 3, 15);
  at::Tensor resets = resets_at(2, length, {0, 5, 6, 8, 17});
  MLSTMState initial = random_state(2, 2, 4, 3, 1.5, 16);
  auto [h_ref, s_ref] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, initial, 1e-6, resets);
  for (int64_t chunk : {1, 4, 16, 64}) {
    SCOPED_TRACE("L=" + std::to_string(chunk));
    MLSTMOptions options;
    options.chunk_size = chunk;
    auto [h, s] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, initial, options, resets);
    EXPECT_TENSORS_CLOSE(h, h_ref, kTol);
    expect_states_close(s, s_ref, kTol);
  }
  auto [h0, s0] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, 1e-6, resets);
  EXPECT_TENSORS_CLOSE(mlstm_parallel_reference(in.q, in.k, in.v, in.igate, in.fgate, 1e-6, resets), h0, kTol);
}

TEST(MLSTMKernel, reset_at_start_ignores_the_initial_state) {
  MLSTMInputs in = random_mlstm_inputs(2, 2, 9, 4, 3, 17);
  at::Tensor resets = at::zeros({2, 9}, at::kBool);
  resets.select(1, 0).fill_(true);
  MLSTMOptions options;
  options.chunk_size = 4;
  options.eps = 0.0;  // the two runs differ in m, which h does not see only without eps
  auto [h_fresh, s_fresh] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options);
  auto [h_reset, s_reset] =
      mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, random_state(2, 2, 4, 3, 2.0, 18), options, resets);
  EXPECT_TENSORS_CLOSE(h_reset, h_fresh, kTol);
}

TEST(MLSTMKernel, step_by_step_decode_equals_chunkwise) {
  MLSTMInputs in = random_mlstm_inputs(2, 3, 13, 4, 5, 19);
  MLSTMState initial = random_state(2, 3, 4, 5, -1.0, 20);
  MLSTMOptions options;
  options.chunk_size = 4;
  auto [h_chunk, s_chunk] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, initial, options);
  MLSTMState state = initial;
  for (int64_t t = 0; t < 13; ++t) {
    auto [h, next] = mlstm_step(in.q.select(2, t), in.k.select(2, t), in.v.select(2, t), in.igate.select(2, t),
                                in.fgate.select(2, t), state, options.eps);
    EXPECT_TENSORS_CLOSE(h, h_chunk.select(2, t), kTol);
    state = next;
  }
  expect_states_close(state, s_chunk, kTol);
}

TEST(MLSTMKernel, continuing_from_final_state_equals_one_long_run) {
  MLSTMInputs in = random_mlstm_inputs(1, 2, 30, 4, 3, 21);
  MLSTMOptions options;
  options.chunk_size = 8;
  auto [h_all, s_all] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options);
  for (int64_t split : {1, 8, 13}) {
    SCOPED_TRACE("split=" + std::to_string(split));
    auto part = [&](const at::Tensor& x, int64_t start, int64_t len) { return x.narrow(2, start, len); };
    const int64_t rest = 30 - split;
    auto [h1, s1] = mlstm_chunkwise(part(in.q, 0, split), part(in.k, 0, split), part(in.v, 0, split),
                                    part(in.igate, 0, split), part(in.fgate, 0, split), std::nullopt, options);
    auto [h2, s2] = mlstm_chunkwise(part(in.q, split, rest), part(in.k, split, rest), part(in.v, split, rest),
                                    part(in.igate, split, rest), part(in.fgate, split, rest), s1, options);
    EXPECT_TENSORS_CLOSE(at::cat({h1, h2}, 2), h_all, kTol);
    expect_states_close(s2, s_all, kTol);
  }
}

// Gradients of L = Σ h·R + Σ (C_N e^{m_N})·R_C + Σ (n_N e^{m_N})·R_n wrt every input, the state taken in
// unstabilised units so the loss does not depend on the (arbitrary) stabiliser.
struct MLSTMGrads {
  at::Tensor q, k, v, igate, fgate, C0, n0;
};

MLSTMGrads mlstm_grads(bool chunkwise, const MLSTMInputs& in, const MLSTMState& initial, double eps, int64_t chunk,
                       const at::Tensor& resets, uint64_t seed) {
  at::Tensor q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_(), v = in.v.clone().requires_grad_();
  at::Tensor ig = in.igate.clone().requires_grad_(), fg = in.fgate.clone().requires_grad_();
  at::Tensor C0 = initial.C.clone().requires_grad_(), n0 = initial.n.clone().requires_grad_();
  MLSTMState start{C0, n0, initial.m};
  std::pair<at::Tensor, MLSTMState> out;
  if (chunkwise) {
    MLSTMOptions options;
    options.chunk_size = chunk;
    options.eps = eps;
    out = mlstm_chunkwise(q, k, v, ig, fg, start, options, resets);
  } else {
    out = mlstm_recurrent_reference(q, k, v, ig, fg, start, eps, resets);
  }
  at::Generator gen = at::detail::createCPUGenerator(seed);
  auto& [h, s] = out;
  at::Tensor scale = at::exp(s.m);
  at::Tensor loss = (h * at::randn(h.sizes(), gen, h.options())).sum() +
                    (s.C * scale.unsqueeze(-1).unsqueeze(-1) * at::randn(s.C.sizes(), gen, h.options())).sum() +
                    (s.n * scale.unsqueeze(-1) * at::randn(s.n.sizes(), gen, h.options())).sum();
  loss.backward();
  return {q.grad(), k.grad(), v.grad(), ig.grad(), fg.grad(), C0.grad(), n0.grad()};
}

void expect_grads_close(const MLSTMGrads& a, const MLSTMGrads& b, double tol) {
  EXPECT_TENSORS_CLOSE(a.q, b.q, tol);
  EXPECT_TENSORS_CLOSE(a.k, b.k, tol);
  EXPECT_TENSORS_CLOSE(a.v, b.v, tol);
  EXPECT_TENSORS_CLOSE(a.igate, b.igate, tol);
  EXPECT_TENSORS_CLOSE(a.fgate, b.fgate, tol);
  EXPECT_TENSORS_CLOSE(a.C0, b.C0, tol);
  EXPECT_TENSORS_CLOSE(a.n0, b.n0, tol);
}

TEST(MLSTMKernel, backward_equals_autograd_through_recurrent_reference_with_normaliser) {
  // eps = 0: h is exactly independent of the stabilisers, so the chunkwise gradient (no gradient through
  // m) must equal autograd through the recurrence (which does differentiate m) exactly.
  for (int64_t chunk : {1, 4, 16}) {
    for (int64_t length : {5, 16, 19}) {
      SCOPED_TRACE("L=" + std::to_string(chunk) + " N=" + std::to_string(length));
      MLSTMInputs in = random_mlstm_inputs(2, 2, length, 4, 3, 30 + length);
      MLSTMState initial = random_state(2, 2, 4, 3, -2.0, 31);
      MLSTMGrads ref = mlstm_grads(false, in, initial, 0.0, chunk, {}, 32);
      MLSTMGrads got = mlstm_grads(true, in, initial, 0.0, chunk, {}, 32);
      expect_grads_close(got, ref, 1e-9);
    }
  }
}

TEST(MLSTMKernel, backward_with_resets_equals_autograd_through_recurrent_reference) {
  const int64_t length = 19;
  MLSTMInputs in = random_mlstm_inputs(2, 2, length, 4, 3, 33);
  at::Tensor resets = resets_at(2, length, {0, 5, 6, 8, 17});
  MLSTMState initial = random_state(2, 2, 4, 3, 0.5, 34);
  MLSTMGrads ref = mlstm_grads(false, in, initial, 0.0, 4, resets, 35);
  for (int64_t chunk : {1, 4, 16}) {
    SCOPED_TRACE("L=" + std::to_string(chunk));
    MLSTMGrads got = mlstm_grads(true, in, initial, 0.0, chunk, resets, 35);
    expect_grads_close(got, ref, 1e-9);
    // The forget gate of a document's first token is forced to zero: no gradient reaches it.
    EXPECT_EQ(got.fgate.masked_select(resets.unsqueeze(1).expand_as(got.fgate)).abs().max().item<double>(), 0.0);
  }
}

TEST(MLSTMKernel, backward_through_the_final_state_alone_equals_autograd) {
  // Only the state is used (as when a segment's state feeds the next segment): h gets no gradient.
  MLSTMInputs in = random_mlstm_inputs(1, 2, 11, 4, 3, 39);
  auto grads = [&](bool chunkwise) {
    at::Tensor q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_();
    at::Tensor ig = in.igate.clone().requires_grad_(), fg = in.fgate.clone().requires_grad_();
    MLSTMOptions options;
    options.chunk_size = 4;
    auto [h, s] = chunkwise ? mlstm_chunkwise(q, k, in.v, ig, fg, std::nullopt, options)
                            : mlstm_recurrent_reference(q, k, in.v, ig, fg, std::nullopt, options.eps);
    at::Tensor scale = at::exp(s.m);
    ((s.C * scale.unsqueeze(-1).unsqueeze(-1)).sum() + (s.n * scale.unsqueeze(-1)).pow(2).sum()).backward();
    // q never reaches the state: autograd leaves its gradient undefined, the kernel returns zeros.
    at::Tensor dq = q.grad().defined() ? q.grad() : at::zeros_like(q);
    return std::vector<at::Tensor>{dq, k.grad(), ig.grad(), fg.grad()};
  };
  std::vector<at::Tensor> ref = grads(false), got = grads(true);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TENSORS_CLOSE(got[i], ref[i], 1e-9);
}

TEST(MLSTMKernel, backward_with_default_eps_is_close_to_autograd) {
  // With eps > 0 the stabiliser enters h through eps·e^m only; the kernel (like the xLSTM kernels) gives
  // m no gradient, so the gradients agree to about eps·e^m relative.
  MLSTMInputs in = random_mlstm_inputs(1, 2, 12, 4, 3, 36);
  in.igate = in.igate * 0.25;
  MLSTMState initial = random_state(1, 2, 4, 3, 0.0, 37);
  MLSTMGrads ref = mlstm_grads(false, in, initial, 1e-6, 4, {}, 38);
  MLSTMGrads got = mlstm_grads(true, in, initial, 1e-6, 4, {}, 38);
  expect_grads_close(got, ref, 1e-4);
}

TEST(MLSTMKernel, backward_matches_finite_differences_on_a_tiny_case) {
  MLSTMInputs in = random_mlstm_inputs(1, 1, 6, 3, 2, 40);
  MLSTMState initial = random_state(1, 1, 3, 2, 0.3, 41);
  at::Tensor resets = resets_at(1, 6, {3});
  MLSTMGrads got = mlstm_grads(true, in, initial, 0.0, 4, resets, 42);
  auto loss = [&]() {
    at::NoGradGuard no_grad;
    MLSTMOptions options;
    options.chunk_size = 4;
    options.eps = 0.0;
    auto [h, s] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, initial, options, resets);
    at::Generator gen = at::detail::createCPUGenerator(42);
    at::Tensor scale = at::exp(s.m);
    return ((h * at::randn(h.sizes(), gen, h.options())).sum() +
            (s.C * scale.unsqueeze(-1).unsqueeze(-1) * at::randn(s.C.sizes(), gen, h.options())).sum() +
            (s.n * scale.unsqueeze(-1) * at::randn(s.n.sizes(), gen, h.options())).sum())
        .item<double>();
  };
  EXPECT_TENSORS_CLOSE(got.q, finite_difference(loss, in.q), 1e-6);
  EXPECT_TENSORS_CLOSE(got.k, finite_difference(loss, in.k), 1e-6);
  EXPECT_TENSORS_CLOSE(got.v, finite_difference(loss, in.v), 1e-6);
  EXPECT_TENSORS_CLOSE(got.igate, finite_difference(loss, in.igate), 1e-6);
  EXPECT_TENSORS_CLOSE(got.fgate, finite_difference(loss, in.fgate), 1e-6);
  EXPECT_TENSORS_CLOSE(got.C0, finite_difference(loss, initial.C), 1e-6);
  EXPECT_TENSORS_CLOSE(got.n0, finite_difference(loss, initial.n), 1e-6);
}

TEST(MLSTMKernel, extreme_gates_stay_finite_and_exact) {
  MLSTMInputs in = random_mlstm_inputs(1, 2, 20, 4, 3, 43);
  in.igate = in.igate * 15.0;           // ĩ ~ ±60
  in.fgate = in.fgate * 10.0 - 30.0;    // mostly lf ≈ -30 (forget almost everything)
  auto [h_ref, s_ref] = mlstm_recurrent_reference(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, 1e-6);
  MLSTMOptions options;
  options.chunk_size = 8;
  auto [h, s] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options);
  EXPECT_TRUE(at::isfinite(h).all().item<bool>());
  EXPECT_TENSORS_CLOSE(h, h_ref, 1e-9);
  EXPECT_TENSORS_CLOSE(s.m, s_ref.m, 1e-9);
}

// The raw-buffer CPU kernels against the batched-op path: h, the final state (C, n, m) and every
// gradient, with and without resets and an initial state, chunks that do and do not divide N, dims that
// are not multiples of the SIMD width; fp64 and fp32 (fp32 on every kernel level: small GEMMs with
// AVX-512, BLAS below it).
TEST(MLSTMKernel, cpu_kernels_equal_the_batched_ops_forward_and_backward) {
  struct Case {
    int64_t batch, heads, length, qk_dim, v_dim, chunk;
    std::vector<int64_t> resets;
    double m0;
  };
  const std::vector<Case> cases = {{2, 2, 19, 4, 5, 4, {0, 5, 6, 8, 17}, 0.5}, {1, 3, 40, 16, 33, 16, {}, -2.0},
                                   {2, 1, 70, 20, 40, 64, {1, 63, 64, 66}, 3.0}, {1, 1, 1, 5, 7, 64, {}, 0.0},
                                   {1, 2, 130, 32, 64, 64, {}, 1.0}};
  ASSERT_TRUE(detail::mlstm_cpu_kernels()) << "no BLAS GEMM found: the CPU kernels would not run";
  for (auto dtype : {at::kDouble, at::kFloat}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "B " << c.batch << " H " << c.heads << " N " << c.length << " Dqk "
                                        << c.qk_dim << " Dv " << c.v_dim << " L " << c.chunk << " resets "
                                        << c.resets.size() << " " << dtype);
      MLSTMInputs in = random_mlstm_inputs(c.batch, c.heads, c.length, c.qk_dim, c.v_dim, 260 + c.length);
      in = {in.q.to(dtype), in.k.to(dtype), in.v.to(dtype), in.igate.to(dtype), in.fgate.to(dtype)};
      MLSTMState initial = random_state(c.batch, c.heads, c.qk_dim, c.v_dim, c.m0, 261);
      initial = {initial.C.to(dtype), initial.n.to(dtype), initial.m.to(dtype)};
      at::Tensor resets = c.resets.empty() ? at::Tensor() : resets_at(c.batch, c.length, c.resets);
      MLSTMOptions options;
      options.chunk_size = c.chunk;
      auto run = [&](bool cpu_kernels) {
        detail::set_mlstm_cpu_kernels(cpu_kernels);
        EXPECT_EQ(detail::mlstm_cpu_kernels(), cpu_kernels);
        at::Tensor q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_();
        at::Tensor v = in.v.clone().requires_grad_(), ig = in.igate.clone().requires_grad_();
        at::Tensor fg = in.fgate.clone().requires_grad_();
        at::Tensor C0 = initial.C.clone().requires_grad_(), n0 = initial.n.clone().requires_grad_();
        auto [h, state] = mlstm_chunkwise(q, k, v, ig, fg, MLSTMState{C0, n0, initial.m}, options, resets);
        at::Generator gen = at::detail::createCPUGenerator(262);
        ((h * at::randn(h.sizes(), gen, h.options())).sum() +
         (state.C * at::randn(state.C.sizes(), gen, h.options())).sum() +
         (state.n * at::randn(state.n.sizes(), gen, h.options())).sum())
            .backward();
        detail::set_mlstm_cpu_kernels(true);
        return std::vector<at::Tensor>{h,        state.C,  state.n,   state.m,   q.grad(),  k.grad(),
                                       v.grad(), ig.grad(), fg.grad(), C0.grad(), n0.grad()};
      };
      const std::vector<at::Tensor> batched = run(false);
      for_each_kernel_level([&] {
        const std::vector<at::Tensor> fused = run(true);
        for (size_t i = 0; i < fused.size(); ++i) {
          SCOPED_TRACE("output " + std::to_string(i));
          EXPECT_EQ(fused[i].scalar_type(), dtype);
          // fp32: the two paths sum in different orders, so errors scale with the largest terms; some
          // gradients reach ~10³ where the normaliser is near its clamp.
          const double scale = std::max(1.0, batched[i].abs().max().item<double>());
          EXPECT_TENSORS_CLOSE(fused[i], batched[i], (dtype == at::kDouble ? 1e-10 : 2e-5) * scale);
        }
      });
    }
  }
}

// Without gradients the CPU kernels keep two chunk boundaries instead of all of them: the outputs and the
// final state are the very same (odd and even chunk counts, resets, an initial state).
TEST(MLSTMKernel, forward_without_gradients_equals_the_forward_with_them) {
  for (int64_t length : {64, 150, 192}) {
    SCOPED_TRACE("N=" + std::to_string(length));
    MLSTMInputs in = random_mlstm_inputs(2, 2, length, 8, 12, 270 + length);
    MLSTMState initial = random_state(2, 2, 8, 12, 1.5, 271);
    at::Tensor resets = resets_at(2, length, {3, 70});
    MLSTMOptions options;
    options.chunk_size = 32;
    std::pair<at::Tensor, MLSTMState> without;
    {
      at::NoGradGuard no_grad;
      without = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, initial, options, resets);
    }
    auto with = mlstm_chunkwise(in.q.clone().requires_grad_(), in.k, in.v, in.igate, in.fgate, initial, options, resets);
    EXPECT_FALSE(without.first.requires_grad());
    EXPECT_TRUE(with.first.requires_grad());
    EXPECT_TRUE(at::equal(without.first, with.first.detach()));
    EXPECT_TRUE(at::equal(without.second.C, with.second.C.detach()));
    EXPECT_TRUE(at::equal(without.second.n, with.second.n.detach()));
    EXPECT_TRUE(at::equal(without.second.m, with.second.m.detach()));
  }
}

TEST(MLSTMKernel, fp32_inputs_run_in_fp32_and_match_fp64) {
  MLSTMInputs in = random_mlstm_inputs(1, 2, 40, 8, 8, 44);
  MLSTMOptions options;
  options.chunk_size = 16;
  auto [h64, s64] = mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options);
  auto [h32, s32] = mlstm_chunkwise(in.q.to(at::kFloat), in.k.to(at::kFloat), in.v.to(at::kFloat),
                                    in.igate.to(at::kFloat), in.fgate.to(at::kFloat), std::nullopt, options);
  EXPECT_EQ(h32.scalar_type(), at::kFloat);
  EXPECT_EQ(s32.C.scalar_type(), at::kFloat);
  EXPECT_TENSORS_CLOSE(h32.to(at::kDouble), h64, 1e-4);
}

TEST(MLSTMKernel, state_bytes_counts_all_tensors) {
  MLSTMState s = mlstm_zero_state(2, 3, 4, 5, at::kFloat, at::kCPU);
  EXPECT_EQ(s.bytes(), (2 * 3 * 4 * 5 + 2 * 3 * 4 + 2 * 3) * 4);
}

TEST(MLSTMKernel, mismatched_shapes_are_rejected) {
  MLSTMInputs in = random_mlstm_inputs(1, 2, 5, 4, 3, 45);
  MLSTMOptions options;
  EXPECT_THROW(mlstm_chunkwise(in.q, in.k.narrow(3, 0, 3), in.v, in.igate, in.fgate, std::nullopt, options),
               swarmt::Error);
  EXPECT_THROW(mlstm_chunkwise(in.q, in.k, in.v, in.igate.narrow(2, 0, 4), in.fgate, std::nullopt, options),
               swarmt::Error);
  EXPECT_THROW(mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options, at::zeros({1, 5})),
               swarmt::Error);
  options.chunk_size = 0;
  EXPECT_THROW(mlstm_chunkwise(in.q, in.k, in.v, in.igate, in.fgate, std::nullopt, options), swarmt::Error);
  MLSTMState bad = mlstm_zero_state(1, 2, 4, 4, at::kDouble, at::kCPU);
  EXPECT_THROW(mlstm_step(in.q.select(2, 0), in.k.select(2, 0), in.v.select(2, 0), in.igate.select(2, 0),
                          in.fgate.select(2, 0), bad, 1e-6),
               swarmt::Error);
}

}  // namespace
}  // namespace swarmt::ops
