// Chunkwise gated delta rule on raw buffers (see gated_delta_cpu.h and the equations at the top of
// gated_delta_chunkwise.cpp). Per chunk (local r, s; ℓ_r = Σ_{u<=r} g_u; γ_r = e^ℓ_r; Γ_rs = γ_r/γ_s):
//   A = strictlower(β_r (k_r·k_s) Γ_rs);  [U W] = (I + A)^{-1} [β⊙V, β⊙γ⊙K]   (forward substitution)
//   V_new = U − W S;  O = (Q̂⊙γ) S + ((Q̂Kᵀ)⊙Γ) V_new;  S <- γ_C S + (K⊙γ_C/γ)ᵀ V_new
// The backward walks the chunks in reverse with dS, the gradient of the state after the chunk, and
// recomputes each chunk's quantities from the saved state before it; (I + A)^{-T} is a backward
// substitution. Document resets as in recurrent_chunking.h: the log decay of a reset position is 0 and
// the segment index seg_r decides which paths exist.
#include "swarmt/ops/gated_delta_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "swarmt/ops/block_gemm.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/chunk_segments.h"

namespace swarmt::ops::detail {
namespace {

CpuKernelSwitch& gated_delta_kernels_switch() {
  static CpuKernelSwitch kernels;
  return kernels;
}

using loops::add_scaled;
using loops::dot;
using loops::multiply;
using loops::scaled;

// The quantities of one chunk that do not depend on the carried state, and the scratch of the state
// passes; one per thread, sized once.
template <typename T>
class ChunkWork {
 public:
  explicit ChunkWork(const GatedDeltaProblem<T>& p)
      : p_(p), L(p.chunk), K(p.k_dim), V(p.v_dim), W(p.v_dim + p.k_dim) {
    auto sized = [](std::vector<T>& x, int64_t n) { x.assign(static_cast<size_t>(n), T(0)); };
    for (auto* x : {&ell, &from_start, &to_end}) sized(*x, L);
    for (auto* x : {&pair, &gram, &a, &p_mat}) sized(*x, L * L);
    for (auto* x : {&qs, &qg, &kt, &kd}) sized(*x, L * K);
    sized(x_mat, L * W);
    sized(block_inverses, ((L + kSolveBlock - 1) / kSolveBlock) * kSolveBlock * kSolveBlock);
    sized(solve_rows, kSolveBlock * W);
    sized(v_new, L * V);
  }

  // Loads chunk c of head h: gates, Q̂, Q̂⊙γ, Kᵀ, K Kᵀ, A, X = [U W], K⊙γ_C/γ and P = (Q̂Kᵀ)⊙Γ.
  void prepare(int64_t h, int64_t c) {
    const int64_t N = p_.length, t0 = h * N + c * L;
    q_ = p_.q + t0 * K;
    k_ = p_.k + t0 * K;
    v_ = p_.v + t0 * V;
    beta_ = p_.beta + t0;
    const T* g = p_.g + t0;
    const bool* resets = p_.resets ? p_.resets + (h / p_.heads_per_batch) * N + c * L : nullptr;

    // ℓ (reset positions contribute 0), segments, γ_r, γ_C/γ_r, γ_C
    segments.load(resets, L);
    T acc = 0;
    for (int64_t r = 0; r < L; ++r) {
      acc += segments.is_reset(r) ? T(0) : g[r];
      ell[r] = acc;
    }
    const T last = ell[L - 1];
    for (int64_t r = 0; r < L; ++r) {
      from_start[r] = segments.from_start(r) ? std::exp(ell[r]) : T(0);
      to_end[r] = segments.to_end(r) ? std::exp(last - ell[r]) : T(0);
    }
    chunk_decay = segments.carried() ? std::exp(last) : T(0);
    // Γ_rs = e^(ℓ_r − ℓ_s) for s <= r in r's segment (a contiguous run ending at r), 0 elsewhere
    for (int64_t r = 0; r < L; ++r) {
      T* row = pair.data() + r * L;
      const int64_t lo = segments.first[r];
      std::fill(row, row + lo, T(0));
      const T* __restrict cum = ell.data();
      for (int64_t s = lo; s <= r; ++s) row[s] = cum[r] - cum[s];
      block_exp(row + lo, r - lo + 1);
      std::fill(row + r + 1, row + L, T(0));
    }

    for (int64_t r = 0; r < L; ++r) {
      scaled(q_ + r * K, p_.scale, K, qs.data() + r * K);
      scaled(qs.data() + r * K, from_start[r], K, qg.data() + r * K);
      scaled(k_ + r * K, to_end[r], K, kd.data() + r * K);
    }
    block_transpose(k_, L, K, K, kt.data(), L);
    // Only the lower triangles are used: A reads K Kᵀ below the diagonal, and Γ is 0 above it.
    lower_triangle_of(L, K, T(1), k_, K, kt.data(), L, gram.data(), L);         // K Kᵀ
    lower_triangle_of(L, K, T(1), qs.data(), K, kt.data(), L, p_mat.data(), L);  // Q̂ Kᵀ
    multiply(p_mat.data(), pair.data(), L * L);
    for (int64_t r = 0; r < L; ++r) {
      T* row = a.data() + r * L;
      scaled(gram.data() + r * L, beta_[r], r, row);
      multiply(row, pair.data() + r * L, r);
      std::fill(row + r, row + L, T(0));
      T* x = x_mat.data() + r * W;
      scaled(v_ + r * V, beta_[r], V, x);
      scaled(k_ + r * K, beta_[r] * from_start[r], K, x + V);
    }
    invert_diagonal_blocks();
    solve_lower(x_mat.data());
  }

