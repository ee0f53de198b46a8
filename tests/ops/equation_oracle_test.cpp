// The numeric oracle of specs/verify_equations.py, checks 1-5, ported line by line to plain C++ loops over
// doubles (no ATen in the oracles), then used two ways: the identities the script prints are asserted
// here with tolerances, and the library kernels are compared against the oracles.
//   1. mLSTM stabilised recurrent == chunkwise (per-chunk loop) == parallel (App. A.3, ± the b_t term)
//   2. mLSTM: the stabiliser m cancels (m0 = 0 vs m0 = -7)
//   3. mLSTM parallel backward (App. A.3 eqs. 87-105 with sign(b̄)) vs finite differences
//  3b. gate-gradient identities dF = σ(-f) revcumsum(q·dq - k·dk), dI = v·dv (numerator only)
//   4. Gated DeltaNet recurrent == chunkwise UT/WY form
//   5. Gated DeltaNet hand-written recurrent backward vs finite differences
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/mlstm.h"
#include "test_util.h"

namespace swarmt::ops {
namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;

// ---------------------------------------------------------------- utilities (as in the script)
Mat zeros(size_t r, size_t c) { return Mat(r, Vec(c, 0.0)); }

struct Rng {
  std::mt19937_64 engine;
  explicit Rng(uint64_t seed) : engine(seed) {}
  double gauss(double mean, double sd) { return std::normal_distribution<double>(mean, sd)(engine); }
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(engine); }
  Mat randn(size_t r, size_t c) {
    Mat m = zeros(r, c);
    for (auto& row : m)
      for (auto& x : row) x = gauss(0.0, 1.0);
    return m;
  }
  Vec gauss_vec(size_t n, double mean, double sd) {
    Vec v(n);
    for (auto& x : v) x = gauss(mean, sd);
    return v;
  }
};

double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
double logsigmoid(double x) { return x > 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(-std::abs(x))) + std::max(x, 0.0); }
double maxabsdiff(const Mat& a, const Mat& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[i].size(); ++j) worst = std::max(worst, std::abs(a[i][j] - b[i][j]));
  return worst;
}
double maxabsdiff(const Vec& a, const Vec& b) { return maxabsdiff(Mat{a}, Mat{b}); }
Vec scaled(const Vec& x, double s) {
  Vec y(x);
  for (auto& e : y) e *= s;
  return y;
}

// ---------------------------------------------------------------- mLSTM oracles
Mat mlstm_recurrent(const Mat& Q, const Mat& K, const Mat& V, const Vec& I, const Vec& F, double eps, double m0) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  Mat C = zeros(dk, dv);
  Vec n(dk, 0.0);
  double m = m0;
  Mat H;
  for (size_t t = 0; t < T; ++t) {
    double lf = logsigmoid(F[t]);
    double m_new = std::max(lf + m, I[t]);
    double fa = std::exp(lf + m - m_new), ia = std::exp(I[t] - m_new);
    for (size_t a = 0; a < dk; ++a) {
      for (size_t b = 0; b < dv; ++b) C[a][b] = fa * C[a][b] + ia * K[t][a] * V[t][b];
      n[a] = fa * n[a] + ia * K[t][a];
    }
    m = m_new;
    Vec q = scaled(Q[t], 1.0 / std::sqrt(double(dk)));
    Vec num(dv, 0.0);
    for (size_t b = 0; b < dv; ++b)
      for (size_t a = 0; a < dk; ++a) num[b] += q[a] * C[a][b];
    double den = std::max(std::abs(dot(q, n)), std::exp(-m)) + eps;
    H.push_back(scaled(num, 1.0 / den));
  }
  return H;
}

