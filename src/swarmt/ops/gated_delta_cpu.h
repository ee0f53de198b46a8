// Internal to ops/gated_delta_chunkwise.cpp: the chunkwise gated delta rule's CPU kernels on raw buffers.
//
// The same chunk equations as the batched-op path (gated_delta_chunkwise.cpp), run chunk by chunk for one
// head at a time: every chunk's work (gates, K Kᵀ, the UT solve, V_new, outputs, state update; in the
// backward the same plus every gradient) stays in a few cache-resident blocks, the products are
// block_gemm calls and the gate algebra is fused into single loops. The batched-op path ran ~60 ATen ops
// over (B, H, NC, L, ·) tensors, each a trip through memory, and OpenBLAS packed panels for 64 × 64
// products.
#pragma once

#include <cstdint>

namespace swarmt::ops::detail {

// One padded problem, T = float or double. Heads are flat (B·H); everything is contiguous.
template <typename T>
struct GatedDeltaProblem {
  int64_t heads = 0;            // B·H
  int64_t heads_per_batch = 1;  // H: head i reads the resets of batch i / H
  int64_t length = 0;           // N, a multiple of chunk
  int64_t chunk = 64;
  int64_t k_dim = 0;
  int64_t v_dim = 0;
  T scale = 1;
  const T* q = nullptr;        // (B·H, N, Dk)
  const T* k = nullptr;        // (B·H, N, Dk)
  const T* v = nullptr;        // (B·H, N, Dv)
  const T* beta = nullptr;     // (B·H, N)
  const T* g = nullptr;        // (B·H, N), log decays
  const bool* resets = nullptr;  // (B, N) or null

  int64_t chunks() const { return length / chunk; }
};

// Heads [head_begin, head_end): out (B·H, N, Dv), final_state (B·H, Dk, Dv) and prev_states
// (B·H, NC, Dk, Dv), the state before every chunk (what the backward reads; null when no backward
// follows).
template <typename T>
void gated_delta_forward_cpu(const GatedDeltaProblem<T>& p, const T* initial, T* out, T* final_state,
                             T* prev_states, int64_t head_begin, int64_t head_end);

// Gradients for heads [head_begin, head_end), all fully written: dq, dk (B·H, N, Dk); dv (B·H, N, Dv);
// dbeta, dg (B·H, N); d_initial (B·H, Dk, Dv). grad_out (B·H, N, Dv) and grad_final (B·H, Dk, Dv).
template <typename T>
void gated_delta_backward_cpu(const GatedDeltaProblem<T>& p, const T* prev_states, const T* grad_out,
                              const T* grad_final, T* dq, T* dk, T* dv, T* dbeta, T* dg, T* d_initial,
                              int64_t head_begin, int64_t head_end);

// Whether CPU calls take these kernels (default) or the batched ops (tests compare the two).
void set_gated_delta_cpu_kernels(bool on);
bool gated_delta_cpu_kernels();

}  // namespace swarmt::ops::detail
