// ARMT associative memory (specs/armt.md §1.2, §1.4, §1.5): DPFP features, read, delta-rule write with
// the gamma correction. Batched over heads and memory tokens; differentiable by autograd.
#include "swarmt/core/error.h"
#include "swarmt/ops/assoc_memory.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops {

at::Tensor dpfp(const at::Tensor& x, int64_t nu) {
  SWARMT_CHECK_INPUT(x.defined() && x.dim() >= 1, "dpfp: x must have at least one dimension");
  SWARMT_CHECK_INPUT(nu >= 1, "dpfp: nu must be >= 1, got ", nu);
  at::Tensor r = at::cat({at::relu(x), at::relu(-x)}, -1);  // (..., 2d)
  std::vector<at::Tensor> blocks;
  blocks.reserve(nu);
  // at::roll moves entries towards higher indices: roll(r, j)_i = r_{(i - j) mod 2d}.
  for (int64_t j = 1; j <= nu; ++j) blocks.push_back(r * at::roll(r, {j}, {-1}));
  return at::cat(blocks, -1);  // (..., 2·nu·d)
}

int64_t AssocMemoryState::bytes() const {
  int64_t total = 0;
  for (const at::Tensor* t : {&A, &z})
    if (t->defined()) total += t->numel() * static_cast<int64_t>(t->element_size());
  return total;
}

AssocMemoryState assoc_memory_zero_state(int64_t batch, int64_t heads, int64_t key_dim, int64_t value_dim,
                                         at::ScalarType dtype, at::Device device) {
  auto options = at::TensorOptions().dtype(dtype).device(device);
  return {at::zeros({batch, heads, key_dim, value_dim}, options), at::zeros({batch, heads, key_dim}, options), true};
}

at::Tensor assoc_read(const AssocMemoryState& state, const at::Tensor& q_features, double eps, bool use_denominator) {
  const std::string what = "assoc_read";
  detail::check_rank(q_features, 4, what, "q_features");
  detail::check_rank(state.A, 4, what, "state A");
  const int64_t batch = state.A.size(0), heads = state.A.size(1), key_dim = state.A.size(2);
  detail::check_same_size(q_features, {batch, heads, q_features.size(2), key_dim}, what, "q_features");
  detail::check_same_size(state.z, {batch, heads, key_dim}, what, "state z");
  if (state.empty) {
    return at::zeros({batch, heads, q_features.size(2), state.A.size(3)}, q_features.options());
  }
  // y_j = Aᵀ φ(q_j) / (zᵀ φ(q_j) + eps)
  at::Tensor numerator = at::matmul(q_features, state.A);                          // (B, H, T, Dv)
  if (!use_denominator) return numerator;
  at::Tensor denominator = at::matmul(q_features, state.z.unsqueeze(-1)) + eps;    // (B, H, T, 1)
  return numerator / denominator;
}

AssocMemoryState assoc_write(const AssocMemoryState& state, const at::Tensor& k_features, const at::Tensor& v,
                             const at::Tensor& beta, double eps, bool use_gamma_correction, bool use_denominator) {
  const std::string what = "assoc_write";
  detail::check_rank(state.A, 4, what, "state A");
  const int64_t batch = state.A.size(0), heads = state.A.size(1), key_dim = state.A.size(2), value_dim = state.A.size(3);
  detail::check_rank(k_features, 4, what, "k_features");
  const int64_t tokens = k_features.size(2);
  detail::check_same_size(k_features, {batch, heads, tokens, key_dim}, what, "k_features");
  detail::check_same_size(v, {batch, heads, tokens, value_dim}, what, "v");
  detail::check_same_size(state.z, {batch, heads, key_dim}, what, "state z");
  detail::check_rank(beta, 4, what, "beta");
  SWARMT_CHECK_INPUT(beta.size(0) == batch && beta.size(1) == heads && beta.size(2) == tokens &&
                         (beta.size(3) == 1 || beta.size(3) == value_dim),
                     what, ": beta has shape ", beta.sizes(), ", expected (", batch, ", ", heads, ", ", tokens,
                     ", 1 or ", value_dim, ")");

  if (!use_denominator) {
    // One token after another, each against the A its predecessors left: A ← A + β_i k_i (v_i - Aᵀk_i)ᵀ.
    // With unit keys and β_i ≤ 1 each step is a contraction along k_i; written all at once against the
    // previous A, M tokens with one key would scale A's component along it by 1 - Σβ_i (down to 1 - M),
    // which grows without bound over segments (a training run diverged at 8 segments).
    at::Tensor A = state.A;
    for (int64_t i = 0; i < tokens; ++i) {
      at::Tensor k = k_features.narrow(2, i, 1);                                      // (B, H, 1, Dkey)
      at::Tensor residual = v.narrow(2, i, 1) - at::matmul(k, A);                     // v_i - Aᵀk_i
      A = A + at::matmul(k.transpose(-2, -1), beta.narrow(2, i, 1) * residual);
    }
    return {A, state.z, false};
  }
  // Normalised rule: all M tokens are written against the previous A and z.
  at::Tensor new_values = v;                                                         // v_i - vbar_i
  at::Tensor gamma = at::ones({batch, heads, tokens, 1}, k_features.options());      // γ_i
  if (!state.empty) {
    at::Tensor denominator = at::matmul(k_features, state.z.unsqueeze(-1)) + eps;    // zᵀk_i + eps (B, H, M, 1)
    new_values = v - at::matmul(k_features, state.A) / denominator;
    if (use_gamma_correction) {
      at::Tensor key_norm2 = (k_features * k_features).sum(-1, /*keepdim=*/true);
      gamma = at::clamp(1.0 - denominator / key_norm2, 0.0, 1.0).detach();
    }
  }
  AssocMemoryState next;
  next.A = state.A + at::matmul(k_features.transpose(-2, -1), beta * new_values);    // Σ β_i k_i (v_i - vbar_i)ᵀ
  next.z = state.z + (gamma * k_features).sum(2);                                    // Σ γ_i k_i
  next.empty = false;
  return next;
}

}  // namespace swarmt::ops
