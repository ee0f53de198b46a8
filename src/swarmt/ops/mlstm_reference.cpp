// mLSTM decode step and the two test references: the token-by-token recurrence (a loop of steps) and the
// quadratic parallel form (xLSTM App. A.3). All plain ATen ops, differentiable by autograd.
#include <cmath>
#include <limits>

#include "swarmt/core/error.h"
#include "swarmt/ops/mlstm.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops {
namespace {

using detail::check_rank;
using detail::check_same_size;

void check_state(const MLSTMState& s, int64_t batch, int64_t heads, int64_t qk_dim, int64_t v_dim,
                 const std::string& what) {
  check_same_size(s.C, {batch, heads, qk_dim, v_dim}, what, "state C");
  check_same_size(s.n, {batch, heads, qk_dim}, what, "state n");
  check_same_size(s.m, {batch, heads}, what, "state m");
}

// One step of §2.1 with the log forget gate given directly (lf = -inf resets the state).
// q, k: (B, H, Dqk); v: (B, H, Dv); igate, log_f: (B, H). State in the compute dtype.
std::pair<at::Tensor, MLSTMState> step_with_log_forget(const at::Tensor& q, const at::Tensor& k,
                                                       const at::Tensor& v, const at::Tensor& igate,
                                                       const at::Tensor& log_f, const MLSTMState& state,
                                                       double eps) {
  at::Tensor m_new = at::maximum(log_f + state.m, igate);                      // (B, H)
  at::Tensor f_act = at::exp(log_f + state.m - m_new);                         // (B, H)
  at::Tensor i_act = at::exp(igate - m_new);                                   // (B, H)
  MLSTMState next;
  next.C = f_act.unsqueeze(-1).unsqueeze(-1) * state.C +
           (i_act.unsqueeze(-1) * k).unsqueeze(-1) * v.unsqueeze(-2);          // (B, H, Dqk, Dv)
  next.n = f_act.unsqueeze(-1) * state.n + i_act.unsqueeze(-1) * k;            // (B, H, Dqk)
  next.m = m_new;
  at::Tensor q_scaled = q / std::sqrt(static_cast<double>(q.size(-1)));        // (B, H, Dqk)
  at::Tensor numerator = (q_scaled.unsqueeze(-1) * next.C).sum(-2);            // (B, H, Dv)
  at::Tensor denominator = at::maximum(at::abs((q_scaled * next.n).sum(-1)), at::exp(-m_new)) + eps;
  return {numerator / denominator.unsqueeze(-1), next};
}

}  // namespace

int64_t MLSTMState::bytes() const {
  int64_t total = 0;
  for (const at::Tensor* t : {&C, &n, &m})
    if (t->defined()) total += t->numel() * static_cast<int64_t>(t->element_size());
  return total;
}

MLSTMState mlstm_zero_state(int64_t batch, int64_t heads, int64_t qk_dim, int64_t v_dim, at::ScalarType dtype,
                            at::Device device) {
  auto options = at::TensorOptions().dtype(dtype).device(device);
  return {at::zeros({batch, heads, qk_dim, v_dim}, options), at::zeros({batch, heads, qk_dim}, options),
          at::zeros({batch, heads}, options)};
}

std::pair<at::Tensor, MLSTMState> mlstm_step(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                             const at::Tensor& igate, const at::Tensor& fgate,
                                             const MLSTMState& state, double eps) {
  const std::string what = "mlstm_step";
  check_rank(q, 3, what, "q");
  check_same_size(k, q.sizes(), what, "k");
  check_rank(v, 3, what, "v");
  int64_t batch = q.size(0), heads = q.size(1);
  check_same_size(v, {batch, heads, v.size(2)}, what, "v");
  check_same_size(igate, {batch, heads}, what, "igate");
  check_same_size(fgate, {batch, heads}, what, "fgate");
  check_state(state, batch, heads, q.size(2), v.size(2), what);
  at::ScalarType ct = detail::recurrent_compute_dtype(q);
  MLSTMState s{state.C.to(ct), state.n.to(ct), state.m.to(ct)};
  auto [h, next] = step_with_log_forget(q.to(ct), k.to(ct), v.to(ct), igate.to(ct),
                                        at::log_sigmoid(fgate.to(ct)), s, eps);
  return {h.to(q.scalar_type()), next};
}

