// ARMT associative memory: DPFP features, batched read/write against a naive per-token, per-head loop,
// the first write on an empty memory, the detached gamma, and the plain delta rule (no denominator).
#include <gtest/gtest.h>

#include "ops/recurrent_test_inputs.h"
#include "swarmt/core/error.h"
#include "swarmt/ops/assoc_memory.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

using swarmt::testing::f64;

TEST(AssocMemory, dpfp_rolls_towards_higher_indices) {
  // x = [1, 2]: r = [1, 2, 0, 0]; shift_1(r) = [0, 1, 2, 0], shift_2(r) = [0, 0, 1, 2], shift_3(r) = [2, 0, 0, 1]
  at::Tensor x = at::tensor({1.0, 2.0}, f64());
  at::Tensor expected = at::tensor({0.0, 2.0, 0.0, 0.0, /**/ 0.0, 0.0, 0.0, 0.0, /**/ 2.0, 0.0, 0.0, 0.0}, f64());
  EXPECT_TENSORS_CLOSE(dpfp(x, 3), expected, 0.0);
}

TEST(AssocMemory, dpfp_equals_definition_for_batched_input) {
  at::Tensor x = at::randn({2, 3, 5}, f64());
  at::Tensor phi = dpfp(x, 3);
  ASSERT_EQ(phi.sizes(), (at::IntArrayRef{2, 3, 30}));
  at::Tensor r = at::cat({at::relu(x), at::relu(-x)}, -1);
  for (int64_t j = 1; j <= 3; ++j)
    for (int64_t i = 0; i < 10; ++i)
      EXPECT_TENSORS_CLOSE(phi.select(-1, (j - 1) * 10 + i), r.select(-1, i) * r.select(-1, ((i - j) % 10 + 10) % 10),
                           0.0);
}

struct NaiveMemory {
  at::Tensor A, z;  // (B, H, Dk, Dv), (B, H, Dk)
  bool empty = true;
};

// The equations of assoc_memory.h, one (batch, head, token) at a time.
NaiveMemory naive_write(const NaiveMemory& m, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                        double eps, bool use_gamma) {
  NaiveMemory next{m.A.clone(), m.z.clone(), false};
  for (int64_t b = 0; b < k.size(0); ++b)
    for (int64_t h = 0; h < k.size(1); ++h)
      for (int64_t i = 0; i < k.size(2); ++i) {
        at::Tensor ki = k[b][h][i], vi = v[b][h][i];
        at::Tensor vbar = at::zeros_like(vi);
        double gamma = 1.0;
        if (!m.empty) {
          at::Tensor den = at::dot(m.z[b][h], ki) + eps;
          vbar = at::matmul(ki, m.A[b][h]) / den;
          if (use_gamma) gamma = std::clamp(1.0 - (den / at::dot(ki, ki)).item<double>(), 0.0, 1.0);
        }
        next.A[b][h] += at::outer(ki, beta[b][h][i] * (vi - vbar));
        next.z[b][h] += gamma * ki;
      }
  return next;
}

at::Tensor naive_read(const NaiveMemory& m, const at::Tensor& q, double eps) {
  at::Tensor y = at::zeros({q.size(0), q.size(1), q.size(2), m.A.size(3)}, q.options());
  if (m.empty) return y;
  for (int64_t b = 0; b < q.size(0); ++b)
    for (int64_t h = 0; h < q.size(1); ++h)
      for (int64_t j = 0; j < q.size(2); ++j)
        y[b][h][j].copy_(at::matmul(q[b][h][j], m.A[b][h]) / (at::dot(m.z[b][h], q[b][h][j]) + eps));
  return y;
}

TEST(AssocMemory, read_and_write_equal_naive_loop_over_segments) {
  const int64_t B = 2, H = 2, d = 3, Dv = 4, M = 3, T = 5;
  const int64_t Dk = 6 * d;
  for (bool per_channel_beta : {false, true}) {
    SCOPED_TRACE(per_channel_beta ? "per-channel beta" : "per-head beta");
    AssocMemoryState state = assoc_memory_zero_state(B, H, Dk, Dv, at::kDouble, at::kCPU);
    NaiveMemory naive{state.A.clone(), state.z.clone(), true};
    for (int segment = 0; segment < 3; ++segment) {
      at::Tensor q = dpfp(at::randn({B, H, T, d}, f64()));
      EXPECT_TENSORS_CLOSE(assoc_read(state, q), naive_read(naive, q, 1e-5), 1e-12);
      at::Tensor k = dpfp(at::randn({B, H, M, d}, f64()));
      at::Tensor v = at::randn({B, H, M, Dv}, f64());
      at::Tensor beta = at::sigmoid(at::randn({B, H, M, per_channel_beta ? Dv : 1}, f64()));
      state = assoc_write(state, k, v, beta);
      naive = naive_write(naive, k, v, beta, 1e-5, true);
      EXPECT_FALSE(state.empty);
      EXPECT_TENSORS_CLOSE(state.A, naive.A, 1e-12);
      EXPECT_TENSORS_CLOSE(state.z, naive.z, 1e-12);
    }
  }
}

