// Gated delta rule (Gated DeltaNet), specs/swax.md §3, in the fla orientation S ∈ R^{Dk×Dv}:
//   S  <- exp(g_t) S                      g_t = log α_t <= 0
//   u_t = β_t (v_t - Sᵀ k_t)
//   S  <- S + k_t u_tᵀ
//   o_t = Sᵀ (q_t · scale)                scale = 1/sqrt(Dk) by default
// Chunkwise form (UT / WY transform with a unit-lower-triangular solve per chunk) for training and
// prefill, linear in N; recurrent step for decoding. The state is fp32 (fp64 for fp64 inputs).
//
// Document resets: where resets[b, t] is true the state is zeroed before token t is written (α_t = 0).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace swarmt::ops {

struct GatedDeltaState {
  at::Tensor S;  // (B, H, Dk, Dv)
  int64_t bytes() const;
};

GatedDeltaState gated_delta_zero_state(int64_t batch, int64_t heads, int64_t k_dim, int64_t v_dim,
                                       at::ScalarType dtype, at::Device device);

struct GatedDeltaOptions {
  int64_t chunk_size = 64;  // any N works
  double scale = 0.0;       // 0: 1/sqrt(Dk)
};

// q, k: (B, H, N, Dk) (the layer L2-normalises them); v: (B, H, N, Dv); beta: (B, H, N); g: log decay
// (B, H, N), <= 0. Returns o (B, H, N, Dv) and the final state. Differentiable wrt q, k, v, beta, g and
// the initial state (custom chunkwise backward).
std::pair<at::Tensor, GatedDeltaState> gated_delta_chunkwise(const at::Tensor& q, const at::Tensor& k,
                                                             const at::Tensor& v, const at::Tensor& beta,
                                                             const at::Tensor& g,
                                                             const std::optional<GatedDeltaState>& initial,
                                                             const GatedDeltaOptions& options,
                                                             const at::Tensor& resets = {});

// Token-by-token reference; differentiable by autograd. Tests only.
std::pair<at::Tensor, GatedDeltaState> gated_delta_recurrent_reference(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta, const at::Tensor& g,
    const std::optional<GatedDeltaState>& initial, double scale, const at::Tensor& resets = {});

// One decode step: q, k: (B, H, Dk); v: (B, H, Dv); beta, g: (B, H). Returns o (B, H, Dv), new state.
std::pair<at::Tensor, GatedDeltaState> gated_delta_step(const at::Tensor& q, const at::Tensor& k,
                                                        const at::Tensor& v, const at::Tensor& beta,
                                                        const at::Tensor& g, const GatedDeltaState& state,
                                                        double scale);

// Causal depthwise convolution (kernel K, no bias), as fla's ShortConvolution before the SiLU:
//   y[b, t, c] = Σ_{j=0}^{K-1} weight[c, j] · x[b, t - (K-1) + j, c]
// x: (B, N, C); weight: (C, K); cache: undefined (zeros before the sequence) or (B, K-1, C) holding the
// previous K-1 inputs. resets: undefined or bool (B, N): inputs before a document start are not seen.
// Returns y (B, N, C) and the new cache (the last K-1 inputs, zero-padded on the left for short inputs).
// Differentiable wrt x and weight.
std::pair<at::Tensor, at::Tensor> short_conv(const at::Tensor& x, const at::Tensor& weight,
                                             const at::Tensor& cache = {}, const at::Tensor& resets = {});

}  // namespace swarmt::ops
