// Blocked sliding-window / causal attention on raw buffers (see attention_band_cpu.h).
//
// Per query block of R = q_len·rep grouped rows and its band of K keys, s = softcap(scale · q kᵀ) on
// the visible pairs (0 <= pos_i − pos_j < window, same document):
//   forward   S = scale·Q Kᵀ;  row by row: cap, mask, P = e^(s − m), lse = m + log Σ P;  O = P V / Σ P
//   backward  S = scale·Q Kᵀ, dP = dO Vᵀ;  row by row: P = exp(s − lse), Δ = dO·O,
//             dS = P ⊙ (dP − Δ) ⊙ (1 − tanh²) (the last factor with soft-capping only);
//             dQ = scale·dS K, dK += scale·dSᵀ Q, dV += Pᵀ dO
// The products are gemm_small calls (fp32 with AVX2 or AVX-512) or BLAS. Invisible pairs get P = dS = 0, so a
// product may run over more of the band than a row sees.
#include "swarmt/ops/attention_band_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "swarmt/ops/block_gemm.h"
#include "swarmt/ops/block_loops.h"
#include "swarmt/ops/gemm_small.h"
#include "swarmt/ops/vector_exp.h"

namespace swarmt::ops::detail {
namespace {

CpuKernelSwitch& band_kernels_switch() {
  static CpuKernelSwitch kernels;
  return kernels;
}

// The softmax pieces of a row: max, and x = e^(x − shift) with its sum (vectorised in fp32).
float row_max(const float* x, int64_t n) { return max_of(x, n); }
double row_max(const double* x, int64_t n) { return *std::max_element(x, x + n); }
float exp_sum_row(float* x, int64_t n, float shift) { return exp_shifted_sum(x, n, shift); }
double exp_sum_row(double* x, int64_t n, double shift) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}

// The visible keys of grouped row r of block b, as band offsets [lo, hi]; hi is the query's own key.
struct RowBand {
  int64_t pos;  // key index of the query
  int64_t lo;
  int64_t hi;
};

template <typename T>
RowBand row_band(const BandProblem<T>& p, const BandBlock& b, int64_t r) {
  RowBand band;
  band.pos = b.q_start + r / p.rep + p.past;
  band.hi = band.pos - b.k_start;
  band.lo = p.window > 0 ? std::max<int64_t>(b.k_start, band.pos - p.window + 1) - b.k_start : 0;
  return band;
}

// The band columns [lo[r], hi[r]] of every row of block b.
template <typename T>
void visible_columns(const BandProblem<T>& p, const BandBlock& b, int64_t rows, int64_t* lo, int64_t* hi) {
  for (int64_t r = 0; r < rows; ++r) {
    const RowBand band = row_band(p, b, r);
    lo[r] = band.lo;
    hi[r] = band.hi;
  }
}

// Soft-cap and mask the visible logits of one row in place: s_j = c·tanh(s_j / c) (tanh kept in
// `tanh_row` when given), −inf for keys of another document.
template <typename T>
void cap_and_mask(const BandProblem<T>& p, const BandBlock& b, const RowBand& band, const int64_t* docs, T* s,
                  T* tanh_row) {
  if (p.softcap > 0.0) {
    const T c = static_cast<T>(p.softcap);
    for (int64_t j = band.lo; j <= band.hi; ++j) {
      const T t = std::tanh(s[j] / c);
      if (tanh_row) tanh_row[j] = t;
      s[j] = c * t;
    }
  }
  if (docs) {
    const int64_t own = docs[band.pos];
    for (int64_t j = band.lo; j <= band.hi; ++j)
      if (docs[b.k_start + j] != own) s[j] = -std::numeric_limits<T>::infinity();
  }
}

// dS of one row's visible keys: ds_j = p_j · (dp_j − Δ), times (1 − t_j²) with soft-capping (t = tanh of
// the uncapped logit, or null).
SWARMT_VECTOR_CLONES void score_gradient_row(const float* __restrict p, float delta, const float* __restrict t,
                                             int64_t n, float* __restrict ds) {
  for (int64_t j = 0; j < n; ++j) ds[j] = p[j] * (ds[j] - delta);
  if (t)
    for (int64_t j = 0; j < n; ++j) ds[j] *= 1.0f - t[j] * t[j];
}
void score_gradient_row(const double* p, double delta, const double* t, int64_t n, double* ds) {
  for (int64_t j = 0; j < n; ++j) ds[j] = p[j] * (ds[j] - delta);
  if (t)
    for (int64_t j = 0; j < n; ++j) ds[j] *= 1.0 - t[j] * t[j];
}

template <typename T>
void zero_outside(T* row, int64_t lo, int64_t hi, int64_t len) {
  std::fill(row, row + lo, T(0));
  std::fill(row + hi + 1, row + len, T(0));
}

template <typename T>
int64_t max_band(const BandProblem<T>& p) {
  const int64_t n_keys = p.n_queries + p.past;
  return p.window > 0 ? std::min(n_keys, p.block_size + p.window - 1) : n_keys;
}

// The GEMMs of one block. fp32 with a vector gemm_small: gemm_small, with the keys (and values) transposed so that
// every right-hand side is row-major; otherwise BLAS on the buffers as they are. The transposes cover a
// chunk of kChunkKeys keys from the current band on, redone when a band leaves it (bands only move
// forward): transposing a whole head at once put the rows a block reads N·4 bytes apart, and at N = 64k
// the GEMM slowed down on page-table walks.
template <typename T>
class BlockProducts {
 public:
  BlockProducts(const BandProblem<T>& p)
      : d_(p.head_dim), row_stride_(p.kv_row_stride), small_(std::is_same_v<T, float> && gemm_small_is_vectorized()) {}

