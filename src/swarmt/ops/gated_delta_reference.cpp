// Gated delta rule decode step and the token-by-token reference (specs/swax.md §3.1, fla orientation
// S ∈ R^{Dk×Dv}). Plain ATen ops, differentiable by autograd.
#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops {
namespace {

using detail::check_rank;
using detail::check_same_size;

// One step with the state decay factor given directly (0 at a document start).
// q, k: (B, H, Dk); v: (B, H, Dv); beta, decay: (B, H); S: (B, H, Dk, Dv).
std::pair<at::Tensor, at::Tensor> step_with_decay(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                  const at::Tensor& beta, const at::Tensor& decay,
                                                  const at::Tensor& S, double scale) {
  at::Tensor decayed = decay.unsqueeze(-1).unsqueeze(-1) * S;                       // exp(g) S
  at::Tensor prediction = (decayed * k.unsqueeze(-1)).sum(-2);                      // Sᵀ k   (B, H, Dv)
  at::Tensor update = beta.unsqueeze(-1) * (v - prediction);                        // u      (B, H, Dv)
  at::Tensor next = decayed + k.unsqueeze(-1) * update.unsqueeze(-2);               // S + k uᵀ
  at::Tensor out = (next * (q * scale).unsqueeze(-1)).sum(-2);                      // Sᵀ q̂   (B, H, Dv)
  return {out, next};
}

double resolve_scale(double scale, int64_t k_dim) {
  return scale > 0.0 ? scale : 1.0 / std::sqrt(static_cast<double>(k_dim));
}

}  // namespace

int64_t GatedDeltaState::bytes() const {
  return S.defined() ? S.numel() * static_cast<int64_t>(S.element_size()) : 0;
}

GatedDeltaState gated_delta_zero_state(int64_t batch, int64_t heads, int64_t k_dim, int64_t v_dim,
                                       at::ScalarType dtype, at::Device device) {
  return {at::zeros({batch, heads, k_dim, v_dim}, at::TensorOptions().dtype(dtype).device(device))};
}

std::pair<at::Tensor, GatedDeltaState> gated_delta_step(const at::Tensor& q, const at::Tensor& k,
                                                        const at::Tensor& v, const at::Tensor& beta,
                                                        const at::Tensor& g, const GatedDeltaState& state,
                                                        double scale) {
  const std::string what = "gated_delta_step";
  check_rank(q, 3, what, "q");
  check_same_size(k, q.sizes(), what, "k");
  check_rank(v, 3, what, "v");
  const int64_t batch = q.size(0), heads = q.size(1);
  check_same_size(v, {batch, heads, v.size(2)}, what, "v");
  check_same_size(beta, {batch, heads}, what, "beta");
  check_same_size(g, {batch, heads}, what, "g");
  check_same_size(state.S, {batch, heads, q.size(2), v.size(2)}, what, "state S");
  const at::ScalarType ct = detail::recurrent_compute_dtype(q);
  auto [out, next] = step_with_decay(q.to(ct), k.to(ct), v.to(ct), beta.to(ct), at::exp(g.to(ct)), state.S.to(ct),
                                     resolve_scale(scale, q.size(2)));
  return {out.to(q.scalar_type()), GatedDeltaState{next}};
}

std::pair<at::Tensor, GatedDeltaState> gated_delta_recurrent_reference(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta, const at::Tensor& g,
    const std::optional<GatedDeltaState>& initial, double scale, const at::Tensor& resets) {
  const std::string what = "gated_delta_recurrent_reference";
  check_rank(q, 4, what, "q");
  check_same_size(k, q.sizes(), what, "k");
  check_rank(v, 4, what, "v");
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  check_same_size(beta, {batch, heads, length}, what, "beta");
  check_same_size(g, {batch, heads, length}, what, "g");
  detail::check_resets(resets, batch, length, what);
  const at::ScalarType ct = detail::recurrent_compute_dtype(q);
  at::Tensor S = initial ? initial->S.to(ct) : gated_delta_zero_state(batch, heads, q.size(3), v.size(3), ct, q.device()).S;
  check_same_size(S, {batch, heads, q.size(3), v.size(3)}, what, "initial S");
  at::Tensor decay = at::exp(g.to(ct));  // (B, H, N)
  if (resets.defined()) decay = decay.masked_fill(resets.unsqueeze(1), 0.0);  // α_t = 0: the state is zeroed
  const double s = resolve_scale(scale, q.size(3));
  std::vector<at::Tensor> outputs;
  outputs.reserve(length);
  for (int64_t t = 0; t < length; ++t) {
    auto [out, next] = step_with_decay(q.select(2, t).to(ct), k.select(2, t).to(ct), v.select(2, t).to(ct),
                                       beta.select(2, t).to(ct), decay.select(2, t), S, s);
    outputs.push_back(out);
    S = next;
  }
  at::Tensor o = length > 0 ? at::stack(outputs, 2) : at::zeros({batch, heads, 0, v.size(3)}, v.options().dtype(ct));
  return {o.to(q.scalar_type()), GatedDeltaState{S}};
}

}  // namespace swarmt::ops
