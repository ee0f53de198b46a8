// mLSTM cell (xLSTM matrix memory), specs/swax.md §2: recurrent step, quadratic parallel reference, and
// the chunkwise form used for training and prefill; linear in the sequence length.
//
// Per head, with log forget gate lf_t = logsigmoid(f̃_t) and input gate pre-activation ĩ_t:
//   m_t = max(lf_t + m_{t-1}, ĩ_t)
//   C_t = exp(lf_t + m_{t-1} - m_t) C_{t-1} + exp(ĩ_t - m_t) k_t v_tᵀ
//   n_t = exp(lf_t + m_{t-1} - m_t) n_{t-1} + exp(ĩ_t - m_t) k_t
//   h_t = C_tᵀ q̂_t / (max(|n_tᵀ q̂_t|, exp(-m_t)) + eps),        q̂_t = q_t / sqrt(Dqk)
// States and gate cumsums are fp32 (or fp64 when the inputs are fp64, for tests). The stabiliser m cancels
// exactly (up to eps) and gets no gradient.
//
// Document resets: where resets[b, t] is true (the first token of a document) the forget gate is forced
// to zero (lf_t = -inf), so nothing before t influences t or later (xLSTM-7B App. B).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace swarmt::ops {

struct MLSTMState {
  at::Tensor C;  // (B, H, Dqk, Dv)
  at::Tensor n;  // (B, H, Dqk)
  at::Tensor m;  // (B, H)
  int64_t bytes() const;
};

// Zero state (m = 0) in `dtype` (fp32 normally).
MLSTMState mlstm_zero_state(int64_t batch, int64_t heads, int64_t qk_dim, int64_t v_dim, at::ScalarType dtype,
                            at::Device device);

struct MLSTMOptions {
  int64_t chunk_size = 64;  // any N works, not only multiples of the chunk
  double eps = 1e-6;
};

// q, k: (B, H, N, Dqk); v: (B, H, N, Dv); igate, fgate: gate pre-activations (B, H, N); initial: optional
// state; resets: undefined or bool (B, N). Returns h (B, H, N, Dv) and the state after the last token.
// Differentiable wrt q, k, v, igate, fgate and the initial C and n (custom chunkwise backward, memory
// O(N·D)).
std::pair<at::Tensor, MLSTMState> mlstm_chunkwise(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                  const at::Tensor& igate, const at::Tensor& fgate,
                                                  const std::optional<MLSTMState>& initial,
                                                  const MLSTMOptions& options, const at::Tensor& resets = {});

// Quadratic parallel form (xLSTM App. A.3), zero initial state. Reference for tests; differentiable by
// autograd.
at::Tensor mlstm_parallel_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& igate, const at::Tensor& fgate, double eps,
                                    const at::Tensor& resets = {});

// Token-by-token recurrence (loop of mlstm_step). Reference for tests; differentiable by autograd.
std::pair<at::Tensor, MLSTMState> mlstm_recurrent_reference(const at::Tensor& q, const at::Tensor& k,
                                                            const at::Tensor& v, const at::Tensor& igate,
                                                            const at::Tensor& fgate,
                                                            const std::optional<MLSTMState>& initial, double eps,
                                                            const at::Tensor& resets = {});

// One decode step. q, k: (B, H, Dqk); v: (B, H, Dv); igate, fgate: (B, H). Returns h (B, H, Dv) and the
// new state.
std::pair<at::Tensor, MLSTMState> mlstm_step(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                             const at::Tensor& igate, const at::Tensor& fgate,
                                             const MLSTMState& state, double eps);

}  // namespace swarmt::ops