TEST(AssocMemory, read_of_empty_memory_is_zero) {
  AssocMemoryState state = assoc_memory_zero_state(1, 2, 12, 3, at::kDouble, at::kCPU);
  at::Tensor y = assoc_read(state, dpfp(at::randn({1, 2, 4, 2}, f64())));
  EXPECT_TENSORS_CLOSE(y, at::zeros({1, 2, 4, 3}, f64()), 0.0);
}

TEST(AssocMemory, first_write_uses_zero_vbar_and_unit_gamma) {
  AssocMemoryState state = assoc_memory_zero_state(1, 1, 12, 3, at::kDouble, at::kCPU);
  at::Tensor k = dpfp(at::randn({1, 1, 2, 2}, f64()));
  at::Tensor v = at::randn({1, 1, 2, 3}, f64());
  at::Tensor beta = at::sigmoid(at::randn({1, 1, 2, 1}, f64()));
  AssocMemoryState next = assoc_write(state, k, v, beta);
  EXPECT_TENSORS_CLOSE(next.A, at::matmul(k.transpose(-2, -1), beta * v), 1e-12);
  EXPECT_TENSORS_CLOSE(next.z, k.sum(2), 1e-12);
}

TEST(AssocMemory, gamma_correction_can_be_switched_off) {
  AssocMemoryState state = assoc_memory_zero_state(1, 2, 12, 3, at::kDouble, at::kCPU);
  NaiveMemory naive{state.A.clone(), state.z.clone(), true};
  for (int segment = 0; segment < 2; ++segment) {
    at::Tensor k = dpfp(at::randn({1, 2, 3, 2}, f64()));
    at::Tensor v = at::randn({1, 2, 3, 3}, f64());
    at::Tensor beta = at::sigmoid(at::randn({1, 2, 3, 1}, f64()));
    state = assoc_write(state, k, v, beta, 1e-5, /*use_gamma_correction=*/false);
    naive = naive_write(naive, k, v, beta, 1e-5, false);
  }
  EXPECT_TENSORS_CLOSE(state.z, naive.z, 1e-12);
  EXPECT_TENSORS_CLOSE(state.A, naive.A, 1e-12);
}

TEST(AssocMemory, gamma_is_detached) {
  // z_new = z + Σ γ_i k_i with γ treated as a constant: dz_new/dk_i (for the loss Σ z_new·r) is γ_i·r,
  // with no term from γ's own dependence on k_i.
  AssocMemoryState state = assoc_memory_zero_state(1, 1, 12, 3, at::kDouble, at::kCPU);
  state = assoc_write(state, dpfp(at::randn({1, 1, 4, 2}, f64())), at::randn({1, 1, 4, 3}, f64()),
                      at::full({1, 1, 4, 1}, 0.5, f64()));
  at::Tensor k = dpfp(at::randn({1, 1, 3, 2}, f64())).requires_grad_();
  at::Tensor r = at::randn({1, 1, 12}, f64());
  AssocMemoryState next = assoc_write(state, k, at::randn({1, 1, 3, 3}, f64()), at::full({1, 1, 3, 1}, 0.5, f64()));
  (next.z * r).sum().backward();
  at::Tensor kd = k.detach();
  at::Tensor den = at::matmul(kd, state.z.unsqueeze(-1)) + 1e-5;
  at::Tensor gamma = at::clamp(1.0 - den / (kd * kd).sum(-1, true), 0.0, 1.0);
  EXPECT_TENSORS_CLOSE(k.grad(), gamma * r.unsqueeze(2), 1e-12);
}