Mat mlstm_parallel(const Mat& Q, const Mat& K, const Mat& V, const Vec& I, const Vec& F, double eps,
                   bool include_init_term) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  Vec cs(T + 1, 0.0);
  for (size_t t = 0; t < T; ++t) cs[t + 1] = cs[t] + logsigmoid(F[t]);
  Mat H;
  for (size_t i = 0; i < T; ++i) {
    Vec logD(i + 1);
    for (size_t j = 0; j <= i; ++j) logD[j] = cs[i + 1] - cs[j + 1] + I[j];
    double m = *std::max_element(logD.begin(), logD.end());
    if (include_init_term) m = std::max(m, cs[i + 1]);
    Vec Ct(i + 1);
    double b = 0.0;
    for (size_t j = 0; j <= i; ++j) {
      Ct[j] = dot(Q[i], K[j]) / std::sqrt(double(dk)) * std::exp(logD[j] - m);
      b += Ct[j];
    }
    double nrm = std::max(std::abs(b), std::exp(-m)) + eps;
    Vec h(dv, 0.0);
    for (size_t c = 0; c < dv; ++c)
      for (size_t j = 0; j <= i; ++j) h[c] += Ct[j] * V[j][c] / nrm;
    H.push_back(h);
  }
  return H;
}

Mat mlstm_chunkwise(const Mat& Q, const Mat& K, const Mat& V, const Vec& I, const Vec& F, size_t L, double eps) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  Mat C = zeros(dk, dv);
  Vec n(dk, 0.0);
  double m_inter = 0.0;
  Mat H;
  for (size_t k0 = 0; k0 < T; k0 += L) {
    Vec b(L);
    double s = 0.0;
    for (size_t r = 0; r < L; ++r) b[r] = (s += logsigmoid(F[k0 + r]));
    for (size_t r = 0; r < L; ++r) {
      Vec q = scaled(Q[k0 + r], 1.0 / std::sqrt(double(dk)));
      Vec logD(r + 1);
      for (size_t j = 0; j <= r; ++j) logD[j] = b[r] - b[j] + I[k0 + j];
      double m_intra = *std::max_element(logD.begin(), logD.end());
      double m_comb = std::max(b[r] + m_inter, m_intra);
      double w_inter = std::exp(b[r] + m_inter - m_comb);
      Vec num(dv, 0.0);
      for (size_t c = 0; c < dv; ++c)
        for (size_t a = 0; a < dk; ++a) num[c] += w_inter * q[a] * C[a][c];
      double den = w_inter * dot(q, n);
      for (size_t j = 0; j <= r; ++j) {
        double wgt = dot(q, K[k0 + j]) * std::exp(logD[j] - m_comb);
        for (size_t c = 0; c < dv; ++c) num[c] += wgt * V[k0 + j][c];
        den += wgt;
      }
      double dd = std::max(std::abs(den), std::exp(-m_comb)) + eps;
      H.push_back(scaled(num, 1.0 / dd));
    }
    double g = b[L - 1];
    Vec a(L);
    for (size_t r = 0; r < L; ++r) a[r] = g - b[r] + I[k0 + r];
    double m_next = std::max(g + m_inter, *std::max_element(a.begin(), a.end()));
    double decay = std::exp(g + m_inter - m_next);
    for (size_t p = 0; p < dk; ++p) {
      for (size_t c = 0; c < dv; ++c) {
        double add = 0.0;
        for (size_t r = 0; r < L; ++r) add += std::exp(a[r] - m_next) * K[k0 + r][p] * V[k0 + r][c];
        C[p][c] = decay * C[p][c] + add;
      }
      double add = 0.0;
      for (size_t r = 0; r < L; ++r) add += std::exp(a[r] - m_next) * K[k0 + r][p];
      n[p] = decay * n[p] + add;
    }
    m_inter = m_next;
  }
  return H;
}

struct ParallelGrads {
  Mat H, dQ, dK, dV;
  Vec dI, dF;
};

