// Chunkwise gated delta rule (specs/swax.md §3.2, UT/WY transform) with a manual backward; memory O(N·D).
//
// Per chunk (local r, s; ℓ_r = Σ_{u<=r} g_u; γ_r = exp(ℓ_r); Γ_rs = γ_r/γ_s; γ_C = γ_{L-1}):
//   A     = strictlower(β_r (k_r·k_s) Γ_rs),  T = (I + A)^{-1}  (unit-lower triangular solve against I)
//   [U W] = T [diag(β) V, diag(β⊙γ) K]
//   V_new = U - W S_{k-1}
//   O     = (Q̂⊙γ) S_{k-1} + ((Q̂Kᵀ)⊙Γ⊙M_incl) V_new
//   S_k   = γ_C S_{k-1} + (K⊙(γ_C/γ))ᵀ V_new
// Everything except the S recurrence is batched over all chunks (B, H, NC, L, ·); the loop over chunks
// does two small matmuls per chunk. Saved for backward: the inputs and S_{k-1} per chunk.
//
// Backward (reverse loop over chunks with dS_k, the gradient of the state after chunk k):
//   dV_new = Pᵀ dO + Kd dS_k,  dS_{k-1} = Qgᵀ dO + γ_C dS_k - Wᵀ dV_new,  dγ_C = <dS_k, S_{k-1}>
// (P = (Q̂Kᵀ)⊙Γ⊙M, Qg = Q̂⊙γ, Kd = K⊙(γ_C/γ)); then, batched over chunks, through P, Qg, Kd, γ_C, U, W
// and T: d[βV, βγK] = Tᵀ [dU, dW] and dA = -Tᵀ dT Tᵀ = -d[βV, βγK] [U W]ᵀ on the strictly lower part;
// finally dg = within-chunk reverse cumsum of dℓ.
//
// Two executions of these equations: on CPU the chunk loops of gated_delta_cpu.cpp on raw buffers (no
// per-chunk states kept when no backward follows); elsewhere the batched ops below.
#include <torch/csrc/autograd/custom_function.h>