  // (I + A) X = X in place, X (L × W): X_r −= Σ_{s<r} A_rs X_s. By blocks of kSolveBlock rows (one
  // row tile of gemm_small): the rows before a block enter it through one GEMM, then the block is
  // multiplied by the inverse of its own unit-triangular diagonal block. (Row by row, each one-row
  // product read a row of X per FMA: the solve ran at half the GEMMs' rate.)
  void solve_lower(T* x) {
    for (int64_t b0 = 0; b0 < L; b0 += kSolveBlock) {
      const int64_t rows = std::min(kSolveBlock, L - b0);
      block_gemm(rows, W, b0, T(-1), a.data() + b0 * L, L, 1, x, W, T(1), x + b0 * W, W);
      std::memcpy(solve_rows.data(), x + b0 * W, sizeof(T) * rows * W);
      block_gemm(rows, W, rows, T(1), diagonal_inverse(b0), kSolveBlock, 1, solve_rows.data(), W, T(0), x + b0 * W, W);
    }
  }

  // (I + A)ᵀ Y = Y in place: Y_r −= Σ_{s>r} A_sr Y_s, by blocks from the last one.
  void solve_lower_transposed(T* y) {
    const int64_t last = (L - 1) / kSolveBlock * kSolveBlock;
    for (int64_t b0 = last; b0 >= 0; b0 -= kSolveBlock) {
      const int64_t rows = std::min(kSolveBlock, L - b0), b1 = b0 + rows;
      block_gemm(rows, W, L - b1, T(-1), a.data() + b1 * L + b0, 1, L, y + b1 * W, W, T(1), y + b0 * W, W);
      std::memcpy(solve_rows.data(), y + b0 * W, sizeof(T) * rows * W);
      block_gemm(rows, W, rows, T(1), diagonal_inverse(b0), 1, kSolveBlock, solve_rows.data(), W, T(0), y + b0 * W,
                 W);
    }
  }

  // (I + A_bb)^{-1} of every diagonal block of A (kSolveBlock × kSolveBlock each, unit lower triangular):
  // T_ij = δ_ij − Σ_{j<=s<i} A_is T_sj.
  void invert_diagonal_blocks() {
    for (int64_t b0 = 0; b0 < L; b0 += kSolveBlock) {
      const int64_t rows = std::min(kSolveBlock, L - b0);
      T* t = diagonal_inverse(b0);
      std::fill(t, t + kSolveBlock * kSolveBlock, T(0));
      for (int64_t i = 0; i < rows; ++i) {
        const T* a_row = a.data() + (b0 + i) * L + b0;
        t[i * kSolveBlock + i] = 1;
        for (int64_t j = 0; j < i; ++j) {
          T sum = 0;
          for (int64_t s = j; s < i; ++s) sum += a_row[s] * t[s * kSolveBlock + j];
          t[i * kSolveBlock + j] = -sum;
        }
      }
    }
  }
  T* diagonal_inverse(int64_t b0) { return block_inverses.data() + b0 * kSolveBlock; }

