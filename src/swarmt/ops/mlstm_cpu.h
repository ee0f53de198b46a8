// Internal to ops/mlstm_chunkwise.cpp: the chunkwise mLSTM's CPU kernels on raw buffers.
//
// The same chunk equations as the batched-op path (mlstm_chunkwise.cpp), run chunk by chunk for one head
// at a time, with the augmented value v' = [v, 1] kept as its two parts (the ones column would cost a
// whole 32-column tile in every product): C (Dqk × Dv) and n (Dqk) apart, num and den apart. Each chunk's
// gates, stabilisers, products and, in the backward, every gradient stay in a few cache-resident blocks;
// products are block_gemm calls. The boundary stabilisers m_k come from their recurrence
// m_k = max(g_k + m_{k-1}, max_r a_r), run alongside the state in fp64.
#pragma once

#include <cstdint>

namespace swarmt::ops::detail {

// One padded problem, T = float or double. Heads are flat (B·H); everything is contiguous.
template <typename T>
struct MLSTMProblem {
  int64_t heads = 0;            // B·H
  int64_t heads_per_batch = 1;  // H: head i reads the resets of batch i / H
  int64_t length = 0;           // N, a multiple of chunk
  int64_t chunk = 64;
  int64_t qk_dim = 0;
  int64_t v_dim = 0;
  T scale = 1;                   // 1/sqrt(Dqk)
  const T* q = nullptr;          // (B·H, N, Dqk)
  const T* k = nullptr;          // (B·H, N, Dqk)
  const T* v = nullptr;          // (B·H, N, Dv)
  const T* igate = nullptr;      // (B·H, N) input gate pre-activations
  const T* fgate = nullptr;      // (B·H, N) forget gate pre-activations
  const bool* resets = nullptr;  // (B, N) or null

  int64_t chunks() const { return length / chunk; }
};

// The states at every chunk boundary, in units of exp(-m): C (B·H, S, Dqk, Dv), n (B·H, S, Dqk),
// m (B·H, S); boundary c in slot c % S. S = NC + 1 (slots 0 or unset) keeps every boundary, for a
// backward; S = 2 keeps the current and the next one (no backward follows). Slot 0 holds the initial
// state (read), slot NC % S the final one (written).
template <typename T>
struct MLSTMBoundaries {
  T* C = nullptr;
  T* n = nullptr;
  T* m = nullptr;
  int64_t slots = 0;
};

// Heads [head_begin, head_end): h = num / (max(|den|, e^(−m_comb)) + eps) (B·H, N, Dv), den and m_comb
// (B·H, N), and every boundary after the first (which the caller fills with the initial state). The
// normaliser runs here too: as ATen ops it made ~6 passes over (B·H, N, Dv) forward and more backward.
template <typename T>
void mlstm_forward_cpu(const MLSTMProblem<T>& p, const MLSTMBoundaries<T>& states, T eps, T* h, T* den, T* m_comb,
                       int64_t head_begin, int64_t head_end);

// Gradients for heads [head_begin, head_end), all fully written: dq, dk (B·H, N, Dqk); dv (B·H, N, Dv);
// d_igate, d_fgate (B·H, N); dC0 (B·H, Dqk, Dv), dn0 (B·H, Dqk). h, den and m_comb are the forward's;
// grad_h (B·H, N, Dv), grad_C (B·H, Dqk, Dv) and grad_n (B·H, Dqk) the gradients of the outputs. The
// normaliser's gradient follows at::maximum and at::abs (ties split in half, |x|' = sign x).
template <typename T>
void mlstm_backward_cpu(const MLSTMProblem<T>& p, const MLSTMBoundaries<T>& states, T eps, const T* h, const T* den,
                        const T* m_comb, const T* grad_h, const T* grad_C, const T* grad_n, T* dq, T* dk, T* dv,
                        T* d_igate, T* d_fgate, T* dC0, T* dn0, int64_t head_begin, int64_t head_end);

// Whether CPU calls take these kernels (default) or the batched ops (tests compare the two).
void set_mlstm_cpu_kernels(bool on);
bool mlstm_cpu_kernels();

}  // namespace swarmt::ops::detail