std::pair<at::Tensor, MLSTMState> mlstm_recurrent_reference(const at::Tensor& q, const at::Tensor& k,
                                                            const at::Tensor& v, const at::Tensor& igate,
                                                            const at::Tensor& fgate,
                                                            const std::optional<MLSTMState>& initial, double eps,
                                                            const at::Tensor& resets) {
  const std::string what = "mlstm_recurrent_reference";
  check_rank(q, 4, what, "q");
  int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  check_same_size(k, q.sizes(), what, "k");
  check_rank(v, 4, what, "v");
  check_same_size(igate, {batch, heads, length}, what, "igate");
  check_same_size(fgate, {batch, heads, length}, what, "fgate");
  detail::check_resets(resets, batch, length, what);
  at::ScalarType ct = detail::recurrent_compute_dtype(q);
  MLSTMState state = initial ? MLSTMState{initial->C.to(ct), initial->n.to(ct), initial->m.to(ct)}
                             : mlstm_zero_state(batch, heads, q.size(3), v.size(3), ct, q.device());
  check_state(state, batch, heads, q.size(3), v.size(3), what);
  at::Tensor log_f = at::log_sigmoid(fgate.to(ct));  // (B, H, N)
  if (resets.defined()) {
    // xLSTM-7B App. B: the forget gate is zero at a document start, lf = -inf.
    log_f = at::where(resets.unsqueeze(1), at::full({}, -std::numeric_limits<double>::infinity(), log_f.options()),
                      log_f);
  }
  std::vector<at::Tensor> outputs;
  outputs.reserve(length);
  for (int64_t t = 0; t < length; ++t) {
    auto [h, next] = step_with_log_forget(q.select(2, t).to(ct), k.select(2, t).to(ct), v.select(2, t).to(ct),
                                          igate.select(2, t).to(ct), log_f.select(2, t), state, eps);
    outputs.push_back(h);
    state = next;
  }
  at::Tensor h = length > 0 ? at::stack(outputs, 2) : at::zeros({batch, heads, 0, v.size(3)}, v.options().dtype(ct));
  return {h.to(q.scalar_type()), state};
}

at::Tensor mlstm_parallel_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& igate, const at::Tensor& fgate, double eps,
                                    const at::Tensor& resets) {
  const std::string what = "mlstm_parallel_reference";
  check_rank(q, 4, what, "q");
  int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  check_same_size(k, q.sizes(), what, "k");
  check_rank(v, 4, what, "v");
  check_same_size(igate, {batch, heads, length}, what, "igate");
  check_same_size(fgate, {batch, heads, length}, what, "fgate");
  detail::check_resets(resets, batch, length, what);
  at::ScalarType ct = detail::recurrent_compute_dtype(q);
  at::Tensor log_f = at::log_sigmoid(fgate.to(ct));  // (B, H, N)
  at::Tensor valid = at::tril(at::ones({length, length}, q.options().dtype(at::kBool)));  // j <= i
  // With resets: pairs only inside one document (document index = number of resets so far), and the
  // reset position's own forget gate never enters a valid pair, so it is zeroed in the cumsum.
  at::Tensor first_document = at::ones({1, 1, length}, q.options().dtype(at::kBool));
  if (resets.defined()) {
    at::Tensor document = at::cumsum(resets.to(at::kLong), 1);                          // (B, N)
    valid = at::logical_and(valid, (document.unsqueeze(2) == document.unsqueeze(1)).unsqueeze(1));
    first_document = (document == 0).unsqueeze(1);                                      // (B, 1, N)
    log_f = log_f.masked_fill(resets.unsqueeze(1), 0.0);
  }
  at::Tensor b = at::cumsum(log_f, -1);                                                  // (B, H, N)
  // D̃_ij = b_i - b_j + ĩ_j (j <= i): (B, H, N, N)
  at::Tensor log_d = b.unsqueeze(-1) - b.unsqueeze(-2) + igate.to(ct).unsqueeze(-2);
  log_d = at::where(valid, log_d, at::full({}, detail::kMaskedLogWeight, log_d.options()));
  // Row max; it also includes the initial-state path b_i + m_0 (m_0 = 0, first document only), which
  // makes m_i equal to the recurrent stabiliser, so the two agree exactly for any eps.
  at::Tensor init_path = at::where(first_document, b, at::full({}, detail::kMaskedLogWeight, b.options()));
  at::Tensor m = at::maximum(std::get<0>(log_d.max(-1)), init_path);                  // (B, H, N)
  at::Tensor decay = at::exp(log_d - m.unsqueeze(-1));                                   // D'
  at::Tensor scores = at::matmul(q.to(ct), k.to(ct).transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  at::Tensor weights = scores * decay;                                                   // C̃'
  at::Tensor normaliser = at::maximum(at::abs(weights.sum(-1)), at::exp(-m)) + eps;      // (B, H, N)
  return at::matmul(weights / normaliser.unsqueeze(-1), v.to(ct)).to(q.scalar_type());
}

}  // namespace swarmt::ops