  // The head's keys and values (row 0 of each); blocks use rows below key_end.
  void set_head(const T* keys, const T* values, int64_t key_end, bool transpose_values) {
    head_keys_ = keys;
    head_values_ = values;
    key_end_ = key_end;
    transpose_values_ = transpose_values;
    chunk_begin_ = chunk_end_ = 0;
  }

  // The band of the next block: keys [k_start, k_start + len), and for each of its `rows` rows the band
  // columns [lo[r], hi[r]] it sees (non-decreasing in r). The vectorised products skip the rest in
  // tiles of kStrip rows (or keys): about a third of a sliding-window band is masked.
  void set_band(int64_t k_start, int64_t len, int64_t rows, const int64_t* lo, const int64_t* hi) {
    k_start_ = k_start;
    len_ = len;
    rows_ = rows;
    lo_ = lo;
    hi_ = hi;
    if (small_ && (k_start < chunk_begin_ || k_start + len > chunk_end_)) {
      chunk_begin_ = k_start;
      chunk_end_ = std::min(key_end_, k_start + std::max(len, kChunkKeys));
      const int64_t span = chunk_end_ - chunk_begin_;
      // A row stride of a multiple of 4 KiB would put every row a tile reads in one L1 set.
      ld_t_ = span + (span * static_cast<int64_t>(sizeof(T)) % 4096 == 0 ? 16 : 0);
      transpose(head_keys_, keys_t_);
      if (transpose_values_) transpose(head_values_, values_t_);
    }
  }

  // C (rows × len) = alpha · X Kᵀ (or X Vᵀ), X rows of D; only the visible columns of each strip.
  void times_keys_t(T alpha, const T* x, T* c) const { times_t(alpha, x, head_keys_, keys_t_, c); }
  void times_values_t(T alpha, const T* x, T* c) const { times_t(alpha, x, head_values_, values_t_, c); }
  // C (rows × D) = alpha · P K (or P V), P rows of len, zero outside the visible columns.
  void times_keys(T alpha, const T* probs, T* c) const { times(alpha, probs, head_keys_, c); }
  void times_values(T alpha, const T* probs, T* c) const { times(alpha, probs, head_values_, c); }
  // C (len × D) += alpha · Pᵀ X, P rows of len (zero outside the visible columns), X rows of D.
  void add_transposed_times(T alpha, const T* probs, const T* x, T* c) const {
    if constexpr (std::is_same_v<T, float>) {
      if (small_) {
        // Key strip [j0, j1) gets the rows that see any of its keys: r with hi[r] >= j0 and lo[r] < j1.
        int64_t r_begin = 0, r_end = 0;
        for (int64_t j0 = 0; j0 < len_; j0 += kStrip) {
          const int64_t j1 = std::min(len_, j0 + kStrip);
          while (r_begin < rows_ && hi_[r_begin] < j0) ++r_begin;
          while (r_end < rows_ && lo_[r_end] < j1) ++r_end;
          if (r_end > r_begin)
            gemm_small(j1 - j0, d_, r_end - r_begin, alpha, probs + r_begin * len_ + j0, 1, len_, x + r_begin * d_, d_,
                       1.0f, c + j0 * d_, d_);
        }
        return;
      }
    }
    gemm_rows(true, false, len_, d_, rows_, alpha, probs, len_, x, d_, T(1), c, d_);
  }

  private:
  // out (D × span) = rows [chunk_begin, chunk_end)ᵀ, by 8 × 8 register transposes (the kernel that reads
  // it exists only in fp32; a strided scalar copy took a fifth of the forward pass).
  void transpose(const T* rows, std::vector<T>& out) const {
    out.resize(static_cast<size_t>(d_ * ld_t_));
    if constexpr (std::is_same_v<T, float>)
      transpose_small(rows + chunk_begin_ * row_stride_, chunk_end_ - chunk_begin_, d_, row_stride_, out.data(), ld_t_);
  }
  static constexpr int64_t kStrip = 8;  // gemm_small's row tile