#include <array>
#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/gated_delta_cpu.h"
#include "swarmt/ops/no_autocast.h"
#include "swarmt/ops/parallel.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops {
namespace {

using detail::kMaskedLogWeight;
using detail::ResetMasks;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Decay factors of one padded, chunked sequence (resets: see recurrent_chunking.h).
struct DecayFactors {
  at::Tensor pair;       // Γ_rs ⊙ M_incl, 0 for invalid pairs       (B, H, NC, L, L)
  at::Tensor from_start; // γ_r, 0 unless seg_r == 0                  (B, H, NC, L)
  at::Tensor to_end;     // γ_C/γ_r, 0 unless seg_r == seg_last       (B, H, NC, L)
  at::Tensor chunk;      // γ_C, 0 if the chunk contains a reset      (B, H, NC)
};

// g: (B, H, NC, L) log decays.
DecayFactors decay_factors(const at::Tensor& g, const ResetMasks& masks, int64_t chunk) {
  at::Tensor log_decay = masks.defined() ? g.masked_fill(masks.reset, 0.0) : g;
  at::Tensor cum = at::cumsum(log_decay, -1);                     // ℓ
  at::Tensor last = cum.narrow(-1, chunk - 1, 1);                 // ℓ_{L-1} (B, H, NC, 1)
  DecayFactors f;
  at::Tensor pair_log = cum.unsqueeze(-1) - cum.unsqueeze(-2);
  f.pair = pair_log.masked_fill_(detail::intra_chunk_mask(chunk, true, masks, g.device()).logical_not(), kMaskedLogWeight)
               .exp_();
  f.from_start = at::exp(cum);
  f.to_end = at::exp(last - cum);
  f.chunk = at::exp(last.squeeze(-1));
  if (masks.defined()) {
    f.from_start.masked_fill_(masks.from_start.logical_not(), 0.0);
    f.to_end.masked_fill_(masks.to_end.logical_not(), 0.0);
    f.chunk.masked_fill_(masks.carried.logical_not(), 0.0);
  }
  return f;
}

// Quantities of the UT transform, recomputed identically in forward and backward.
struct UTTransform {
  at::Tensor strict_lower;  // A (B, H, NC, L, L)
  at::Tensor inverse;       // T = (I + A)^{-1} (B, H, NC, L, L), unit lower triangular
  at::Tensor rhs;           // [β⊙V, β⊙γ⊙K] (B, H, NC, L, Dv+Dk)
  at::Tensor uw;            // [U W] = T rhs (B, H, NC, L, Dv+Dk)
  at::Tensor key_gram;      // K Kᵀ (B, H, NC, L, L)
};

// kc, vc: (B, H, NC, L, D); beta_c: (B, H, NC, L).
UTTransform ut_transform(const at::Tensor& kc, const at::Tensor& vc, const at::Tensor& beta_c,
                         const DecayFactors& f) {
  UTTransform ut;
  ut.key_gram = at::matmul(kc, kc.transpose(-2, -1));
  ut.strict_lower = (ut.key_gram * f.pair).tril_(-1).mul_(beta_c.unsqueeze(-1));
  ut.rhs = at::cat({vc * beta_c.unsqueeze(-1), kc * (beta_c * f.from_start).unsqueeze(-1)}, -1);
  // T explicitly (a triangular solve against I; unitriangular: the solver reads only the strictly lower
  // part of A and takes the diagonal as 1), then plain GEMMs: T is reused by the backward (Tᵀ d[U W]), and
  // batched GEMMs run faster here than triangular solves with many right-hand sides.
  const int64_t chunk = kc.size(-2);
  at::Tensor identity = at::eye(chunk, kc.options()).expand_as(ut.strict_lower);
  ut.inverse = at::linalg_solve_triangular(ut.strict_lower, identity, /*upper=*/false, /*left=*/true,
                                           /*unitriangular=*/true);
  ut.uw = at::matmul(ut.inverse, ut.rhs);
  return ut;
}

// The raw-buffer view of one padded problem for the CPU kernels; every tensor contiguous, resets
// undefined or bool (B, N).
template <typename T>
detail::GatedDeltaProblem<T> cpu_problem(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                         const at::Tensor& beta, const at::Tensor& g, const at::Tensor& resets,
                                         int64_t chunk, double scale) {
  detail::GatedDeltaProblem<T> p;
  p.heads = q.size(0) * q.size(1);
  p.heads_per_batch = q.size(1);
  p.length = q.size(2);
  p.chunk = chunk;
  p.k_dim = q.size(3);
  p.v_dim = v.size(3);
  p.scale = static_cast<T>(scale);
  p.q = q.data_ptr<T>();
  p.k = k.data_ptr<T>();
  p.v = v.data_ptr<T>();
  p.beta = beta.data_ptr<T>();
  p.g = g.data_ptr<T>();
  p.resets = resets.defined() ? resets.data_ptr<bool>() : nullptr;
  return p;
}

at::Tensor contiguous_resets(const at::Tensor& resets) {
  const at::Tensor r = detail::resets_or_none(resets);
  return r.defined() ? r.contiguous() : r;
}

// Forward on the CPU kernels: {o, final state, S_{k-1} per chunk}, shaped as the batched-op path's; the
// last is left undefined without `keep_states` (no backward follows: prefill, evaluation).
std::array<at::Tensor, 3> forward_cpu(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                                      const at::Tensor& beta_in, const at::Tensor& g_in, const at::Tensor& initial,
                                      const at::Tensor& resets_in, int64_t chunk, double scale, bool keep_states) {
  const at::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  const at::Tensor beta = beta_in.contiguous(), g = g_in.contiguous(), start = initial.contiguous();
  const at::Tensor resets = contiguous_resets(resets_in);
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2), k_dim = q.size(3), v_dim = v.size(3);
  at::Tensor out = at::empty({batch, heads, length, v_dim}, q.options());
  at::Tensor final_state = at::empty({batch, heads, k_dim, v_dim}, q.options());
  at::Tensor prev_states;
  if (keep_states) prev_states = at::empty({batch, heads, length / chunk, k_dim, v_dim}, q.options());
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "gated_delta_forward_cpu", [&] {
    const auto p = cpu_problem<scalar_t>(q, k, v, beta, g, resets, chunk, scale);
    scalar_t* states = keep_states ? prev_states.data_ptr<scalar_t>() : nullptr;
    parallel_for(0, p.heads, 1, [&](int64_t begin, int64_t end) {
      detail::gated_delta_forward_cpu(p, start.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
                                      final_state.data_ptr<scalar_t>(), states, begin, end);
    });
  });
  return {out, final_state, prev_states};
}

