// Chunkwise mLSTM numerator on raw buffers (see mlstm_cpu.h and the design notes at the top of
// mlstm_chunkwise.cpp). Per chunk (local r, s), with lf = logsigmoid(f̃) (0 at resets), b_r = Σ_{u<=r} lf_u,
// g = b_{L-1}, a_r = g − b_r + ĩ_r and the boundary stabilisers m_prev, m_next:
//   Ā_r = e^(a_r − m_next),  δ = e^(g + m_prev − m_next)
//   log D_rs = b_r − b_s + ĩ_s,  inter_r = b_r + m_prev,  m_comb_r = max(max_s log D_rs, inter_r)
//   D̄ = e^(log D − m_comb),  β = e^(inter − m_comb),  W = (Q̂ Kᵀ) ⊙ D̄
//   num = W V + (Q̂⊙β) C,  den = W 1 + (Q̂⊙β) n
//   C <- δ C + (K⊙Ā)ᵀ V,  n <- δ n + (K⊙Ā)ᵀ 1
// (masked pairs and paths, by segment: recurrent_chunking.h). The backward walks the chunks in reverse
// with dC, dn, the gradients of the state after the chunk, recomputing the chunk from the saved state
// before it; the gate gradients follow from the scaling identities (swax.md §2.8):
//   dĩ_t = v'_t · dv'_t,  dlf_t = Σ_{u>=t} (q̂_u·dq̂_u − k_u·dk_u) + <dC_N, C_N> + <dn_N, n_N>.
#include "swarmt/ops/mlstm_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "swarmt/ops/block_gemm.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/chunk_segments.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops::detail {
namespace {

CpuKernelSwitch& mlstm_kernels_switch() {
  static CpuKernelSwitch kernels;
  return kernels;
}

using loops::add_scaled;
using loops::dot;
using loops::multiply;
using loops::scaled;

// The normaliser of row r: max(|den_r|, e^(−m_comb_r)) + eps.
template <typename T>
T normaliser(T den, T m_comb, T eps) {
  return std::max(std::abs(den), std::exp(-m_comb)) + eps;
}

// log σ(x) = −log(1 + e^(−x)), without overflow on either side.
template <typename T>
T log_sigmoid(T x) {
  return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
}

// The quantities of one chunk, and the scratch of the state passes; one per thread, sized once.
template <typename T>
class ChunkWork {
 public:
  explicit ChunkWork(const MLSTMProblem<T>& p) : p_(p), L(p.chunk), K(p.qk_dim), V(p.v_dim) {
    auto sized = [](std::vector<T>& x, int64_t n) { x.assign(static_cast<size_t>(n), T(0)); };
    for (auto* x : {&cum, &to_end_log, &to_end, &inter}) sized(*x, L);
    for (auto* x : {&decay, &weights}) sized(*x, L * L);
    for (auto* x : {&qs, &q_inter, &kt, &k_to_end}) sized(*x, L * K);
  }

  // Pointers, segments and the log gates of chunk c of head h.
  void load(int64_t h, int64_t c) {
    const int64_t N = p_.length, t0 = h * N + c * L;
    q_ = p_.q + t0 * K;
    k_ = p_.k + t0 * K;
    v_ = p_.v + t0 * V;
    igate_ = p_.igate + t0;
    fgate_ = p_.fgate + t0;
    segments.load(p_.resets ? p_.resets + (h / p_.heads_per_batch) * N + c * L : nullptr, L);
    double acc = 0;  // as at::cumsum: accumulated in fp64
    for (int64_t r = 0; r < L; ++r) {
      acc += segments.is_reset(r) ? 0.0 : static_cast<double>(log_sigmoid(fgate_[r]));
      cum[r] = static_cast<T>(acc);
    }
    chunk_log = cum[L - 1];
    max_to_end = kMaskedLogWeight;
    for (int64_t r = 0; r < L; ++r) {
      to_end_log[r] = segments.to_end(r) ? chunk_log - cum[r] + igate_[r] : static_cast<T>(kMaskedLogWeight);
      max_to_end = std::max(max_to_end, static_cast<double>(to_end_log[r]));
    }
  }

  // m_next = max(g + m_prev, max_r a_r), or max_r a_r when the chunk has a reset.
  T next_stabiliser(T m_prev) const {
    if (!segments.carried()) return static_cast<T>(max_to_end);
    return static_cast<T>(std::max(static_cast<double>(chunk_log) + static_cast<double>(m_prev), max_to_end));
  }