// Forward + backward of the parallel stabilised mLSTM, eps = 0, sign(b̄) in eq. 90.
ParallelGrads mlstm_parallel_fw_bw(const Mat& Q, const Mat& K, const Mat& V, const Vec& I, const Vec& F,
                                   const Mat& dH) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  const double sc = 1.0 / std::sqrt(double(dk));
  Vec cs(T + 1, 0.0);
  for (size_t t = 0; t < T; ++t) cs[t + 1] = cs[t] + logsigmoid(F[t]);
  const double NEG = -1e30;
  Mat Dt = zeros(T, T), Dp = zeros(T, T), S = zeros(T, T), Ct = zeros(T, T), Cm = zeros(T, T);
  Vec m(T), b(T, 0.0), n(T);
  for (size_t i = 0; i < T; ++i) {
    for (size_t j = 0; j < T; ++j) Dt[i][j] = j <= i ? cs[i + 1] - cs[j + 1] + I[j] : NEG;
    m[i] = *std::max_element(Dt[i].begin(), Dt[i].end());
    for (size_t j = 0; j < T; ++j) {
      Dp[i][j] = j <= i ? std::exp(Dt[i][j] - m[i]) : 0.0;
      S[i][j] = dot(Q[i], K[j]) * sc;
      Ct[i][j] = S[i][j] * Dp[i][j];
      b[i] += Ct[i][j];
    }
    n[i] = std::max(std::abs(b[i]), std::exp(-m[i]));
    for (size_t j = 0; j < T; ++j) Cm[i][j] = Ct[i][j] / n[i];
  }
  ParallelGrads out;
  out.H = zeros(T, dv);
  for (size_t i = 0; i < T; ++i)
    for (size_t c = 0; c < dv; ++c)
      for (size_t j = 0; j < T; ++j) out.H[i][c] += Cm[i][j] * V[j][c];
  Mat dC = zeros(T, T), dCt = zeros(T, T), dDt = zeros(T, T), G = zeros(T, T);
  for (size_t i = 0; i < T; ++i) {
    double dn = 0.0;
    for (size_t j = 0; j < T; ++j) {
      dC[i][j] = dot(dH[i], V[j]);
      dn -= Ct[i][j] * dC[i][j];
    }
    dn /= n[i] * n[i];
    double db = std::abs(b[i]) > std::exp(-m[i]) ? std::copysign(1.0, b[i]) * dn : 0.0;
    for (size_t j = 0; j < T; ++j) {
      dCt[i][j] = dC[i][j] / n[i] + db;
      dDt[i][j] = Dp[i][j] * S[i][j] * dCt[i][j];
      G[i][j] = Dp[i][j] * dCt[i][j];
    }
  }
  out.dQ = zeros(T, dk);
  out.dK = zeros(T, dk);
  out.dV = zeros(T, dv);
  out.dI.assign(T, 0.0);
  out.dF.assign(T, 0.0);
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j) {
      for (size_t a = 0; a < dk; ++a) {
        out.dQ[i][a] += G[i][j] * K[j][a] * sc;
        out.dK[j][a] += G[i][j] * Q[i][a] * sc;
      }
      for (size_t c = 0; c < dv; ++c) out.dV[j][c] += Cm[i][j] * dH[i][c];
    }
  for (size_t k = 0; k < T; ++k) {
    double dlf = 0.0;
    for (size_t j = 0; j < k; ++j)
      for (size_t i = k; i < T; ++i) dlf += dDt[i][j];
    out.dF[k] = sigmoid(-F[k]) * dlf;
    for (size_t i = k; i < T; ++i) out.dI[k] += dDt[i][k];
  }
  return out;
}

// h_i = Σ_{j<=i} (q_i·k_j/√d) exp(b_i - b_j + ĩ_j) v_j (no normaliser)
Mat mlstm_numerator_only(const Mat& Q, const Mat& K, const Mat& V, const Vec& I, const Vec& F) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  Vec cs(T + 1, 0.0);
  for (size_t t = 0; t < T; ++t) cs[t + 1] = cs[t] + logsigmoid(F[t]);
  Mat H = zeros(T, dv);
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j <= i; ++j) {
      double w = dot(Q[i], K[j]) / std::sqrt(double(dk)) * std::exp(cs[i + 1] - cs[j + 1] + I[j]);
      for (size_t c = 0; c < dv; ++c) H[i][c] += w * V[j][c];
    }
  return H;
}