  // Row strip [r0, r1) sees band columns [lo[r0], hi[r1 − 1]].
  template <typename F>
  void for_each_strip(const F& f) const {
    for (int64_t r0 = 0; r0 < rows_; r0 += kStrip) {
      const int64_t r1 = std::min(rows_, r0 + kStrip);
      f(r0, r1, lo_[r0], hi_[r1 - 1] + 1);
    }
  }
  void times_t(T alpha, const T* x, const T* head, const std::vector<T>& head_t, T* c) const {
    if constexpr (std::is_same_v<T, float>) {
      if (small_) {
        const T* band_t = head_t.data() + (k_start_ - chunk_begin_);
        for_each_strip([&](int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
          gemm_small(r1 - r0, j1 - j0, d_, alpha, x + r0 * d_, d_, 1, band_t + j0, ld_t_, 0.0f, c + r0 * len_ + j0,
                     len_);
        });
        return;
      }
    }
    gemm_rows(false, true, rows_, len_, d_, alpha, x, d_, head + k_start_ * row_stride_, row_stride_, T(0), c, len_);
  }
  void times(T alpha, const T* probs, const T* head, T* c) const {
    const T* band = head + k_start_ * row_stride_;
    if constexpr (std::is_same_v<T, float>) {
      if (small_) {
        for_each_strip([&](int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
          gemm_small(r1 - r0, d_, j1 - j0, alpha, probs + r0 * len_ + j0, len_, 1, band + j0 * row_stride_,
                     row_stride_, 0.0f, c + r0 * d_, d_);
        });
        return;
      }
    }
    gemm_rows(false, false, rows_, d_, len_, alpha, probs, len_, band, row_stride_, T(0), c, d_);
  }

  int64_t d_, row_stride_;
  bool small_;
  const T* head_keys_ = nullptr;
  const T* head_values_ = nullptr;
  static constexpr int64_t kChunkKeys = 1024;
  int64_t key_end_ = 0, chunk_begin_ = 0, chunk_end_ = 0, ld_t_ = 0, k_start_ = 0, len_ = 0, rows_ = 0;
  bool transpose_values_ = false;
  const int64_t* lo_ = nullptr;
  const int64_t* hi_ = nullptr;
  std::vector<T> keys_t_, values_t_;
};

}  // namespace

void set_attention_band_kernels(bool on) { band_kernels_switch().set(on); }
bool attention_band_kernels() { return band_kernels_switch().on(); }

template <typename T>
void band_forward_cpu(const BandProblem<T>& p, T* out, T* lse, int64_t head_begin, int64_t head_end,
                      int64_t block_begin, int64_t block_end) {
  const int64_t d = p.head_dim, rows_per_head = p.n_queries * p.rep;
  std::vector<T> scores(static_cast<size_t>(std::min(p.block_size, p.n_queries) * p.rep * max_band(p)));
  std::vector<T> inverse_sums(static_cast<size_t>(std::min(p.block_size, p.n_queries) * p.rep));
  std::vector<int64_t> lo(inverse_sums.size()), hi(inverse_sums.size());
  BlockProducts<T> products(p);
  if (block_end <= block_begin) return;
  const BandBlock last = p.block(block_end - 1);
  for (int64_t h = head_begin; h < head_end; ++h) {
    const T* q = p.q + h * rows_per_head * d;
    const int64_t* docs = p.docs ? p.docs + h * p.n_keys : nullptr;
    products.set_head(p.k + h * p.kv_head_stride, p.v + h * p.kv_head_stride, last.k_start + last.k_len, false);
    for (int64_t index = block_begin; index < block_end; ++index) {
      const BandBlock b = p.block(index);
      const int64_t rows = b.q_len * p.rep, row0 = b.q_start * p.rep, len = b.k_len;
      T* s = scores.data();
      visible_columns(p, b, rows, lo.data(), hi.data());
      products.set_band(b.k_start, len, rows, lo.data(), hi.data());
      products.times_keys_t(static_cast<T>(p.scale), q + row0 * d, s);
      // Unnormalised P = e^(s − m) (the query's own key is always visible, so m is finite); O = P V is
      // divided by Σ P afterwards, D values per row instead of the band's.
      for (int64_t r = 0; r < rows; ++r, s += len) {
        const RowBand band = row_band(p, b, r);
        cap_and_mask(p, b, band, docs, s, static_cast<T*>(nullptr));
        const T m = row_max(s + band.lo, band.hi - band.lo + 1);
        const T sum = exp_sum_row(s + band.lo, band.hi - band.lo + 1, m);
        zero_outside(s, band.lo, band.hi, len);
        inverse_sums[r] = T(1) / sum;
        lse[h * rows_per_head + row0 + r] = m + std::log(sum);
      }
      T* o = out + (h * rows_per_head + row0) * d;
      products.times_values(T(1), scores.data(), o);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t e = 0; e < d; ++e) o[r * d + e] *= inverse_sums[r];
    }
  }
}

