// FLOP counts of the chunkwise recurrent kernels (mlstm_chunkwise, gated_delta_chunkwise), so that
// benchmarks can report achieved GFLOP/s next to the machine's GEMM rate.
//
// Counted: the matrix products the chunkwise algorithms perform, 2·m·n·k per (m×k)·(k×n) product, and
// L²·n per unit-triangular solve with n right-hand sides; elementwise work (gates, exp, masks) is not
// counted. The intra-chunk products are counted dense (L×L blocks, as the kernels compute them; half of
// each block is causally masked), and so are recomputations in the backward. Per (batch, head) and
// token, with chunk L, Dk = qk/key dim, Dv = value dim, and the sequence padded to whole chunks:
//
// mLSTM (value augmented with a ones column: D1 = Dv + 1; per chunk the products are L×L or L×D, divided
// by L per token):
//   forward   Y = (K⊙Ā)ᵀV' 2·Dk·D1 · S = Q̂Kᵀ 2·L·Dk · (S⊙D̄)V' 2·L·D1 · (Q̂⊙β)C_{k-1} 2·Dk·D1
//             = 4·Dk·D1 + 2·L·(Dk + D1)
//   backward  (Q̂⊙β)ᵀdnum, dnum C_{k-1}ᵀ, V' dEᵀ, K dE      4 × 2·Dk·D1
//             dnum V'ᵀ, G K, Gᵀ Q̂, Q̂Kᵀ (recomputed), Pᵀ dnum   2·L·(3·Dk + 2·D1)
//             = 8·Dk·D1 + 2·L·(3·Dk + 2·D1)
//
// Gated DeltaNet (the CPU kernels' algorithm, ops/gated_delta_cpu.cpp: [U W] = (I+A)^{-1}[βV βγK] by
// substitution, L²·(Dk+Dv)/2 multiply-adds per chunk; the batched-op path for accelerators forms T
// explicitly and does a little more):
//   forward   KKᵀ, Q̂Kᵀ 2 × 2·L·Dk · substitution L·(Dk+Dv) · W S, Kdᵀ V_new, (Q̂⊙γ) S  3 × 2·Dk·Dv ·
//             P V_new 2·L·Dv
//             = 6·Dk·Dv + L·(5·Dk + 3·Dv)
//   backward  recompute KKᵀ, Q̂Kᵀ, the substitution and V_new (4·L·Dk + L·(Dk+Dv) + 2·Dk·Dv);
//             Pᵀ dO, dO V_newᵀ (2 × 2·L·Dv); Kd dS, Qgᵀ dO, Wᵀ dV_new, dO Sᵀ, V_new dSᵀ, dV_new Sᵀ
//             (7 × 2·Dk·Dv with V_new); the transposed substitution L·(Dk+Dv) and dA = d rhs [U W]ᵀ
//             2·L·(Dk+Dv); dP̃ K, dP̃ᵀ Q̂, (G+Gᵀ) K (3 × 2·L·Dk)
//             = 16·Dk·Dv + L·(14·Dk + 8·Dv)
#pragma once

#include <cstdint>

namespace swarmt::ops {

struct RecurrentFlops {
  double forward = 0.0;
  double backward = 0.0;
  double total() const { return forward + backward; }
};

namespace detail {
inline double padded_tokens(int64_t batch, int64_t heads, int64_t length, int64_t chunk) {
  int64_t used_chunk = chunk < length ? chunk : length;
  int64_t chunks = (length + used_chunk - 1) / used_chunk;
  return static_cast<double>(batch) * static_cast<double>(heads) * static_cast<double>(chunks * used_chunk);
}
}  // namespace detail

inline RecurrentFlops mlstm_chunkwise_flops(int64_t batch, int64_t heads, int64_t length, int64_t qk_dim,
                                            int64_t v_dim, int64_t chunk) {
  const double tokens = detail::padded_tokens(batch, heads, length, chunk);
  const double L = static_cast<double>(chunk < length ? chunk : length);
  const double dk = static_cast<double>(qk_dim), d1 = static_cast<double>(v_dim + 1);
  return {tokens * (4 * dk * d1 + 2 * L * (dk + d1)), tokens * (8 * dk * d1 + 2 * L * (3 * dk + 2 * d1))};
}

inline RecurrentFlops gated_delta_chunkwise_flops(int64_t batch, int64_t heads, int64_t length, int64_t k_dim,
                                                  int64_t v_dim, int64_t chunk) {
  const double tokens = detail::padded_tokens(batch, heads, length, chunk);
  const double L = static_cast<double>(chunk < length ? chunk : length);
  const double dk = static_cast<double>(k_dim), dv = static_cast<double>(v_dim);
  return {tokens * (6 * dk * dv + L * (5 * dk + 3 * dv)), tokens * (16 * dk * dv + L * (14 * dk + 8 * dv))};
}

}  // namespace swarmt::ops