  // Ā, δ, D̄, β, Q̂, Q̂⊙β, Kᵀ, K⊙Ā and W for the stabilisers m_prev, m_next; m_comb is computed into
  // m_comb_out (forward) or read from m_comb_in (backward, the saved one).
  void weigh(T m_prev, T m_next, const T* m_comb_in, T* m_comb_out) {
    for (int64_t r = 0; r < L; ++r) to_end[r] = segments.to_end(r) ? std::exp(to_end_log[r] - m_next) : T(0);
    carry = segments.carried() ? std::exp(chunk_log + m_prev - m_next) : T(0);
    for (int64_t r = 0; r < L; ++r) {
      T* row = decay.data() + r * L;
      const int64_t lo = segments.first[r];
      const T* __restrict b = cum.data();
      const T* __restrict ig = igate_;
      T* __restrict out = row;
      const T b_r = b[r];
      for (int64_t s = lo; s <= r; ++s) out[s] = b_r - b[s] + ig[s];
      inter[r] = segments.from_start(r) ? cum[r] + m_prev : static_cast<T>(kMaskedLogWeight);
      const T m = m_comb_in ? m_comb_in[r] : std::max(block_max(row + lo, r - lo + 1), inter[r]);
      if (m_comb_out) m_comb_out[r] = m;
      std::fill(row, row + lo, T(0));
      block_exp_shifted(row + lo, r - lo + 1, m);
      std::fill(row + r + 1, row + L, T(0));
      inter[r] = segments.from_start(r) ? std::exp(inter[r] - m) : T(0);  // β_r
      scaled(q_ + r * K, p_.scale, K, qs.data() + r * K);
      scaled(qs.data() + r * K, inter[r], K, q_inter.data() + r * K);
      scaled(k_ + r * K, to_end[r], K, k_to_end.data() + r * K);
    }
    block_transpose(k_, L, K, K, kt.data(), L);
    lower_triangle_of(L, K, T(1), qs.data(), K, kt.data(), L, weights.data(), L);  // Q̂ Kᵀ, s <= r
    multiply(weights.data(), decay.data(), L * L);  // D̄ is 0 above the diagonal: so is W
  }

  const MLSTMProblem<T>& p_;
  const int64_t L, K, V;
  const T *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *igate_ = nullptr, *fgate_ = nullptr;
  ChunkSegments segments;
  std::vector<T> cum, to_end_log;  // b, a (masked)
  T chunk_log = 0;                 // g
  double max_to_end = 0;           // max_r a_r
  std::vector<T> to_end, inter;    // Ā, β
  T carry = 0;                     // δ
  std::vector<T> decay, weights;   // D̄, W (L × L)
  std::vector<T> qs, q_inter, kt, k_to_end;  // Q̂, Q̂⊙β (L × Dqk), Kᵀ (Dqk × L), K⊙Ā (L × Dqk)
};

}  // namespace

void set_mlstm_cpu_kernels(bool on) { mlstm_kernels_switch().set(on); }
bool mlstm_cpu_kernels() { return mlstm_kernels_switch().on(); }

template <typename T>
void mlstm_forward_cpu(const MLSTMProblem<T>& p, const MLSTMBoundaries<T>& states, T eps, T* h_out, T* den, T* m_comb,
                       int64_t head_begin, int64_t head_end) {
  const int64_t L = p.chunk, K = p.qk_dim, V = p.v_dim, N = p.length, NC = p.chunks(), state_size = K * V;
  ChunkWork<T> w(p);
  const int64_t slots = states.slots > 0 ? states.slots : NC + 1;
  for (int64_t h = head_begin; h < head_end; ++h) {
    T* C_head = states.C + h * slots * state_size;
    T* n_head = states.n + h * slots * K;
    T* m_head = states.m + h * slots;
    for (int64_t c = 0; c < NC; ++c) {
      const int64_t t0 = h * N + c * L, now = c % slots, next = (c + 1) % slots;
      T* C = C_head + now * state_size;
      T* n = n_head + now * K;
      w.load(h, c);
      m_head[next] = w.next_stabiliser(m_head[now]);
      w.weigh(m_head[now], m_head[next], nullptr, m_comb + t0);
      T* h_c = h_out + t0 * V;  // num first, divided by the normaliser in place
      triangular_times(Triangle::lower, L, V, T(1), w.weights.data(), L, 1, w.v_, V, T(0), h_c, V);  // W V
      block_gemm(L, V, K, T(1), w.q_inter.data(), K, 1, C, V, T(1), h_c, V);        // + (Q̂⊙β) C
      for (int64_t r = 0; r < L; ++r) {
        den[t0 + r] = loops::sum(w.weights.data() + r * L, r + 1) + dot(w.q_inter.data() + r * K, n, K);
        loops::scale(h_c + r * V, T(1) / normaliser(den[t0 + r], m_comb[t0 + r], eps), V);
      }
      T* C_next = C_head + next * state_size;
      T* n_next = n_head + next * K;
      scaled(C, w.carry, state_size, C_next);
      block_gemm(K, V, L, T(1), w.k_to_end.data(), 1, K, w.v_, V, T(1), C_next, V);  // + (K⊙Ā)ᵀ V
      scaled(n, w.carry, K, n_next);
      for (int64_t r = 0; r < L; ++r) add_scaled(w.k_to_end.data() + r * K, T(1), K, n_next);
    }
  }
}