// Backward on the CPU kernels: {dq, dk, dv, dbeta, dg, d_initial}.
std::array<at::Tensor, 6> backward_cpu(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                                       const at::Tensor& beta_in, const at::Tensor& g_in, const at::Tensor& resets_in,
                                       const at::Tensor& prev_states, const at::Tensor& d_out_in,
                                       const at::Tensor& d_final_in, int64_t chunk, double scale) {
  const at::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  const at::Tensor beta = beta_in.contiguous(), g = g_in.contiguous(), states = prev_states.contiguous();
  const at::Tensor resets = contiguous_resets(resets_in);
  const int64_t batch = q.size(0), heads = q.size(1), k_dim = q.size(3), v_dim = v.size(3);
  const at::Tensor d_out = d_out_in.defined() ? d_out_in.contiguous() : at::zeros_like(v);
  const at::Tensor d_final =
      d_final_in.defined() ? d_final_in.contiguous() : at::zeros({batch, heads, k_dim, v_dim}, q.options());
  at::Tensor dq = at::empty_like(q), dk = at::empty_like(k), dv = at::empty_like(v);
  at::Tensor dbeta = at::empty_like(beta), dg = at::empty_like(g), d_initial = at::empty_like(d_final);
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "gated_delta_backward_cpu", [&] {
    const auto p = cpu_problem<scalar_t>(q, k, v, beta, g, resets, chunk, scale);
    parallel_for(0, p.heads, 1, [&](int64_t begin, int64_t end) {
      detail::gated_delta_backward_cpu(p, states.data_ptr<scalar_t>(), d_out.data_ptr<scalar_t>(),
                                       d_final.data_ptr<scalar_t>(), dq.data_ptr<scalar_t>(), dk.data_ptr<scalar_t>(),
                                       dv.data_ptr<scalar_t>(), dbeta.data_ptr<scalar_t>(), dg.data_ptr<scalar_t>(),
                                       d_initial.data_ptr<scalar_t>(), begin, end);
    });
  });
  return {dq, dk, dv, dbeta, dg, d_initial};
}

