// ARMT associative memory (specs/armt.md §1): DPFP features, read, and the delta-rule write with the
// gamma correction, batched over memory tokens and heads.
//
// Per head, A ∈ R^{Dkey×Dv} and z ∈ R^{Dkey} (both start at zero; "empty" before the first write):
//   read:   y_j = Aᵀ φ(q_j) / (zᵀ φ(q_j) + eps)                                     (returns 0 while empty)
//   write:  for memory tokens i = 1..M, all against the *previous* A and z:
//           vbar_i = Aᵀ k_i / (zᵀ k_i + eps)                (0 on the first write)
//           γ_i    = stopgrad(clamp(1 - (zᵀ k_i + eps) / ||k_i||², 0, 1))   (1 on the first write)
//           A     += Σ_i β_i k_i (v_i - vbar_i)ᵀ
//           z     += Σ_i γ_i k_i
// where k_i = φ(W_k m_i) are feature vectors (the caller applies DPFP and the optional L2 normalisation).
//
// Without the denominator (the reference code's use_denom=False) z is never written and the memory is the
// plain delta rule, y_j = Aᵀ φ(q_j), with the memory tokens written one after another (as DeltaNet
// writes tokens): for i = 1..M,  A ← A + β_i k_i (v_i - Aᵀk_i)ᵀ. (The reference writes all M against the
// previous A; that is not a contraction: M tokens with one key scale A along it by 1 - Σβ_i.)
// With unit keys and β = 1 a write then reads back exactly v_i at k_i, and disturbs an earlier key k' only
// by (k'ᵀk_i)·(v_i - vbar_i). The normalised rule's vbar_i is a *weighted mean* of the stored values along
// k_i, whatever the overlap, so a second key that overlaps the first by c reads back v_i - (1 - c)·vbar_i.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace swarmt::ops {

// DPFP feature map, ν = nu: r = [relu(x), relu(-x)] ∈ R^{2d}; block_j = r ⊙ roll(r, j) for j = 1..ν;
// φ(x) = [block_1, ..., block_ν] ∈ R^{2νd}. x: (..., d) -> (..., 2·nu·d). Differentiable.
at::Tensor dpfp(const at::Tensor& x, int64_t nu = 3);

struct AssocMemoryState {
  at::Tensor A;        // (B, H, Dkey, Dv)
  at::Tensor z;        // (B, H, Dkey)
  bool empty = true;   // no write yet: reads return zeros, the first write uses vbar = 0, γ = 1
  int64_t bytes() const;
};

AssocMemoryState assoc_memory_zero_state(int64_t batch, int64_t heads, int64_t key_dim, int64_t value_dim,
                                         at::ScalarType dtype, at::Device device);

// q_features: (B, H, T, Dkey) -> (B, H, T, Dv). Differentiable wrt q_features and the state.
// use_denominator = false: y_j = Aᵀ φ(q_j) (the plain delta rule, see above).
at::Tensor assoc_read(const AssocMemoryState& state, const at::Tensor& q_features, double eps = 1e-5,
                      bool use_denominator = true);

// k_features: (B, H, M, Dkey); v: (B, H, M, Dv); beta: (B, H, M, 1) (one per head) or (B, H, M, Dv)
// (per channel). Returns the new state; differentiable wrt k, v, beta and the old state except through
// γ, which is detached. use_gamma_correction = false gives γ = 1 (the paper's ablation);
// use_denominator = false gives the plain, sequential delta rule (z stays zero, γ is unused).
AssocMemoryState assoc_write(const AssocMemoryState& state, const at::Tensor& k_features, const at::Tensor& v,
                             const at::Tensor& beta, double eps = 1e-5, bool use_gamma_correction = true,
                             bool use_denominator = true);

}  // namespace swarmt::ops