// ---------------------------------------------------------------- Gated DeltaNet oracles
std::pair<Mat, Mat> gdn_recurrent(const Mat& Q, const Mat& K, const Mat& V, const Vec& beta, const Vec& g) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  Mat S = zeros(dk, dv), O;
  for (size_t t = 0; t < T; ++t) {
    double al = std::exp(g[t]);
    for (auto& row : S)
      for (auto& x : row) x *= al;
    Vec u(dv);
    for (size_t c = 0; c < dv; ++c) {
      double pred = 0.0;
      for (size_t a = 0; a < dk; ++a) pred += S[a][c] * K[t][a];
      u[c] = beta[t] * (V[t][c] - pred);
    }
    for (size_t a = 0; a < dk; ++a)
      for (size_t c = 0; c < dv; ++c) S[a][c] += K[t][a] * u[c];
    Vec q = scaled(Q[t], 1.0 / std::sqrt(double(dk)));
    Vec o(dv, 0.0);
    for (size_t c = 0; c < dv; ++c)
      for (size_t a = 0; a < dk; ++a) o[c] += q[a] * S[a][c];
    O.push_back(o);
  }
  return {O, S};
}

std::pair<Mat, Mat> gdn_chunkwise(const Mat& Q, const Mat& K, const Mat& V, const Vec& beta, const Vec& g, size_t Cs) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  Mat S = zeros(dk, dv), O;
  for (size_t k0 = 0; k0 < T; k0 += Cs) {
    Vec lg(Cs);
    double s = 0.0;
    for (size_t r = 0; r < Cs; ++r) lg[r] = (s += g[k0 + r]);
    auto Kc = [&](size_t r) -> const Vec& { return K[k0 + r]; };
    Mat A = zeros(Cs, Cs), Tm = zeros(Cs, Cs);
    for (size_t i = 0; i < Cs; ++i)
      for (size_t j = 0; j < i; ++j) A[i][j] = beta[k0 + i] * dot(Kc(i), Kc(j)) * std::exp(lg[i] - lg[j]);
    for (size_t i = 0; i < Cs; ++i) {
      Tm[i][i] = 1.0;
      for (size_t j = 0; j < i; ++j) {
        double acc = 0.0;
        for (size_t p = j; p < i; ++p) acc += A[i][p] * Tm[p][j];
        Tm[i][j] = -acc;
      }
    }
    Mat U = zeros(Cs, dv), W = zeros(Cs, dk), Vn = zeros(Cs, dv);
    for (size_t i = 0; i < Cs; ++i)
      for (size_t p = 0; p < Cs; ++p) {
        for (size_t c = 0; c < dv; ++c) U[i][c] += Tm[i][p] * beta[k0 + p] * V[k0 + p][c];
        for (size_t a = 0; a < dk; ++a) W[i][a] += Tm[i][p] * beta[k0 + p] * std::exp(lg[p]) * Kc(p)[a];
      }
    for (size_t i = 0; i < Cs; ++i)
      for (size_t c = 0; c < dv; ++c) {
        Vn[i][c] = U[i][c];
        for (size_t a = 0; a < dk; ++a) Vn[i][c] -= W[i][a] * S[a][c];
      }
    for (size_t i = 0; i < Cs; ++i) {
      Vec q = scaled(Q[k0 + i], 1.0 / std::sqrt(double(dk)));
      Vec o(dv, 0.0);
      for (size_t c = 0; c < dv; ++c)
        for (size_t a = 0; a < dk; ++a) o[c] += std::exp(lg[i]) * q[a] * S[a][c];
      for (size_t j = 0; j <= i; ++j) {
        double w = dot(q, Kc(j)) * std::exp(lg[i] - lg[j]);
        for (size_t c = 0; c < dv; ++c) o[c] += w * Vn[j][c];
      }
      O.push_back(o);
    }
    double gl = lg[Cs - 1];
    for (size_t a = 0; a < dk; ++a)
      for (size_t c = 0; c < dv; ++c) {
        double add = 0.0;
        for (size_t j = 0; j < Cs; ++j) add += Kc(j)[a] * std::exp(gl - lg[j]) * Vn[j][c];
        S[a][c] = std::exp(gl) * S[a][c] + add;
      }
  }
  return {O, S};
}