TEST(AssocMemory, write_is_differentiable_wrt_keys_values_beta_and_state) {
  // d = 4 and fixed seeds: DPFP features of tiny inputs are sparse, and the read must overlap the write.
  at::manual_seed(3);
  AssocMemoryState state = assoc_memory_zero_state(1, 1, 24, 3, at::kDouble, at::kCPU);
  state = assoc_write(state, dpfp(at::randn({1, 1, 2, 4}, f64())), at::randn({1, 1, 2, 3}, f64()),
                      at::full({1, 1, 2, 1}, 0.5, f64()));
  state.A.requires_grad_();
  at::Tensor raw_keys = at::randn({1, 1, 3, 4}, f64());
  at::Tensor k = dpfp(raw_keys).requires_grad_();
  at::Tensor v = at::randn({1, 1, 3, 3}, f64()).requires_grad_();
  at::Tensor beta = at::full({1, 1, 3, 1}, 0.5, f64()).requires_grad_();
  AssocMemoryState next = assoc_write(state, k, v, beta);
  // The first query repeats the first key, so the read sees what was just written.
  at::Tensor q = dpfp(at::cat({raw_keys.narrow(2, 0, 1), at::randn({1, 1, 2, 4}, f64())}, 2));
  (assoc_read(next, q) * at::randn({1, 1, 3, 3}, f64())).sum().backward();
  for (const at::Tensor& t : {state.A, k, v, beta}) {
    ASSERT_TRUE(t.grad().defined());
    EXPECT_GT(t.grad().abs().sum().item<double>(), 0.0);
  }
}

TEST(AssocMemory, bad_shapes_are_rejected) {
  AssocMemoryState state = assoc_memory_zero_state(1, 2, 12, 3, at::kDouble, at::kCPU);
  EXPECT_THROW(assoc_read(state, at::zeros({1, 2, 4, 11}, f64())), swarmt::Error);
  EXPECT_THROW(assoc_write(state, at::zeros({1, 2, 3, 12}, f64()), at::zeros({1, 2, 3, 4}, f64()),
                           at::zeros({1, 2, 3, 1}, f64())),
               swarmt::Error);
  EXPECT_THROW(assoc_write(state, at::zeros({1, 2, 3, 12}, f64()), at::zeros({1, 2, 3, 3}, f64()),
                           at::zeros({1, 2, 3, 2}, f64())),
               swarmt::Error);
  EXPECT_THROW(dpfp(at::zeros({2, 3}), 0), swarmt::Error);
}

// Unit feature vectors (B = H = 1), as the model's L2-normalised φ: (1, 1, n, Dk).
at::Tensor unit_keys(const at::Tensor& rows) { return (rows / rows.norm(2, -1, true)).view({1, 1, rows.size(0), -1}); }

TEST(AssocMemory, plain_delta_rule_reads_back_each_value_and_rewrites_replace_it) {
  // Orthogonal unit keys, β = 1: each key reads back exactly its latest value, and a rewrite of one key
  // leaves the other untouched. z is never written.
  at::Tensor k1 = unit_keys(at::tensor({1.0, 0.0, 0.0, 0.0}, f64()).view({1, 4}));
  at::Tensor k2 = unit_keys(at::tensor({0.0, 0.0, 1.0, 1.0}, f64()).view({1, 4}));
  at::Tensor v1 = at::tensor({1.0, 2.0, 3.0}, f64()).view({1, 1, 1, 3});
  at::Tensor v2 = at::tensor({-1.0, 0.5, 0.0}, f64()).view({1, 1, 1, 3});
  at::Tensor v3 = at::tensor({4.0, 0.0, -2.0}, f64()).view({1, 1, 1, 3});
  at::Tensor one = at::ones({1, 1, 1, 1}, f64());
  AssocMemoryState state = assoc_memory_zero_state(1, 1, 4, 3, at::kDouble, at::kCPU);
  state = assoc_write(state, k1, v1, one, 1e-5, true, /*use_denominator=*/false);
  state = assoc_write(state, k2, v2, one, 1e-5, true, false);
  EXPECT_TENSORS_CLOSE(assoc_read(state, k1, 1e-5, false), v1, 1e-12);
  EXPECT_TENSORS_CLOSE(assoc_read(state, k2, 1e-5, false), v2, 1e-12);
  state = assoc_write(state, k1, v3, one, 1e-5, true, false);
  EXPECT_TENSORS_CLOSE(assoc_read(state, k1, 1e-5, false), v3, 1e-12);
  EXPECT_TENSORS_CLOSE(assoc_read(state, k2, 1e-5, false), v2, 1e-12);
  EXPECT_TENSORS_CLOSE(state.z, at::zeros({1, 1, 4}, f64()), 0.0);
}