// The custom autograd Function. All sequence inputs padded to NC·L, in the compute dtype.
//   q, k: (B, H, N, Dk); v: (B, H, N, Dv); beta, g: (B, H, N); initial: (B, H, Dk, Dv);
//   resets: empty (no resets) or bool (B, N).  Outputs: o (B, H, N, Dv), final state (B, H, Dk, Dv).
struct GatedDeltaFunction : public torch::autograd::Function<GatedDeltaFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& beta, const at::Tensor& g, const at::Tensor& initial,
                               const at::Tensor& resets, int64_t chunk, double scale) {
    NoAutocast no_autocast;
    ctx->saved_data["chunk"] = chunk;
    ctx->saved_data["scale"] = scale;
    if (q.device().is_cpu() && detail::gated_delta_cpu_kernels()) {
      auto [out, final_state, prev_states] = forward_cpu(q, k, v, beta, g, initial, resets, chunk, scale, true);
      ctx->save_for_backward({q, k, v, beta, g, resets, prev_states});
      return {out, final_state};
    }
    const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
    const int64_t k_dim = q.size(3), v_dim = v.size(3), chunks = length / chunk, bh = batch * heads;
    ResetMasks masks = detail::make_reset_masks(detail::resets_or_none(resets), chunk);
    at::Tensor qc = detail::split_chunks(q, chunk) * scale;  // Q̂ (B, H, NC, L, Dk)
    at::Tensor kc = detail::split_chunks(k, chunk);
    at::Tensor vc = detail::split_chunks(v, chunk);
    at::Tensor beta_c = beta.view({batch, heads, chunks, chunk});
    DecayFactors f = decay_factors(g.view({batch, heads, chunks, chunk}), masks, chunk);
    UTTransform ut = ut_transform(kc, vc, beta_c, f);
    at::Tensor kd = kc * f.to_end.unsqueeze(-1);  // K ⊙ (γ_C/γ)

    // ---- sequential over chunks: V_new = U - W S;  S <- γ_C S + Kdᵀ V_new   (B·H merged)
    at::Tensor uw3 = ut.uw.view({bh, chunks, chunk, v_dim + k_dim});
    at::Tensor kd3 = kd.view({bh, chunks, chunk, k_dim});
    at::Tensor chunk_decay = f.chunk.reshape({bh, chunks, 1, 1});
    at::Tensor prev_states = at::empty({batch, heads, chunks, k_dim, v_dim}, q.options());
    at::Tensor v_new = at::empty({batch, heads, chunks, chunk, v_dim}, q.options());
    at::Tensor prev3 = prev_states.view({bh, chunks, k_dim, v_dim});
    at::Tensor v_new3 = v_new.view({bh, chunks, chunk, v_dim});
    at::Tensor state = initial.reshape({bh, k_dim, v_dim});
    for (int64_t c = 0; c < chunks; ++c) {
      at::Tensor uw_c = uw3.select(1, c);
      prev3.select(1, c).copy_(state);
      at::Tensor vn = at::baddbmm(uw_c.narrow(-1, 0, v_dim), uw_c.narrow(-1, v_dim, k_dim), state, 1, -1);
      v_new3.select(1, c).copy_(vn);
      state = at::baddbmm(state * chunk_decay.select(1, c), kd3.select(1, c).transpose(1, 2), vn);
    }
    at::Tensor final_state = state.view({batch, heads, k_dim, v_dim});

    // ---- outputs of all chunks: O = (Q̂⊙γ) S_{k-1} + ((Q̂Kᵀ)⊙Γ⊙M) V_new
    at::Tensor o = at::matmul(qc * f.from_start.unsqueeze(-1), prev_states);
    o.add_(at::matmul(at::matmul(qc, kc.transpose(-2, -1)).mul_(f.pair), v_new));

    ctx->save_for_backward({q, k, v, beta, g, resets, prev_states});
    return {o.view({batch, heads, length, v_dim}), final_state};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    NoAutocast no_autocast;
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &beta = saved[3], &g = saved[4];
    const at::Tensor &resets = saved[5], &prev_states = saved[6];
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const double scale = ctx->saved_data["scale"].toDouble();
    const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
    const int64_t k_dim = q.size(3), v_dim = v.size(3), chunks = length / chunk, bh = batch * heads;
    if (q.device().is_cpu() && detail::gated_delta_cpu_kernels()) {
      auto [dq, dk, dv, dbeta, dg, d_initial] =
          backward_cpu(q, k, v, beta, g, resets, prev_states, grads[0], grads[1], chunk, scale);
      return {dq, dk, dv, dbeta, dg, d_initial, at::Tensor(), at::Tensor(), at::Tensor()};
    }

    at::Tensor d_out = grads[0].defined() ? grads[0].contiguous() : at::zeros_like(v);
    at::Tensor d_final = grads[1].defined() ? grads[1] : at::zeros({batch, heads, k_dim, v_dim}, q.options());
    at::Tensor d_out_c = detail::split_chunks(d_out, chunk);  // (B, H, NC, L, Dv)

    // ---- recompute the forward's chunk quantities (V_new batched from the saved S_{k-1})
    ResetMasks masks = detail::make_reset_masks(detail::resets_or_none(resets), chunk);
    at::Tensor qc = detail::split_chunks(q, chunk) * scale;
    at::Tensor kc = detail::split_chunks(k, chunk);
    at::Tensor vc = detail::split_chunks(v, chunk);
    at::Tensor beta_c = beta.view({batch, heads, chunks, chunk});
    DecayFactors f = decay_factors(g.view({batch, heads, chunks, chunk}), masks, chunk);
    UTTransform ut = ut_transform(kc, vc, beta_c, f);
    at::Tensor u = ut.uw.narrow(-1, 0, v_dim), w = ut.uw.narrow(-1, v_dim, k_dim);
    at::Tensor kd = kc * f.to_end.unsqueeze(-1);
    at::Tensor qg = qc * f.from_start.unsqueeze(-1);
    at::Tensor v_new = u - at::matmul(w, prev_states);                      // (B, H, NC, L, Dv)
    at::Tensor qk = at::matmul(qc, kc.transpose(-2, -1));                   // Q̂Kᵀ (B, H, NC, L, L)
    at::Tensor p = qk * f.pair;                                             // P

    // ---- the parts of dV_new and dS_{k-1} that do not depend on dS_k, batched
    at::Tensor d_v_new = at::matmul(p.transpose(-2, -1), d_out_c);          // Pᵀ dO
    at::Tensor x = at::matmul(qg.transpose(-2, -1), d_out_c);               // Qgᵀ dO
    x.sub_(at::matmul(w.transpose(-2, -1), d_v_new));                       //   - Wᵀ Pᵀ dO

    // ---- reverse loop: dV_new += Kd dS_k;  dS_{k-1} = x_k + γ_C dS_k - Wᵀ (Kd dS_k)
    at::Tensor d_end = at::empty({batch, heads, chunks, k_dim, v_dim}, q.options());  // dS_k per chunk
    at::Tensor d_v_new_state = at::empty({batch, heads, chunks, chunk, v_dim}, q.options());
    at::Tensor d_end3 = d_end.view({bh, chunks, k_dim, v_dim});
    at::Tensor d_vns3 = d_v_new_state.view({bh, chunks, chunk, v_dim});
    at::Tensor x3 = x.view({bh, chunks, k_dim, v_dim});
    at::Tensor kd3 = kd.view({bh, chunks, chunk, k_dim});
    at::Tensor w3 = w.reshape({bh, chunks, chunk, k_dim});
    at::Tensor chunk_decay = f.chunk.reshape({bh, chunks, 1, 1});
    at::Tensor d_state = d_final.reshape({bh, k_dim, v_dim});
    for (int64_t c = chunks - 1; c >= 0; --c) {
      d_end3.select(1, c).copy_(d_state);
      at::Tensor through_state = at::bmm(kd3.select(1, c), d_state);          // Kd dS_k (B·H, L, Dv)
      d_vns3.select(1, c).copy_(through_state);
      at::Tensor carried = at::addcmul(x3.select(1, c), d_state, chunk_decay.select(1, c));
      d_state = at::baddbmm(carried, w3.select(1, c).transpose(1, 2), through_state, 1, -1);
    }
    at::Tensor d_initial = d_state.view({batch, heads, k_dim, v_dim});
    d_v_new.add_(d_v_new_state);
    d_v_new_state.reset();
    x.reset();

    // ---- batched gradients of the chunk-level quantities
    at::Tensor d_chunk_decay = (d_end * prev_states).sum({-2, -1});                 // dγ_C (B, H, NC)
    at::Tensor d_qg = at::matmul(d_out_c, prev_states.transpose(-2, -1));           // (B, H, NC, L, Dk)
    at::Tensor d_p = at::matmul(d_out_c, v_new.transpose(-2, -1));                  // (B, H, NC, L, L)
    at::Tensor d_kd = at::matmul(v_new, d_end.transpose(-2, -1));                   // (B, H, NC, L, Dk)
    d_end.reset();
    // d[U W] = [dV_new, -dV_new S_{k-1}ᵀ];  d rhs = Tᵀ d[U W];  dA = -d rhs [U W]ᵀ (strictly lower)
    at::Tensor d_uw = at::cat({d_v_new, -at::matmul(d_v_new, prev_states.transpose(-2, -1))}, -1);
    at::Tensor d_rhs = at::matmul(ut.inverse.transpose(-2, -1), d_uw);
    at::Tensor d_a = at::matmul(d_rhs, ut.uw.transpose(-2, -1)).neg_().tril_(-1);
    at::Tensor d_rhs_v = d_rhs.narrow(-1, 0, v_dim), d_rhs_k = d_rhs.narrow(-1, v_dim, k_dim);

    // A_rs = β_r (k_r·k_s) Γ_rs:  G = dA ⊙ Γ (then ⊙ β_r for k and ℓ)
    at::Tensor d_a_decay = d_a.mul_(f.pair);                                        // dA ⊙ Γ
    at::Tensor d_beta = (d_a_decay * ut.key_gram).sum(-1);                          // Σ_s dA Γ (k·k)
    at::Tensor grad_gram = d_a_decay.mul_(beta_c.unsqueeze(-1));                    // G = dA ⊙ Γ ⊙ β_r
    at::Tensor a_balance = grad_gram * ut.key_gram;                                 // dA ⊙ A
    at::Tensor d_p_masked = d_p * f.pair;                                           // through Q̂Kᵀ
    at::Tensor p_balance = d_p.mul_(p);                                             // dP ⊙ P

    at::Tensor dq = at::matmul(d_p_masked, kc).add_(d_qg * f.from_start.unsqueeze(-1));
    at::Tensor gate_k = beta_c * f.from_start;                                      // β γ
    at::Tensor dk = at::matmul(d_p_masked.transpose(-2, -1), qc);
    dk.add_(d_kd * f.to_end.unsqueeze(-1));
    dk.add_(d_rhs_k * gate_k.unsqueeze(-1));
    dk.add_(at::matmul(grad_gram + grad_gram.transpose(-2, -1), kc));
    at::Tensor dv = d_rhs_v * beta_c.unsqueeze(-1);
    at::Tensor k_rhs = (d_rhs_k * kc).sum(-1);                                      // Σ_d d(βγK) k
    d_beta.add_((d_rhs_v * vc).sum(-1)).add_(k_rhs * f.from_start);

    // dℓ_r, then dg = within-chunk reverse cumsum (ℓ_r = Σ_{u<=r} g_u)
    at::Tensor kd_balance = (d_kd * kd).sum(-1);                                    // (B, H, NC, L)
    at::Tensor d_cum = p_balance.sum(-1) - p_balance.sum(-2);
    d_cum.add_(a_balance.sum(-1)).sub_(a_balance.sum(-2));
    d_cum.add_((d_qg * qg).sum(-1)).add_(k_rhs * gate_k).sub_(kd_balance);
    d_cum.select(-1, chunk - 1).add_(kd_balance.sum(-1)).add_(d_chunk_decay * f.chunk);
    at::Tensor d_g = detail::reverse_cumsum(d_cum, -1).reshape({batch, heads, length});
    if (masks.defined()) d_g.masked_fill_(resets.unsqueeze(1), 0.0);

    return {dq.mul_(scale).view({batch, heads, length, k_dim}),
            dk.view({batch, heads, length, k_dim}),
            dv.reshape({batch, heads, length, v_dim}),
            d_beta.reshape({batch, heads, length}),
            d_g,
            d_initial,
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

void check_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                  const at::Tensor& g, const std::optional<GatedDeltaState>& initial,
                  const GatedDeltaOptions& options, const at::Tensor& resets) {
  const std::string what = "gated_delta_chunkwise";
  detail::check_rank(q, 4, what, "q");
  detail::check_same_size(k, q.sizes(), what, "k");
  detail::check_rank(v, 4, what, "v");
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  detail::check_same_size(v, {batch, heads, length, v.size(3)}, what, "v");
  detail::check_same_size(beta, {batch, heads, length}, what, "beta");
  detail::check_same_size(g, {batch, heads, length}, what, "g");
  detail::check_resets(resets, batch, length, what);
  SWARMT_CHECK_INPUT(options.chunk_size >= 1, what, ": chunk_size must be >= 1, got ", options.chunk_size);
  SWARMT_CHECK_INPUT(options.scale >= 0.0, what, ": scale must be >= 0 (0 = 1/sqrt(Dk)), got ", options.scale);
  if (initial) detail::check_same_size(initial->S, {batch, heads, q.size(3), v.size(3)}, what, "initial S");
}

}  // namespace