struct GdnGrads {
  Mat dQ, dK, dV;
  Vec dB, dG;
};

// Manual BPTT for the recurrent gated delta rule (swax.md §3.6), all states stored.
GdnGrads gdn_recurrent_bw(const Mat& Q, const Mat& K, const Mat& V, const Vec& beta, const Vec& g, const Mat& dO) {
  const size_t T = Q.size(), dk = Q[0].size(), dv = V[0].size();
  const double sc = 1.0 / std::sqrt(double(dk));
  Mat S = zeros(dk, dv);
  std::vector<Mat> Sp_list, S_list;
  Mat u_list;
  for (size_t t = 0; t < T; ++t) {
    Mat Sp = S;
    for (auto& row : Sp)
      for (auto& x : row) x *= std::exp(g[t]);
    Vec u(dv);
    for (size_t c = 0; c < dv; ++c) {
      double pred = 0.0;
      for (size_t a = 0; a < dk; ++a) pred += Sp[a][c] * K[t][a];
      u[c] = beta[t] * (V[t][c] - pred);
    }
    S = Sp;
    for (size_t a = 0; a < dk; ++a)
      for (size_t c = 0; c < dv; ++c) S[a][c] += K[t][a] * u[c];
    Sp_list.push_back(Sp);
    u_list.push_back(u);
    S_list.push_back(S);
  }
  GdnGrads gr{zeros(T, dk), zeros(T, dk), zeros(T, dv), Vec(T, 0.0), Vec(T, 0.0)};
  Mat dS = zeros(dk, dv);
  for (size_t t = T; t-- > 0;) {
    const Mat &St = S_list[t], &Sp = Sp_list[t];
    const Vec& u = u_list[t];
    for (size_t a = 0; a < dk; ++a) {
      for (size_t c = 0; c < dv; ++c) gr.dQ[t][a] += sc * St[a][c] * dO[t][c];
      for (size_t c = 0; c < dv; ++c) dS[a][c] += sc * Q[t][a] * dO[t][c];
    }
    Vec du(dv, 0.0);
    for (size_t c = 0; c < dv; ++c)
      for (size_t a = 0; a < dk; ++a) du[c] += dS[a][c] * K[t][a];
    for (size_t a = 0; a < dk; ++a) gr.dK[t][a] += dot(dS[a], u);
    Mat dSp = dS;
    for (size_t c = 0; c < dv; ++c) {
      double pred = 0.0;
      for (size_t a = 0; a < dk; ++a) pred += Sp[a][c] * K[t][a];
      gr.dB[t] += du[c] * (V[t][c] - pred);
      gr.dV[t][c] += beta[t] * du[c];
    }
    for (size_t a = 0; a < dk; ++a) {
      gr.dK[t][a] -= beta[t] * dot(Sp[a], du);
      for (size_t c = 0; c < dv; ++c) dSp[a][c] -= beta[t] * K[t][a] * du[c];
    }
    for (size_t a = 0; a < dk; ++a)
      for (size_t c = 0; c < dv; ++c) gr.dG[t] += dSp[a][c] * Sp[a][c];
    for (size_t a = 0; a < dk; ++a)
      for (size_t c = 0; c < dv; ++c) dS[a][c] = std::exp(g[t]) * dSp[a][c];
  }
  return gr;
}

// ---------------------------------------------------------------- finite differences over Mat / Vec
double loss_of(const Mat& H, const Mat& R) {
  double s = 0.0;
  for (size_t i = 0; i < H.size(); ++i) s += dot(H[i], R[i]);
  return s;
}