TEST(AssocMemory, plain_delta_rule_equals_its_equations_for_overlapping_keys) {
  // A ← A + β_i k_i (v_i - Aᵀk_i)ᵀ token after token; y = Aᵀq. Random DPFP keys overlap.
  const int64_t H = 2, Dv = 3, M = 3;
  AssocMemoryState state = assoc_memory_zero_state(1, H, 12, Dv, at::kDouble, at::kCPU);
  at::Tensor A = state.A.clone();
  for (int segment = 0; segment < 3; ++segment) {
    at::Tensor k = dpfp(at::randn({1, H, M, 2}, f64()));
    at::Tensor v = at::randn({1, H, M, Dv}, f64());
    at::Tensor beta = at::sigmoid(at::randn({1, H, M, 1}, f64()));
    at::Tensor q = dpfp(at::randn({1, H, 4, 2}, f64()));
    EXPECT_TENSORS_CLOSE(assoc_read(state, q, 1e-5, false), segment == 0 ? at::zeros({1, H, 4, Dv}, f64())
                                                                         : at::matmul(q, A), 1e-12);
    state = assoc_write(state, k, v, beta, 1e-5, true, false);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < M; ++i) {
        at::Tensor ki = k[0][h][i], vi = v[0][h][i];
        A[0][h] += at::outer(ki, beta[0][h][i] * (vi - at::matmul(ki, A[0][h])));
      }
    EXPECT_TENSORS_CLOSE(state.A, A, 1e-12);
  }
}

TEST(AssocMemory, plain_delta_rule_stays_bounded_when_every_memory_token_writes_one_key) {
  // Four tokens with the same unit key and β = 0.9, fifty segments: each token's step is a contraction
  // along k, so the read stays within the values' range. Written at once against the previous A the
  // component along k would be multiplied by 1 - 3.6 every segment.
  at::Tensor k = unit_keys(at::tensor({1.0, 2.0, 0.0, 1.0}, f64()).view({1, 4}).expand({4, 4}).contiguous());
  at::Tensor beta = at::full({1, 1, 4, 1}, 0.9, f64());
  AssocMemoryState state = assoc_memory_zero_state(1, 1, 4, 3, at::kDouble, at::kCPU);
  for (int segment = 0; segment < 50; ++segment)
    state = assoc_write(state, k, at::rand({1, 1, 4, 3}, f64()), beta, 1e-5, true, /*use_denominator=*/false);
  at::Tensor y = assoc_read(state, k.narrow(2, 0, 1), 1e-5, false);
  EXPECT_LE(y.abs().max().item<double>(), 1.0);  // a convex mix of values in [0, 1)
}

TEST(AssocMemory, normalised_rule_reads_an_overlapping_second_key_minus_the_first_value) {
  // Why the plain rule exists as an option: with the denominator, vbar for a second key is the mean of the
  // stored values along it *however small the overlap c*, so k2 reads back v2 - (1 - c)·v1 (β = 1, γ on).
  const double c = 0.1;
  at::Tensor k1 = unit_keys(at::tensor({1.0, 0.0}, f64()).view({1, 2}));
  at::Tensor k2 = unit_keys(at::tensor({c, std::sqrt(1 - c * c)}, f64()).view({1, 2}));
  at::Tensor v1 = at::tensor({1.0, 0.0}, f64()).view({1, 1, 1, 2});
  at::Tensor v2 = at::tensor({0.0, 1.0}, f64()).view({1, 1, 1, 2});
  at::Tensor one = at::ones({1, 1, 1, 1}, f64());
  for (bool denominator : {true, false}) {
    SCOPED_TRACE(denominator ? "normalised" : "plain");
    AssocMemoryState state = assoc_memory_zero_state(1, 1, 2, 2, at::kDouble, at::kCPU);
    state = assoc_write(state, k1, v1, one, 1e-5, true, denominator);
    state = assoc_write(state, k2, v2, one, 1e-5, true, denominator);
    at::Tensor expected = denominator ? v2 - (1 - c) * v1 : v2;
    EXPECT_TENSORS_CLOSE(assoc_read(state, k2, 1e-5, denominator), expected, 1e-3);  // eps shifts vbar by 1e-4
  }
}

}  // namespace
}  // namespace swarmt::ops