std::pair<at::Tensor, GatedDeltaState> gated_delta_chunkwise(const at::Tensor& q, const at::Tensor& k,
                                                             const at::Tensor& v, const at::Tensor& beta,
                                                             const at::Tensor& g,
                                                             const std::optional<GatedDeltaState>& initial,
                                                             const GatedDeltaOptions& options,
                                                             const at::Tensor& resets) {
  check_inputs(q, k, v, beta, g, initial, options, resets);
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  const int64_t k_dim = q.size(3), v_dim = v.size(3);
  const at::ScalarType ct = detail::recurrent_compute_dtype(q);
  at::Tensor start = initial ? initial->S.to(ct) : gated_delta_zero_state(batch, heads, k_dim, v_dim, ct, q.device()).S;
  if (length == 0) return {at::zeros({batch, heads, 0, v_dim}, v.options()), GatedDeltaState{start}};

  const int64_t chunk = std::min(options.chunk_size, length);
  const int64_t padded = detail::num_chunks(length, chunk) * chunk;
  const double scale = options.scale > 0.0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(k_dim));
  // Padding tokens: k = 0, β = 0 (no write), g = 0 (no decay): the final state is untouched by them.
  at::Tensor padded_resets = detail::no_resets(q.device());
  if (resets.defined()) {
    padded_resets = padded == length ? resets
                                     : at::cat({resets, at::zeros({batch, padded - length}, resets.options())}, 1);
  }
  const at::Tensor q_p = detail::pad_time(q.to(ct), 2, padded, 0.0), k_p = detail::pad_time(k.to(ct), 2, padded, 0.0);
  const at::Tensor v_p = detail::pad_time(v.to(ct), 2, padded, 0.0);
  const at::Tensor beta_p = detail::pad_time(beta.to(ct), 2, padded, 0.0);
  const at::Tensor g_p = detail::pad_time(g.to(ct), 2, padded, 0.0);
  if (q.device().is_cpu() && detail::gated_delta_cpu_kernels() && !detail::needs_grad({q, k, v, beta, g, start})) {
    // No backward follows: the CPU kernels alone, without the per-chunk states a backward would read.
    auto [o, final_state, unused] = forward_cpu(q_p, k_p, v_p, beta_p, g_p, start, padded_resets, chunk, scale, false);
    return {o.narrow(2, 0, length).to(q.scalar_type()), GatedDeltaState{final_state}};
  }
  variable_list out = GatedDeltaFunction::apply(q_p, k_p, v_p, beta_p, g_p, start, padded_resets, chunk, scale);
  return {out[0].narrow(2, 0, length).to(q.scalar_type()), GatedDeltaState{out[1]}};
}

}  // namespace swarmt::ops