Mat fd_mat(Mat& X, const std::function<double()>& loss, double h = 1e-6) {
  Mat G = zeros(X.size(), X[0].size());
  for (size_t i = 0; i < X.size(); ++i)
    for (size_t a = 0; a < X[0].size(); ++a) {
      double old = X[i][a];
      X[i][a] = old + h;
      double lp = loss();
      X[i][a] = old - h;
      double lm = loss();
      X[i][a] = old;
      G[i][a] = (lp - lm) / (2 * h);
    }
  return G;
}

Vec fd_vec(Vec& X, const std::function<double()>& loss, double h = 1e-6) {
  Mat wrapped{X};
  Mat G = fd_mat(wrapped, [&]() {
    X = wrapped[0];
    return loss();
  }, h);
  X = wrapped[0];
  return G[0];
}

// ---------------------------------------------------------------- Mat <-> tensor (B = H = 1)
at::Tensor to_tensor(const Mat& m) {
  at::Tensor t = at::empty({1, 1, int64_t(m.size()), int64_t(m[0].size())}, at::kDouble);
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = 0; j < m[0].size(); ++j) t[0][0][i][j] = m[i][j];
  return t;
}
at::Tensor to_tensor(const Vec& v) { return to_tensor(Mat{v}).view({1, 1, int64_t(v.size())}); }
Mat to_mat(const at::Tensor& t) {
  at::Tensor c = t.detach().reshape({-1, t.size(-1)}).contiguous();
  Mat m = zeros(c.size(0), c.size(1));
  auto acc = c.accessor<double, 2>();
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = 0; j < m[0].size(); ++j) m[i][j] = acc[i][j];
  return m;
}
Vec to_vec(const at::Tensor& t) { return to_mat(t.reshape({1, -1}))[0]; }

// ---------------------------------------------------------------- the checks
struct MLSTMCase {
  Mat Q, K, V;
  Vec I, F;
};

MLSTMCase check1_inputs() {  // T = 16, dk = 4, dv = 3, ĩ ~ N(0, 2²), f̃ ~ N(3, 2²)
  Rng rng(0);
  MLSTMCase c{rng.randn(16, 4), rng.randn(16, 4), rng.randn(16, 3), {}, {}};
  c.I = rng.gauss_vec(16, 0.0, 2.0);
  c.F = rng.gauss_vec(16, 3.0, 2.0);
  return c;
}

TEST(EquationOracle, check1_mlstm_recurrent_chunkwise_parallel_agree) {
  MLSTMCase c = check1_inputs();
  Mat Hr = mlstm_recurrent(c.Q, c.K, c.V, c.I, c.F, 0.0, 0.0);
  EXPECT_LT(maxabsdiff(Hr, mlstm_chunkwise(c.Q, c.K, c.V, c.I, c.F, 4, 0.0)), 1e-12);
  EXPECT_LT(maxabsdiff(Hr, mlstm_parallel(c.Q, c.K, c.V, c.I, c.F, 0.0, false)), 1e-12);
  EXPECT_LT(maxabsdiff(Hr, mlstm_parallel(c.Q, c.K, c.V, c.I, c.F, 0.0, true)), 1e-12);
  // The library kernels against the oracle (default eps: the + b_t parallel form shares m with both).
  Mat Hr_eps = mlstm_recurrent(c.Q, c.K, c.V, c.I, c.F, 1e-6, 0.0);
  at::Tensor q = to_tensor(c.Q), k = to_tensor(c.K), v = to_tensor(c.V), i = to_tensor(c.I), f = to_tensor(c.F);
  for (int64_t chunk : {1, 4, 16, 64}) {
    MLSTMOptions options;
    options.chunk_size = chunk;
    EXPECT_LT(maxabsdiff(Hr_eps, to_mat(mlstm_chunkwise(q, k, v, i, f, std::nullopt, options).first)), 1e-12);
  }
  EXPECT_LT(maxabsdiff(Hr_eps, mlstm_parallel(c.Q, c.K, c.V, c.I, c.F, 1e-6, true)), 1e-12);
  EXPECT_LT(maxabsdiff(Hr_eps, to_mat(mlstm_parallel_reference(q, k, v, i, f, 1e-6))), 1e-12);
  EXPECT_LT(maxabsdiff(Hr_eps, to_mat(mlstm_recurrent_reference(q, k, v, i, f, std::nullopt, 1e-6).first)), 1e-12);
}