template <typename T>
void band_backward_cpu(const BandProblem<T>& p, const T* out, const T* lse, const T* grad_out, T* dq, T* dk, T* dv,
                       int64_t head_begin, int64_t head_end) {
  const int64_t d = p.head_dim, rows_per_head = p.n_queries * p.rep;
  const size_t scratch = static_cast<size_t>(std::min(p.block_size, p.n_queries) * p.rep * max_band(p));
  std::vector<T> probs(scratch), grad_scores(scratch), tanh_values(p.softcap > 0.0 ? scratch : 0);
  const T scale = static_cast<T>(p.scale);
  std::vector<int64_t> lo(static_cast<size_t>(std::min(p.block_size, p.n_queries) * p.rep)), hi(lo.size());
  BlockProducts<T> products(p);
  for (int64_t h = head_begin; h < head_end; ++h) {
    const T* q = p.q + h * rows_per_head * d;
    products.set_head(p.k + h * p.kv_head_stride, p.v + h * p.kv_head_stride, p.n_keys, true);
    const T* o = out + h * rows_per_head * d;
    const T* g = grad_out + h * rows_per_head * d;
    const T* lse_h = lse + h * rows_per_head;
    const int64_t* docs = p.docs ? p.docs + h * p.n_keys : nullptr;
    T* dk_h = dk + h * p.n_keys * d;
    T* dv_h = dv + h * p.n_keys * d;
    // Bands only move forward: each block zeroes the keys it is the first to reach (cache-hot).
    int64_t keys_zeroed = 0;
    for (int64_t index = 0; index < p.num_blocks(); ++index) {
      const BandBlock b = p.block(index);
      const int64_t rows = b.q_len * p.rep, row0 = b.q_start * p.rep, len = b.k_len;
      const int64_t k_end = b.k_start + len;
      std::memset(dk_h + keys_zeroed * d, 0, sizeof(T) * (k_end - keys_zeroed) * d);
      std::memset(dv_h + keys_zeroed * d, 0, sizeof(T) * (k_end - keys_zeroed) * d);
      keys_zeroed = k_end;
      const T* q_rows = q + row0 * d;
      const T* g_rows = g + row0 * d;
      visible_columns(p, b, rows, lo.data(), hi.data());
      products.set_band(b.k_start, len, rows, lo.data(), hi.data());
      products.times_keys_t(scale, q_rows, probs.data());
      products.times_values_t(T(1), g_rows, grad_scores.data());
      for (int64_t r = 0; r < rows; ++r) {
        T* s = probs.data() + r * len;
        T* ds = grad_scores.data() + r * len;
        T* t = tanh_values.empty() ? nullptr : tanh_values.data() + r * len;
        const RowBand band = row_band(p, b, r);
        cap_and_mask(p, b, band, docs, s, t);
        exp_sum_row(s + band.lo, band.hi - band.lo + 1, lse_h[row0 + r]);  // P = e^(s − lse)
        const T delta = loops::dot(g_rows + r * d, o + (row0 + r) * d, d);  // Δ = dO·O
        score_gradient_row(s + band.lo, delta, t ? t + band.lo : nullptr, band.hi - band.lo + 1, ds + band.lo);
        zero_outside(s, band.lo, band.hi, len);
        zero_outside(ds, band.lo, band.hi, len);
      }
      products.times_keys(scale, grad_scores.data(), dq + (h * rows_per_head + row0) * d);
      products.add_transposed_times(scale, grad_scores.data(), q_rows, dk_h + b.k_start * d);
      products.add_transposed_times(T(1), probs.data(), g_rows, dv_h + b.k_start * d);
    }
    std::memset(dk_h + keys_zeroed * d, 0, sizeof(T) * (p.n_keys - keys_zeroed) * d);  // keys no query sees
    std::memset(dv_h + keys_zeroed * d, 0, sizeof(T) * (p.n_keys - keys_zeroed) * d);
  }
}

template void band_forward_cpu<float>(const BandProblem<float>&, float*, float*, int64_t, int64_t, int64_t, int64_t);
template void band_forward_cpu<double>(const BandProblem<double>&, double*, double*, int64_t, int64_t, int64_t,
                                       int64_t);
template void band_backward_cpu<float>(const BandProblem<float>&, const float*, const float*, const float*, float*,
                                       float*, float*, int64_t, int64_t);
template void band_backward_cpu<double>(const BandProblem<double>&, const double*, const double*, const double*,
                                        double*, double*, double*, int64_t, int64_t);

}  // namespace swarmt::ops::detail
