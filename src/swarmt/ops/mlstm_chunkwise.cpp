// Chunkwise mLSTM (specs/swax.md §2.3) with a custom backward (§2.8 b), memory O(N·D).
//
// On CPU the chunk loops of mlstm_cpu.cpp run instead, normaliser included (mlstm_cpu_autograd.cpp);
// the batched ops below serve accelerators and are the tests' yardstick for those loops.
//
// Design:
// * Augmented value. v' = [v, 1] (Dv+1 columns) and C' = [C | n]: one "numerator" kernel then yields
//   num' = [num, den] and the state [C_N | n_N] in one pass. The custom Function below only computes
//   num' (linear in v'), so its backward is exact; the normalisation
//     h = num / (max(|den|, exp(-m_comb)) + eps)
//   runs outside it in plain differentiable ATen ops, which gives the exact normaliser gradient.
//   The stabilisers (m_comb per row, m_k per chunk boundary) are non-differentiable outputs: h does not
//   depend on them (up to eps), so they get no gradient (xLSTM App. A.2).
// * Batched. Everything inside a chunk runs for all chunks at once as (B, H, NC, L, ·) matmuls; only
//   the boundary-state recurrence C_k = δ_k C_{k-1} + Y_k is a loop over chunks, and it is elementwise
//   (Y_k, the chunk's own contribution, comes from one batched matmul). The stabilisers m_k come from a
//   closed-form max-plus scan (cummax), so no loop is needed for them.
// * Memory. Saved for backward: the inputs, one buffer of boundary states (B, H, NC+1, Dqk, Dv+1), the
//   boundary stabilisers and m_comb. Temporaries are at most (B, H, N, L) or state-sized; nothing is
//   (N, N). Fresh large buffers are costly on CPU (every page faults in), so the states are written in
//   place and the backward reuses one gradient buffer of the same shape.
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/ops/mlstm.h"
#include "swarmt/ops/mlstm_cpu.h"
#include "swarmt/ops/mlstm_cpu_autograd.h"
#include "swarmt/ops/no_autocast.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops {
namespace {

using detail::kMaskedLogWeight;
using detail::ResetMasks;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Forget-gate pre-activation used for padding positions: logsigmoid(it) == 0, i.e. no decay.
constexpr double kNoDecayForgetGate = 1e4;

// Per-chunk gate quantities in log space, all in the compute dtype.
struct ChunkGates {
  at::Tensor cum_log_f;  // b_r = Σ_{u<=r} lf_u within the chunk, lf = 0 at resets    (B, H, NC, L)
  at::Tensor to_end;     // a_r = Σ_{u>r} lf_u + ĩ_r, masked unless seg_r == seg_last  (B, H, NC, L)
  at::Tensor carried;    // g = b_{L-1}, masked if the chunk contains a reset           (B, H, NC)
  at::Tensor chunk_log_f;  // g unmasked (for the max-plus scan)                       (B, H, NC)
};

// igate, fgate: (B, H, NC, L) chunked pre-activations.
ChunkGates chunk_gates(const at::Tensor& igate, const at::Tensor& fgate, const ResetMasks& masks) {
  ChunkGates gates;
  at::Tensor log_f = at::log_sigmoid(fgate);
  if (masks.defined()) log_f = log_f.masked_fill(masks.reset, 0.0);
  gates.cum_log_f = at::cumsum(log_f, -1);
  gates.chunk_log_f = gates.cum_log_f.select(-1, gates.cum_log_f.size(-1) - 1);
  gates.to_end = gates.chunk_log_f.unsqueeze(-1) - gates.cum_log_f + igate;
  gates.carried = gates.chunk_log_f;
  if (masks.defined()) {
    gates.to_end = gates.to_end.masked_fill(masks.to_end.logical_not(), kMaskedLogWeight);
    gates.carried = gates.carried.masked_fill(masks.carried.logical_not(), kMaskedLogWeight);
  }
  return gates;
}

// Boundary stabilisers m_0..m_NC (B, H, NC+1) of the recurrence m_k = max(g_k + m_{k-1}, max_r a_r)
// (reset chunks: m_k = max_r a_r). In closed form, with G_k = Σ_{i<=k} g_i and x_0 = m_0,
// x_j = max_r a_r - G_j:  m_k = G_k + max_{j in segment(k), j <= k} x_j, where segment(k) starts at the
// last chunk <= k with a reset (index 0 = the initial state if there is none). The segmented running max
// is one cummax after lifting each segment above all earlier ones by a data-derived offset. Computed in
// fp64: m is only a stabiliser, but this keeps it equal to the recurrent one.
at::Tensor boundary_stabilisers(const ChunkGates& gates, const ResetMasks& masks, const at::Tensor& m0) {
  at::Tensor chunk_max = std::get<0>(gates.to_end.max(-1)).to(at::kDouble);  // (B, H, NC)
  at::Tensor decay_sum = at::cumsum(gates.chunk_log_f.to(at::kDouble), -1);  // G_k
  at::Tensor x = at::cat({m0.to(at::kDouble).unsqueeze(-1), chunk_max - decay_sum}, -1);
  at::Tensor decay_sum0 = at::cat({at::zeros_like(m0, decay_sum.options()).unsqueeze(-1), decay_sum}, -1);
  at::Tensor running_max;
  if (masks.defined()) {
    at::Tensor segment = at::cat({at::zeros({masks.chunk_segment.size(0), 1, 1}, masks.chunk_segment.options()),
                                  masks.chunk_segment},
                                 -1)
                             .to(at::kDouble);                               // (B, 1, NC+1)
    at::Tensor offset = (x.max() - x.min() + 1.0) * segment;
    running_max = std::get<0>(at::cummax(x + offset, -1)) - offset;
  } else {
    running_max = std::get<0>(at::cummax(x, -1));
  }
  return (decay_sum0 + running_max).to(gates.cum_log_f.scalar_type());
}

// Intra-chunk log weights logD_rs = b_r - b_s + ĩ_s for valid pairs, kMaskedLogWeight otherwise.
// cum_log_f, igate: (B, H, NC, L); mask: (L, L) or (B, 1, NC, L, L). Returns (B, H, NC, L, L).
at::Tensor intra_log_weights(const at::Tensor& cum_log_f, const at::Tensor& igate, const at::Tensor& mask) {
  at::Tensor log_d = cum_log_f.unsqueeze(-1) + (igate - cum_log_f).unsqueeze(-2);
  return log_d.masked_fill_(mask.logical_not(), kMaskedLogWeight);
}

// Log weight of the carried state C_{k-1} in row r: b_r + m_{k-1}, masked unless seg_r == 0.
at::Tensor inter_log_weights(const at::Tensor& cum_log_f, const at::Tensor& m_prev, const ResetMasks& masks) {
  at::Tensor inter = cum_log_f + m_prev.unsqueeze(-1);
  if (masks.defined()) inter = inter.masked_fill(masks.from_start.logical_not(), kMaskedLogWeight);
  return inter;
}

// v' = [v, 1]: (B, H, N, Dv) -> (B, H, N, Dv+1).
at::Tensor augment_with_ones(const at::Tensor& v) {
  std::vector<int64_t> shape = v.sizes().vec();
  shape.back() = 1;
  return at::cat({v, at::ones(shape, v.options())}, -1);
}

// x[b, h] for a (B, H, ...) tensor.
at::Tensor head(const at::Tensor& x, int64_t b, int64_t h) { return x.select(0, b).select(0, h); }

// The custom autograd Function for the augmented numerator. All sequence inputs are padded to NC·L.
//   q, k: (B, H, N, Dqk); v: (B, H, N, Dv); igate, fgate: (B, H, N); C0: (B, H, Dqk, Dv); n0: (B, H, Dqk);
//   m0: (B, H); resets: empty (no resets, see no_resets) or bool (B, N).
// Outputs, the two halves of num' = [num, den] in units of exp(-m_comb) and of the final state
// C'_N = [C_N | n_N] in units of exp(-m_N):
//   num (B, H, N, Dv), den (B, H, N), C_N (B, H, Dqk, Dv), n_N (B, H, Dqk), and the non-differentiable
//   stabilisers m_N (B, H) and m_comb (B, H, N).
//
// Memory: the boundary states live in one buffer P (B, H, NC+1, Dqk, Dv+1), P[c] = state before chunk c
// and P[NC] = final state. For one (b, h) any run of chunks of P is contiguous, so the batched matmuls
// read and write P in place, one bmm per (b, h) (B·H is small), instead of copying shifted states.
struct MLSTMNumeratorFunction : public torch::autograd::Function<MLSTMNumeratorFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& igate, const at::Tensor& fgate, const at::Tensor& C0,
                               const at::Tensor& n0, const at::Tensor& m0, const at::Tensor& resets, int64_t chunk) {
    NoAutocast no_autocast;
    const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2), qk_dim = q.size(3);
    const int64_t v_dim = v.size(3), chunks = length / chunk;
    const double scale = 1.0 / std::sqrt(static_cast<double>(qk_dim));
    ResetMasks masks = detail::make_reset_masks(detail::resets_or_none(resets), chunk);

    at::Tensor qc = detail::split_chunks(q, chunk) * scale;                 // q̂ (B, H, NC, L, Dqk)
    at::Tensor kc = detail::split_chunks(k, chunk);                         // (B, H, NC, L, Dqk)
    at::Tensor vc = detail::split_chunks(augment_with_ones(v), chunk);      // v' (B, H, NC, L, Dv+1)
    at::Tensor igate_c = igate.view({batch, heads, chunks, chunk});
    ChunkGates gates = chunk_gates(igate_c, fgate.view({batch, heads, chunks, chunk}), masks);
    at::Tensor m = boundary_stabilisers(gates, masks, m0);  // (B, H, NC+1)
    at::Tensor m_prev = m.narrow(-1, 0, chunks), m_next = m.narrow(-1, 1, chunks);

    // ---- boundary states: C_k = δ_k C_{k-1} + Y_k,  Y_k = Σ_r exp(a_r - m_k) k_r v'_rᵀ
    at::Tensor to_end_weight = at::exp(gates.to_end - m_next.unsqueeze(-1));  // Ā (B, H, NC, L)
    at::Tensor carry = at::exp(gates.carried + m_prev - m_next);              // δ_k (B, H, NC)
    at::Tensor keys_to_end = kc * to_end_weight.unsqueeze(-1);                // K ⊙ Ā
    at::Tensor states = at::empty({batch, heads, chunks + 1, qk_dim, v_dim + 1}, q.options());
    states.select(2, 0).copy_(at::cat({C0, n0.unsqueeze(-1)}, -1));         // C'_0 = [C0 | n0]
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        at::Tensor out = head(states, b, h).narrow(0, 1, chunks);
        at::bmm_out(out, head(keys_to_end, b, h).transpose(1, 2), head(vc, b, h));
      }
    for (int64_t c = 0; c < chunks; ++c)  // in place: P[c+1] = Y_c + δ_c P[c]
      states.select(2, c + 1).addcmul_(states.select(2, c), carry.select(2, c).unsqueeze(-1).unsqueeze(-1));
    keys_to_end.reset();

    // ---- outputs of all chunks from C_{k-1}: intra-chunk pairs + carried state
    at::Tensor log_d = intra_log_weights(gates.cum_log_f, igate_c, detail::intra_chunk_mask(chunk, true, masks, q.device()));
    at::Tensor inter_log = inter_log_weights(gates.cum_log_f, m_prev, masks);
    at::Tensor m_comb = at::maximum(std::get<0>(log_d.max(-1)), inter_log);  // (B, H, NC, L)
    at::Tensor decay = log_d.sub_(m_comb.unsqueeze(-1)).exp_();              // D̄ (B, H, NC, L, L)
    at::Tensor inter_weight = at::exp(inter_log - m_comb);                   // β_r (B, H, NC, L)
    at::Tensor scores = at::matmul(qc, kc.transpose(-2, -1)).mul_(decay);    // (q̂ kᵀ) ⊙ D̄
    decay.reset();
    at::Tensor num = at::matmul(scores, vc);                                 // (B, H, NC, L, Dv+1)
    scores.reset();
    at::Tensor q_inter = qc * inter_weight.unsqueeze(-1);                    // q̂ ⊙ β
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        head(num, b, h).baddbmm_(head(q_inter, b, h), head(states, b, h).narrow(0, 0, chunks));

    at::Tensor final_state = states.select(2, chunks).clone();               // (B, H, Dqk, Dv+1)
    at::Tensor m_final = m.select(-1, chunks).clone();
    at::Tensor m_comb_flat = m_comb.reshape({batch, heads, length});
    ctx->save_for_backward({q, k, v, igate, fgate, resets, states, m, m_comb_flat});
    ctx->saved_data["chunk"] = chunk;
    ctx->mark_non_differentiable({m_final, m_comb_flat});
    num = num.view({batch, heads, length, v_dim + 1});
    return {num.narrow(-1, 0, v_dim), num.select(-1, v_dim), final_state.narrow(-1, 0, v_dim),
            final_state.select(-1, v_dim), m_final, m_comb_flat};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    NoAutocast no_autocast;
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &igate = saved[3], &fgate = saved[4];
    const at::Tensor &resets = saved[5], &states = saved[6], &m = saved[7], &m_comb_flat = saved[8];
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2), qk_dim = q.size(3);
    const int64_t v_dim = v.size(3), chunks = length / chunk;
    const double scale = 1.0 / std::sqrt(static_cast<double>(qk_dim));
    auto grad_or_zeros = [](const at::Tensor& g, at::IntArrayRef shape, const at::TensorOptions& options) {
      return g.defined() ? g : at::zeros(shape, options);
    };
    // dnum' = [dnum, dden] (B, H, NC, L, Dv+1); dC'_N = [dC_N | dn_N] (B, H, Dqk, Dv+1)
    at::Tensor d_num_c = detail::split_chunks(
        at::cat({grad_or_zeros(grads[0], {batch, heads, length, v_dim}, q.options()),
                 grad_or_zeros(grads[1], {batch, heads, length}, q.options()).unsqueeze(-1)},
                -1),
        chunk);
    at::Tensor d_final = at::cat({grad_or_zeros(grads[2], {batch, heads, qk_dim, v_dim}, q.options()),
                                  grad_or_zeros(grads[3], {batch, heads, qk_dim}, q.options()).unsqueeze(-1)},
                                 -1);

    // ---- recompute the gate weights (cheap, elementwise) with the saved stabilisers
    ResetMasks masks = detail::make_reset_masks(detail::resets_or_none(resets), chunk);
    at::Tensor qc = detail::split_chunks(q, chunk) * scale;
    at::Tensor kc = detail::split_chunks(k, chunk);
    at::Tensor vc = detail::split_chunks(augment_with_ones(v), chunk);
    at::Tensor igate_c = igate.view({batch, heads, chunks, chunk});
    ChunkGates gates = chunk_gates(igate_c, fgate.view({batch, heads, chunks, chunk}), masks);
    at::Tensor m_prev = m.narrow(-1, 0, chunks), m_next = m.narrow(-1, 1, chunks);
    at::Tensor m_comb = m_comb_flat.view({batch, heads, chunks, chunk});
    at::Tensor to_end_weight = at::exp(gates.to_end - m_next.unsqueeze(-1));  // Ā (B, H, NC, L)
    at::Tensor carry = at::exp(gates.carried + m_prev - m_next);              // δ (B, H, NC)
    at::Tensor decay = intra_log_weights(gates.cum_log_f, igate_c, detail::intra_chunk_mask(chunk, true, masks, q.device()))
                           .sub_(m_comb.unsqueeze(-1))
                           .exp_();                                           // D̄ (B, H, NC, L, L)
    at::Tensor inter_weight = at::exp(inter_log_weights(gates.cum_log_f, m_prev, masks) - m_comb);  // β

    // ---- reverse recurrence over chunks in one buffer G (B, H, NC+1, Dqk, Dv+1):
    //      G[NC] = dC'_N;  G[c] = δ_c G[c+1] + (q̂ ⊙ β)_cᵀ dnum'_c  (gradient wrt the state before chunk c)
    at::Tensor q_inter = qc * inter_weight.unsqueeze(-1);
    at::Tensor d_states = at::empty_like(states);
    d_states.select(2, chunks).copy_(d_final);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        at::Tensor out = head(d_states, b, h).narrow(0, 0, chunks);
        at::bmm_out(out, head(q_inter, b, h).transpose(1, 2), head(d_num_c, b, h));
      }
    q_inter.reset();
    for (int64_t c = chunks - 1; c >= 0; --c)
      d_states.select(2, c).addcmul_(d_states.select(2, c + 1), carry.select(2, c).unsqueeze(-1).unsqueeze(-1));
    at::Tensor d_initial = d_states.select(2, 0).clone();

    // ---- intra-chunk terms batched over all chunks, inter-chunk terms per (b, h) from the buffers
    at::Tensor d_scores = at::matmul(d_num_c, vc.transpose(-2, -1)).mul_(decay);  // (dnum' v'ᵀ) ⊙ D̄
    at::Tensor dq = at::matmul(d_scores, kc);
    at::Tensor dk = at::matmul(d_scores.transpose(-2, -1), qc);
    d_scores.reset();
    at::Tensor weights = at::matmul(qc, kc.transpose(-2, -1)).mul_(decay);        // (q̂ kᵀ) ⊙ D̄
    decay.reset();
    at::Tensor dv = at::matmul(weights.transpose(-2, -1), d_num_c);               // (B, H, NC, L, Dv+1)
    weights.reset();
    at::Tensor keys_to_end = kc * to_end_weight.unsqueeze(-1);                     // K ⊙ Ā
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; ++h) {
        at::Tensor prev = head(states, b, h).narrow(0, 0, chunks);      // C'_{k-1} (NC, Dqk, Dv+1)
        at::Tensor d_end = head(d_states, b, h).narrow(0, 1, chunks);   // dC'_k    (NC, Dqk, Dv+1)
        // dq̂ += β ⊙ (dnum' C'_{k-1}ᵀ);  dk += Ā ⊙ (v' dC'_kᵀ);  dv' += (K ⊙ Ā) dC'_k
        head(dq, b, h).add_(at::bmm(head(d_num_c, b, h), prev.transpose(1, 2)).mul_(head(inter_weight, b, h).unsqueeze(-1)));
        head(dk, b, h).add_(at::bmm(head(vc, b, h), d_end.transpose(1, 2)).mul_(head(to_end_weight, b, h).unsqueeze(-1)));
        head(dv, b, h).baddbmm_(head(keys_to_end, b, h), d_end);
      }
    }

    // ---- gates by the scaling identities (swax.md §2.8, extended for C0 and dC_N):
    //   dĩ_t = v'_t · dv'_t ;  dlf_t = Σ_{u>=t} (q_u·dq_u - k_u·dk_u) + <dC'_N, C'_N> ;  df̃ = σ(-f̃) dlf
    // (q̂·dq̂ = q·dq: the scale cancels; reset positions have lf = -inf, so their gradient is 0.)
    at::Tensor d_igate = (vc * dv).sum(-1).view({batch, heads, length});
    at::Tensor balance = ((qc * dq).sum(-1) - (kc * dk).sum(-1)).view({batch, heads, length});
    at::Tensor final_balance = (d_final * states.select(2, chunks)).sum(at::IntArrayRef{-2, -1});  // (B, H)
    at::Tensor d_log_f = detail::reverse_cumsum(balance, -1) + final_balance.unsqueeze(-1);
    if (masks.defined()) d_log_f.masked_fill_(resets.unsqueeze(1), 0.0);
    at::Tensor d_fgate = d_log_f * at::sigmoid(-fgate);

    return {dq.mul_(scale).view({batch, heads, length, qk_dim}),
            dk.view({batch, heads, length, qk_dim}),
            dv.view({batch, heads, length, v_dim + 1}).narrow(-1, 0, v_dim),
            d_igate,
            d_fgate,
            d_initial.narrow(-1, 0, v_dim),
            d_initial.select(-1, v_dim),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

void check_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& igate,
                  const at::Tensor& fgate, const std::optional<MLSTMState>& initial, const MLSTMOptions& options,
                  const at::Tensor& resets) {
  const std::string what = "mlstm_chunkwise";
  detail::check_rank(q, 4, what, "q");
  detail::check_same_size(k, q.sizes(), what, "k");
  detail::check_rank(v, 4, what, "v");
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  detail::check_same_size(v, {batch, heads, length, v.size(3)}, what, "v");
  detail::check_same_size(igate, {batch, heads, length}, what, "igate");
  detail::check_same_size(fgate, {batch, heads, length}, what, "fgate");
  detail::check_resets(resets, batch, length, what);
  SWARMT_CHECK_INPUT(options.chunk_size >= 1, what, ": chunk_size must be >= 1, got ", options.chunk_size);
  if (initial) {
    detail::check_same_size(initial->C, {batch, heads, q.size(3), v.size(3)}, what, "initial C");
    detail::check_same_size(initial->n, {batch, heads, q.size(3)}, what, "initial n");
    detail::check_same_size(initial->m, {batch, heads}, what, "initial m");
  }
}

}  // namespace