TEST(EquationOracle, check2_mlstm_stabiliser_cancels) {
  MLSTMCase c = check1_inputs();
  EXPECT_LT(maxabsdiff(mlstm_recurrent(c.Q, c.K, c.V, c.I, c.F, 0.0, 0.0),
                       mlstm_recurrent(c.Q, c.K, c.V, c.I, c.F, 0.0, -7.0)),
            1e-12);
}

TEST(EquationOracle, check3_mlstm_parallel_backward_matches_finite_differences_and_the_kernel) {
  Rng rng(3);
  const size_t T = 6, d = 3;
  Mat Q = rng.randn(T, d), K = rng.randn(T, d), V = rng.randn(T, d);
  Vec I = rng.gauss_vec(T, 0.0, 1.0), F = rng.gauss_vec(T, 1.0, 1.0);
  Mat R = rng.randn(T, d);
  ParallelGrads gr = mlstm_parallel_fw_bw(Q, K, V, I, F, R);
  auto loss = [&]() { return loss_of(mlstm_parallel(Q, K, V, I, F, 0.0, false), R); };
  EXPECT_LT(maxabsdiff(gr.H, mlstm_parallel(Q, K, V, I, F, 0.0, false)), 1e-12);
  EXPECT_LT(maxabsdiff(gr.dQ, fd_mat(Q, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dK, fd_mat(K, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dV, fd_mat(V, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dI, fd_vec(I, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dF, fd_vec(F, loss)), 1e-7);

  // The chunkwise kernel's custom backward (eps = 0, zero state) gives the same gradients.
  at::Tensor q = to_tensor(Q).requires_grad_(), k = to_tensor(K).requires_grad_(), v = to_tensor(V).requires_grad_();
  at::Tensor i = to_tensor(I).requires_grad_(), f = to_tensor(F).requires_grad_();
  MLSTMOptions options;
  options.chunk_size = 4;
  options.eps = 0.0;
  (mlstm_chunkwise(q, k, v, i, f, std::nullopt, options).first * to_tensor(R)).sum().backward();
  EXPECT_LT(maxabsdiff(gr.dQ, to_mat(q.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dK, to_mat(k.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dV, to_mat(v.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dI, to_vec(i.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dF, to_vec(f.grad())), 1e-10);
}

TEST(EquationOracle, check3b_gate_gradient_identities_hold_for_the_numerator) {
  Rng rng(5);
  const size_t T = 7, d = 3;
  Mat Q = rng.randn(T, d), K = rng.randn(T, d), V = rng.randn(T, d);
  Vec I = rng.gauss_vec(T, 0.0, 0.5), F = rng.gauss_vec(T, 1.0, 1.0);
  Mat R = rng.randn(T, d);
  auto loss = [&]() { return loss_of(mlstm_numerator_only(Q, K, V, I, F), R); };
  Mat dQ = fd_mat(Q, loss), dK = fd_mat(K, loss), dV = fd_mat(V, loss);
  Vec dI = fd_vec(I, loss), dF = fd_vec(F, loss);
  Vec dF_identity(T), dI_identity(T);
  double rev = 0.0;
  for (size_t t = T; t-- > 0;) {
    rev += dot(Q[t], dQ[t]) - dot(K[t], dK[t]);
    dF_identity[t] = sigmoid(-F[t]) * rev;
    dI_identity[t] = dot(V[t], dV[t]);
  }
  EXPECT_LT(maxabsdiff(dF, dF_identity), 1e-7);
  EXPECT_LT(maxabsdiff(dI, dI_identity), 1e-7);
}

struct GdnCase {
  Mat Q, K, V;
  Vec beta, g;
};

GdnCase check4_inputs() {  // T = 16, dk = 4, dv = 3, chunk 4, as in the script
  Rng rng(4);
  auto l2n = [](Vec x) {
    double s = std::sqrt(dot(x, x) + 1e-6);
    return scaled(x, 1.0 / s);
  };
  GdnCase c;
  for (const Vec& row : rng.randn(16, 4)) c.Q.push_back(l2n(row));
  for (const Vec& row : rng.randn(16, 4)) c.K.push_back(l2n(row));
  c.V = rng.randn(16, 3);
  for (int t = 0; t < 16; ++t) c.beta.push_back(sigmoid(rng.gauss(0, 1)));
  double A_log = std::log(rng.uniform(0, 16));
  for (int t = 0; t < 16; ++t) c.g.push_back(-std::exp(A_log) * softplus(rng.gauss(0, 1) + 0.5) * 0.1);
  return c;
}

TEST(EquationOracle, check4_gated_delta_recurrent_equals_chunkwise) {
  GdnCase c = check4_inputs();
  auto [Or, Sr] = gdn_recurrent(c.Q, c.K, c.V, c.beta, c.g);
  auto [Oc, Sc] = gdn_chunkwise(c.Q, c.K, c.V, c.beta, c.g, 4);
  EXPECT_LT(maxabsdiff(Or, Oc), 1e-12);
  EXPECT_LT(maxabsdiff(Sr, Sc), 1e-12);
  at::Tensor q = to_tensor(c.Q), k = to_tensor(c.K), v = to_tensor(c.V), beta = to_tensor(c.beta), g = to_tensor(c.g);
  for (int64_t chunk : {1, 4, 16, 64}) {
    GatedDeltaOptions options;
    options.chunk_size = chunk;
    auto [o, s] = gated_delta_chunkwise(q, k, v, beta, g, std::nullopt, options);
    EXPECT_LT(maxabsdiff(Or, to_mat(o)), 1e-12);
    EXPECT_LT(maxabsdiff(Sr, to_mat(s.S)), 1e-12);
  }
}

TEST(EquationOracle, check5_gated_delta_backward_matches_finite_differences_and_the_kernel) {
  GdnCase c = check4_inputs();
  Rng rng(6);
  Mat R = rng.randn(16, 3);
  GdnGrads gr = gdn_recurrent_bw(c.Q, c.K, c.V, c.beta, c.g, R);
  auto loss = [&]() { return loss_of(gdn_recurrent(c.Q, c.K, c.V, c.beta, c.g).first, R); };
  EXPECT_LT(maxabsdiff(gr.dQ, fd_mat(c.Q, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dK, fd_mat(c.K, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dV, fd_mat(c.V, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dB, fd_vec(c.beta, loss)), 1e-7);
  EXPECT_LT(maxabsdiff(gr.dG, fd_vec(c.g, loss)), 1e-7);

  at::Tensor q = to_tensor(c.Q).requires_grad_(), k = to_tensor(c.K).requires_grad_();
  at::Tensor v = to_tensor(c.V).requires_grad_(), beta = to_tensor(c.beta).requires_grad_();
  at::Tensor g = to_tensor(c.g).requires_grad_();
  GatedDeltaOptions options;
  options.chunk_size = 4;
  (gated_delta_chunkwise(q, k, v, beta, g, std::nullopt, options).first * to_tensor(R)).sum().backward();
  EXPECT_LT(maxabsdiff(gr.dQ, to_mat(q.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dK, to_mat(k.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dV, to_mat(v.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dB, to_vec(beta.grad())), 1e-10);
  EXPECT_LT(maxabsdiff(gr.dG, to_vec(g.grad())), 1e-10);
}

}  // namespace
}  // namespace swarmt::ops