  // V_new = U − W S for the state S before the chunk.
  void compute_v_new(const T* state) {
    for (int64_t r = 0; r < L; ++r) std::memcpy(v_new.data() + r * V, x_mat.data() + r * W, sizeof(T) * V);
    block_gemm(L, V, K, T(-1), x_mat.data() + V, W, 1, state, V, T(1), v_new.data(), V);
  }

  static constexpr int64_t kSolveBlock = 8;
  const GatedDeltaProblem<T>& p_;
  const int64_t L, K, V, W;
  const T *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *beta_ = nullptr;
  ChunkSegments segments;
  std::vector<T> ell, from_start, to_end;  // ℓ, γ, γ_C/γ (masked by segment)
  T chunk_decay = 0;                       // γ_C (0 if the chunk has a reset)
  std::vector<T> pair, gram, a, p_mat;     // Γ, K Kᵀ, A, P (L × L)
  std::vector<T> qs, qg, kt, kd;           // Q̂, Q̂⊙γ (L × K), Kᵀ (K × L), K⊙γ_C/γ (L × K)
  std::vector<T> x_mat;                    // [U W] (L × (Dv + Dk))
  std::vector<T> v_new;                    // (L × Dv)
  std::vector<T> block_inverses;           // (I + A_bb)^{-1} per diagonal block (kSolveBlock² each)
  std::vector<T> solve_rows;               // one block of rows (kSolveBlock × W)
};

}  // namespace

void set_gated_delta_cpu_kernels(bool on) { gated_delta_kernels_switch().set(on); }
bool gated_delta_cpu_kernels() { return gated_delta_kernels_switch().on(); }

template <typename T>
void gated_delta_forward_cpu(const GatedDeltaProblem<T>& p, const T* initial, T* out, T* final_state,
                             T* prev_states, int64_t head_begin, int64_t head_end) {
  const int64_t L = p.chunk, K = p.k_dim, V = p.v_dim, N = p.length, state_size = K * V;
  ChunkWork<T> w(p);
  std::vector<T> state(static_cast<size_t>(state_size));
  for (int64_t h = head_begin; h < head_end; ++h) {
    std::memcpy(state.data(), initial + h * state_size, sizeof(T) * state_size);
    for (int64_t c = 0; c < p.chunks(); ++c) {
      if (prev_states)
        std::memcpy(prev_states + (h * p.chunks() + c) * state_size, state.data(), sizeof(T) * state_size);
      w.prepare(h, c);
      w.compute_v_new(state.data());
      T* o = out + (h * N + c * L) * V;
      block_gemm(L, V, K, T(1), w.qg.data(), K, 1, state.data(), V, T(0), o, V);          // (Q̂⊙γ) S
      triangular_times(Triangle::lower, L, V, T(1), w.p_mat.data(), L, 1, w.v_new.data(), V, T(1), o,
                       V);  // + P V_new
      loops::scale(state.data(), w.chunk_decay, state_size);                               // S <- γ_C S
      block_gemm(K, V, L, T(1), w.kd.data(), 1, K, w.v_new.data(), V, T(1), state.data(), V);  // + Kdᵀ V_new
    }
    std::memcpy(final_state + h * state_size, state.data(), sizeof(T) * state_size);
  }
}

template <typename T>
void gated_delta_backward_cpu(const GatedDeltaProblem<T>& p, const T* prev_states, const T* grad_out,
                              const T* grad_final, T* dq, T* dk, T* dv, T* dbeta, T* dg, T* d_initial,
                              int64_t head_begin, int64_t head_end) {
  const int64_t L = p.chunk, K = p.k_dim, V = p.v_dim, W = V + K, N = p.length, state_size = K * V;
  ChunkWork<T> w(p);
  auto buffer = [](int64_t n) { return std::vector<T>(static_cast<size_t>(n)); };
  std::vector<T> d_state = buffer(state_size), d_prev = buffer(state_size);  // dS after / before the chunk
  std::vector<T> state_t = buffer(state_size), d_state_t = buffer(state_size), v_new_t = buffer(V * L);
  std::vector<T> d_v_new = buffer(L * V), d_x = buffer(L * W), x_t = buffer(W * L);
  std::vector<T> d_qg = buffer(L * K), d_kd = buffer(L * K), d_p = buffer(L * L), d_a = buffer(L * L);
  std::vector<T> grad_gram = buffer(L * L), row_bal = buffer(L), col_bal = buffer(L), d_cum = buffer(L);

  for (int64_t h = head_begin; h < head_end; ++h) {
    std::memcpy(d_state.data(), grad_final + h * state_size, sizeof(T) * state_size);
    for (int64_t c = p.chunks() - 1; c >= 0; --c) {
      const T* state = prev_states + (h * p.chunks() + c) * state_size;  // S before the chunk
      const int64_t t0 = h * N + c * L;
      const T* d_o = grad_out + t0 * V;
      w.prepare(h, c);
      w.compute_v_new(state);

      // dV_new = Pᵀ dO + Kd dS;  dS_prev = (Q̂⊙γ)ᵀ dO + γ_C dS − Wᵀ dV_new;  dγ_C = <dS, S_prev>
      triangular_times(Triangle::upper, L, V, T(1), w.p_mat.data(), 1, L, d_o, V, T(0), d_v_new.data(), V);
      block_gemm(L, V, K, T(1), w.kd.data(), K, 1, d_state.data(), V, T(1), d_v_new.data(), V);
      const T d_chunk_decay = dot(d_state.data(), state, state_size);
      block_gemm(K, V, L, T(1), w.qg.data(), 1, K, d_o, V, T(0), d_prev.data(), V);
      add_scaled(d_state.data(), w.chunk_decay, state_size, d_prev.data());
      block_gemm(K, V, L, T(-1), w.x_mat.data() + V, 1, W, d_v_new.data(), V, T(1), d_prev.data(), V);

      // dQg = dO Sᵀ;  dP = dO V_newᵀ;  dKd = V_new dSᵀ;  d[U W] = [dV_new, −dV_new Sᵀ]
      block_transpose(state, K, V, V, state_t.data(), K);
      block_transpose(w.v_new.data(), L, V, V, v_new_t.data(), L);
      block_transpose(d_state.data(), K, V, V, d_state_t.data(), K);
      block_gemm(L, K, V, T(1), d_o, V, 1, state_t.data(), K, T(0), d_qg.data(), K);
      lower_triangle_of(L, V, T(1), d_o, V, v_new_t.data(), L, d_p.data(), L);  // P is 0 above the diagonal
      block_gemm(L, K, V, T(1), w.v_new.data(), V, 1, d_state_t.data(), K, T(0), d_kd.data(), K);
      for (int64_t r = 0; r < L; ++r) std::memcpy(d_x.data() + r * W, d_v_new.data() + r * V, sizeof(T) * V);
      block_gemm(L, K, V, T(-1), d_v_new.data(), V, 1, state_t.data(), K, T(0), d_x.data() + V, W);

      w.solve_lower_transposed(d_x.data());  // d rhs = (I + A)^{-T} d[U W]
      // dA = −d rhs Xᵀ (strictly lower)
      block_transpose(w.x_mat.data(), L, W, W, x_t.data(), L);
      lower_triangle_of(L, W, T(-1), d_x.data(), W, x_t.data(), L, d_a.data(), L);

      // Through A_rs = β_r (k_r·k_s) Γ_rs: dβ_r = Σ_s dA Γ (k·k); G = dA ⊙ Γ ⊙ β_r; the balances dA ⊙ A
      // and dP ⊙ P feed dℓ (row sums minus column sums); dP becomes dP ⊙ Γ for dQ̂ and dK.
      T* d_beta = dbeta + t0;
      std::fill(col_bal.begin(), col_bal.end(), T(0));
      for (int64_t r = 0; r < L; ++r) {
        const T* __restrict da = d_a.data() + r * L;
        const T* __restrict pair = w.pair.data() + r * L;
        const T* __restrict gram = w.gram.data() + r * L;
        const T* __restrict p_row = w.p_mat.data() + r * L;
        T* __restrict gg = grad_gram.data() + r * L;
        T* __restrict dp = d_p.data() + r * L;
        T* __restrict col = col_bal.data();
        const T beta = w.beta_[r];
        T beta_grad = 0, row = 0;
        for (int64_t s = 0; s < r; ++s) {  // A's strictly lower part
          const T da_decay = da[s] * pair[s];
          beta_grad += da_decay * gram[s];
          gg[s] = da_decay * beta;
        }
        std::fill(gg + r, gg + L, T(0));
        for (int64_t s = 0; s < L; ++s) {
          const T balance = gg[s] * gram[s] + dp[s] * p_row[s];
          row += balance;
          col[s] += balance;
          dp[s] *= pair[s];
        }
        d_beta[r] = beta_grad;
        row_bal[r] = row;
      }
      for (int64_t r = 0; r < L; ++r)  // G + Gᵀ
        for (int64_t s = 0; s < r; ++s) {
          const T sum = grad_gram[r * L + s] + grad_gram[s * L + r];
          grad_gram[r * L + s] = grad_gram[s * L + r] = sum;
        }

      // dQ̂ = (dP⊙Γ) K + dQg ⊙ γ (returned times the scale: dq = scale · dQ̂)
      T* dq_c = dq + t0 * K;
      triangular_times(Triangle::lower, L, K, p.scale, d_p.data(), L, 1, w.k_, K, T(0), dq_c, K);
      // dK = (dP⊙Γ)ᵀ Q̂ + (G + Gᵀ) K + dKd ⊙ γ_C/γ + d(βγK) ⊙ βγ
      T* dk_c = dk + t0 * K;
      triangular_times(Triangle::upper, L, K, T(1), d_p.data(), 1, L, w.qs.data(), K, T(0), dk_c, K);
      block_gemm(L, K, L, T(1), grad_gram.data(), L, 1, w.k_, K, T(1), dk_c, K);
      T* dv_c = dv + t0 * V;
      T kd_total = 0;
      for (int64_t r = 0; r < L; ++r) {
        const T* d_rhs_v = d_x.data() + r * W;
        const T* d_rhs_k = d_rhs_v + V;
        const T beta = w.beta_[r], gamma = w.from_start[r], bg = beta * gamma;
        add_scaled(d_qg.data() + r * K, p.scale * gamma, K, dq_c + r * K);
        add_scaled(d_kd.data() + r * K, w.to_end[r], K, dk_c + r * K);
        add_scaled(d_rhs_k, bg, K, dk_c + r * K);
        scaled(d_rhs_v, beta, V, dv_c + r * V);
        const T k_rhs = dot(d_rhs_k, w.k_ + r * K, K);
        d_beta[r] += dot(d_rhs_v, w.v_ + r * V, V) + k_rhs * gamma;
        const T kd_balance = dot(d_kd.data() + r * K, w.kd.data() + r * K, K);
        kd_total += kd_balance;
        d_cum[r] = row_bal[r] - col_bal[r] + dot(d_qg.data() + r * K, w.qg.data() + r * K, K) + k_rhs * bg -
                   kd_balance;
      }
      d_cum[L - 1] += kd_total + d_chunk_decay * w.chunk_decay;
      // dg = within-chunk reverse cumsum of dℓ; 0 at resets (their log decay is not used)
      T* dg_c = dg + t0;
      T running = 0;
      for (int64_t r = L - 1; r >= 0; --r) {
        running += d_cum[r];
        dg_c[r] = w.segments.is_reset(r) ? T(0) : running;
      }
      std::swap(d_state, d_prev);
    }
    std::memcpy(d_initial + h * state_size, d_state.data(), sizeof(T) * state_size);
  }
}

template void gated_delta_forward_cpu<float>(const GatedDeltaProblem<float>&, const float*, float*, float*, float*,
                                             int64_t, int64_t);
template void gated_delta_forward_cpu<double>(const GatedDeltaProblem<double>&, const double*, double*, double*,
                                              double*, int64_t, int64_t);
template void gated_delta_backward_cpu<float>(const GatedDeltaProblem<float>&, const float*, const float*,
                                              const float*, float*, float*, float*, float*, float*, float*, int64_t,
                                              int64_t);
template void gated_delta_backward_cpu<double>(const GatedDeltaProblem<double>&, const double*, const double*,
                                               const double*, double*, double*, double*, double*, double*, double*,
                                               int64_t, int64_t);

}  // namespace swarmt::ops::detail