template <typename T>
void mlstm_backward_cpu(const MLSTMProblem<T>& p, const MLSTMBoundaries<T>& states, T eps, const T* h_out, const T* den,
                        const T* m_comb, const T* grad_h, const T* grad_C, const T* grad_n, T* dq, T* dk, T* dv,
                        T* d_igate, T* d_fgate, T* dC0, T* dn0, int64_t head_begin, int64_t head_end) {
  const int64_t L = p.chunk, K = p.qk_dim, V = p.v_dim, N = p.length, NC = p.chunks(), state_size = K * V;
  ChunkWork<T> w(p);
  auto buffer = [](int64_t n) { return std::vector<T>(static_cast<size_t>(n)); };
  std::vector<T> d_state = buffer(state_size), d_prev = buffer(state_size), d_norm = buffer(K), d_norm_prev = buffer(K);
  std::vector<T> state_t = buffer(state_size), d_state_t = buffer(state_size), v_t = buffer(V * L);
  std::vector<T> d_scores = buffer(L * L), through_state = buffer(L * K), dv_ones = buffer(L);
  std::vector<T> d_num_buffer = buffer(L * V), d_den_buffer = buffer(L);

  for (int64_t h = head_begin; h < head_end; ++h) {
    const T* C_all = states.C + h * (NC + 1) * state_size;
    const T* n_all = states.n + h * (NC + 1) * K;
    const T* m = states.m + h * (NC + 1);
    std::memcpy(d_state.data(), grad_C + h * state_size, sizeof(T) * state_size);
    std::memcpy(d_norm.data(), grad_n + h * K, sizeof(T) * K);
    // dlf_t = Σ_{u>=t} balance_u + <dC_N, C_N> + <dn_N, n_N>: the running sum starts at the final state
    T running = dot(d_state.data(), C_all + NC * state_size, state_size) + dot(d_norm.data(), n_all + NC * K, K);
    for (int64_t c = NC - 1; c >= 0; --c) {
      const int64_t t0 = h * N + c * L;
      const T* C = C_all + c * state_size;  // state before the chunk
      const T* n = n_all + c * K;
      // Through h = num / q, q = max(|den|, e^(−m_comb)) + eps:  dnum = dh / q,
      // dden = −(dh·h) / q · sign(den) · [|den| > e^(−m_comb)] (½ on a tie, as at::maximum)
      T* d_num = d_num_buffer.data();
      T* d_den = d_den_buffer.data();
      for (int64_t r = 0; r < L; ++r) {
        const int64_t t = t0 + r;
        const T floor = std::exp(-m_comb[t]), size = std::abs(den[t]);
        const T q = std::max(size, floor) + eps;
        scaled(grad_h + t * V, T(1) / q, V, d_num + r * V);
        const T through_den = size > floor ? T(1) : size == floor ? T(0.5) : T(0);
        const T sign = den[t] > 0 ? T(1) : den[t] < 0 ? T(-1) : T(0);
        d_den[r] = -dot(grad_h + t * V, h_out + t * V, V) / q * through_den * sign;
      }
      w.load(h, c);
      w.weigh(m[c], m[c + 1], m_comb + t0, nullptr);

      // dv = Wᵀ dnum + (K⊙Ā) dC;  dv'_ones = Wᵀ dden + (K⊙Ā) dn
      T* dv_c = dv + t0 * V;
      triangular_times(Triangle::upper, L, V, T(1), w.weights.data(), 1, L, d_num, V, T(0), dv_c, V);
      block_gemm(L, V, K, T(1), w.k_to_end.data(), K, 1, d_state.data(), V, T(1), dv_c, V);
      std::fill(dv_ones.begin(), dv_ones.end(), T(0));
      for (int64_t s = 0; s < L; ++s) add_scaled(w.weights.data() + s * L, d_den[s], s + 1, dv_ones.data());
      for (int64_t r = 0; r < L; ++r) dv_ones[r] += dot(w.k_to_end.data() + r * K, d_norm.data(), K);

      // dS = (dnum Vᵀ + dden 1ᵀ) ⊙ D̄
      block_transpose(w.v_, L, V, V, v_t.data(), L);
      lower_triangle_of(L, V, T(1), d_num, V, v_t.data(), L, d_scores.data(), L);
      for (int64_t r = 0; r < L; ++r) {
        T* __restrict row = d_scores.data() + r * L;
        const T* __restrict decay = w.decay.data() + r * L;
        for (int64_t s = 0; s <= r; ++s) row[s] = (row[s] + d_den[r]) * decay[s];
        std::fill(row + r + 1, row + L, T(0));
      }

      // dq̂ = dS K + β ⊙ (dnum Cᵀ + dden nᵀ)
      T* dq_c = dq + t0 * K;
      block_transpose(C, K, V, V, state_t.data(), K);
      block_gemm(L, K, V, T(1), d_num, V, 1, state_t.data(), K, T(0), through_state.data(), K);
      for (int64_t r = 0; r < L; ++r) {
        add_scaled(n, d_den[r], K, through_state.data() + r * K);
        scaled(through_state.data() + r * K, w.inter[r], K, dq_c + r * K);
      }
      triangular_times(Triangle::lower, L, K, T(1), d_scores.data(), L, 1, w.k_, K, T(1), dq_c, K);
      // dk = dSᵀ Q̂ + Ā ⊙ (V dCᵀ + 1 dnᵀ)
      T* dk_c = dk + t0 * K;
      block_transpose(d_state.data(), K, V, V, d_state_t.data(), K);
      block_gemm(L, K, V, T(1), w.v_, V, 1, d_state_t.data(), K, T(0), through_state.data(), K);
      for (int64_t r = 0; r < L; ++r) {
        add_scaled(d_norm.data(), T(1), K, through_state.data() + r * K);
        scaled(through_state.data() + r * K, w.to_end[r], K, dk_c + r * K);
      }
      triangular_times(Triangle::upper, L, K, T(1), d_scores.data(), 1, L, w.qs.data(), K, T(1), dk_c, K);

      // gates: dĩ = v'·dv';  dlf by the running balance;  df̃ = σ(−f̃) dlf (0 at resets)
      for (int64_t r = L - 1; r >= 0; --r) {
        d_igate[t0 + r] = dot(w.v_ + r * V, dv_c + r * V, V) + dv_ones[r];
        running += dot(w.qs.data() + r * K, dq_c + r * K, K) - dot(w.k_ + r * K, dk_c + r * K, K);
        const T sigmoid_neg = T(1) / (T(1) + std::exp(w.fgate_[r]));
        d_fgate[t0 + r] = w.segments.is_reset(r) ? T(0) : running * sigmoid_neg;
      }
      loops::scale(dq_c, p.scale, L * K);  // dq = scale · dq̂

      // dC_prev = δ dC + (Q̂⊙β)ᵀ dnum;  dn_prev = δ dn + (Q̂⊙β)ᵀ dden
      scaled(d_state.data(), w.carry, state_size, d_prev.data());
      block_gemm(K, V, L, T(1), w.q_inter.data(), 1, K, d_num, V, T(1), d_prev.data(), V);
      scaled(d_norm.data(), w.carry, K, d_norm_prev.data());
      for (int64_t r = 0; r < L; ++r) add_scaled(w.q_inter.data() + r * K, d_den[r], K, d_norm_prev.data());
      std::swap(d_state, d_prev);
      std::swap(d_norm, d_norm_prev);
    }
    std::memcpy(dC0 + h * state_size, d_state.data(), sizeof(T) * state_size);
    std::memcpy(dn0 + h * K, d_norm.data(), sizeof(T) * K);
  }
}

template void mlstm_forward_cpu<float>(const MLSTMProblem<float>&, const MLSTMBoundaries<float>&, float, float*,
                                       float*, float*, int64_t, int64_t);
template void mlstm_forward_cpu<double>(const MLSTMProblem<double>&, const MLSTMBoundaries<double>&, double, double*,
                                        double*, double*, int64_t, int64_t);
template void mlstm_backward_cpu<float>(const MLSTMProblem<float>&, const MLSTMBoundaries<float>&, float, const float*,
                                        const float*, const float*, const float*, const float*, const float*, float*,
                                        float*, float*, float*, float*, float*, float*, int64_t, int64_t);
template void mlstm_backward_cpu<double>(const MLSTMProblem<double>&, const MLSTMBoundaries<double>&, double,
                                         const double*, const double*, const double*, const double*, const double*,
                                         const double*, double*, double*, double*, double*, double*, double*, double*,
                                         int64_t, int64_t);

}  // namespace swarmt::ops::detail