std::pair<at::Tensor, MLSTMState> mlstm_chunkwise(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                  const at::Tensor& igate, const at::Tensor& fgate,
                                                  const std::optional<MLSTMState>& initial,
                                                  const MLSTMOptions& options, const at::Tensor& resets) {
  check_inputs(q, k, v, igate, fgate, initial, options, resets);
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  const int64_t qk_dim = q.size(3), v_dim = v.size(3);
  const at::ScalarType ct = detail::recurrent_compute_dtype(q);
  MLSTMState start = initial ? MLSTMState{initial->C.to(ct), initial->n.to(ct), initial->m.to(ct)}
                             : mlstm_zero_state(batch, heads, qk_dim, v_dim, ct, q.device());
  if (length == 0) return {at::zeros({batch, heads, 0, v_dim}, v.options()), start};

  // Short sequences use one chunk of their own length instead of padding to the default chunk.
  const int64_t chunk = std::min(options.chunk_size, length);
  const int64_t padded = detail::num_chunks(length, chunk) * chunk;
  // Padding tokens: k = 0, v = 0 (no contribution; their ones column meets k = 0), ĩ masked, lf = 0 (no
  // decay), so the final state is exactly the state after the last real token.
  at::Tensor padded_resets = detail::no_resets(q.device());
  if (resets.defined()) {
    padded_resets = padded == length ? resets
                                     : at::cat({resets, at::zeros({batch, padded - length}, resets.options())}, 1);
  }
  const at::Tensor q_p = detail::pad_time(q.to(ct), 2, padded, 0.0), k_p = detail::pad_time(k.to(ct), 2, padded, 0.0);
  const at::Tensor v_p = detail::pad_time(v.to(ct), 2, padded, 0.0);
  const at::Tensor igate_p = detail::pad_time(igate.to(ct), 2, padded, kMaskedLogWeight);
  const at::Tensor fgate_p = detail::pad_time(fgate.to(ct), 2, padded, kNoDecayForgetGate);
  auto unpad = [&](const at::Tensor& x) { return padded == length ? x : x.narrow(2, 0, length); };

  if (q.device().is_cpu() && detail::mlstm_cpu_kernels()) {
    auto [h, C, n, m] = detail::mlstm_chunkwise_cpu(q_p, k_p, v_p, igate_p, fgate_p, start.C, start.n,
                                                    start.m.detach(), padded_resets, chunk, options.eps);
    return {unpad(h).to(q.scalar_type()), MLSTMState{C, n, m}};
  }
  variable_list out = MLSTMNumeratorFunction::apply(q_p, k_p, v_p, igate_p, fgate_p, start.C, start.n,
                                                    start.m.detach(), padded_resets, chunk);
  at::Tensor num = unpad(out[0]), den = unpad(out[1]), m_comb = unpad(out[5]);
  // h = num / (max(|den|, exp(-m_comb)) + eps): plain ATen ops, so autograd gives the exact normaliser
  // gradient; m_comb is a non-differentiable output.
  at::Tensor h = num / (at::maximum(at::abs(den), at::exp(-m_comb)) + options.eps).unsqueeze(-1);
  MLSTMState final_state{out[2].contiguous(), out[3].contiguous(), out[4]};
  return {h.to(q.scalar_type()), final_state};
}

}  // namespace swarmt::ops
