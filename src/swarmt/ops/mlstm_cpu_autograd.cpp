#include "swarmt/ops/mlstm_cpu_autograd.h"

#include <torch/csrc/autograd/custom_function.h>

#include <cmath>

#include "swarmt/ops/mlstm_cpu.h"
#include "swarmt/ops/no_autocast.h"
#include "swarmt/ops/parallel.h"
#include "swarmt/ops/recurrent_chunking.h"

namespace swarmt::ops::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The inputs, contiguous (resets: undefined or bool (B, N)).
struct Inputs {
  at::Tensor q, k, v, igate, fgate, resets;
  Inputs(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in, const at::Tensor& igate_in,
         const at::Tensor& fgate_in, const at::Tensor& resets_in)
      : q(q_in.contiguous()), k(k_in.contiguous()), v(v_in.contiguous()), igate(igate_in.contiguous()),
        fgate(fgate_in.contiguous()), resets(resets_or_none(resets_in)) {
    if (resets.defined()) resets = resets.contiguous();
  }

  template <typename T>
  MLSTMProblem<T> problem(int64_t chunk) const {
    MLSTMProblem<T> p;
    p.heads = q.size(0) * q.size(1);
    p.heads_per_batch = q.size(1);
    p.length = q.size(2);
    p.chunk = chunk;
    p.qk_dim = q.size(3);
    p.v_dim = v.size(3);
    p.scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(p.qk_dim)));
    p.q = q.data_ptr<T>();
    p.k = k.data_ptr<T>();
    p.v = v.data_ptr<T>();
    p.igate = igate.data_ptr<T>();
    p.fgate = fgate.data_ptr<T>();
    p.resets = resets.defined() ? resets.data_ptr<bool>() : nullptr;
    return p;
  }
};

// C (B, H, S, Dqk, Dv), n (B, H, S, Dqk), m (B, H, S): S slots of boundaries (see MLSTMBoundaries).
template <typename T>
MLSTMBoundaries<T> boundaries(const at::Tensor& C, const at::Tensor& n, const at::Tensor& m) {
  return {C.data_ptr<T>(), n.data_ptr<T>(), m.data_ptr<T>(), C.size(2)};
}

struct Forward {
  at::Tensor h, den, m_comb;                   // (B, H, N, Dv), (B, H, N), (B, H, N)
  at::Tensor C_states, n_states, m_states;     // every boundary, or the last two
  at::Tensor C_final, n_final, m_final;
};

// The forward kernels; `keep_all`: every chunk boundary's state (a backward follows), else two slots.
Forward run_forward(const Inputs& in, const at::Tensor& C0, const at::Tensor& n0, const at::Tensor& m0,
                    int64_t chunk, double eps, bool keep_all) {
  const int64_t batch = in.q.size(0), heads = in.q.size(1), length = in.q.size(2), qk_dim = in.q.size(3);
  const int64_t v_dim = in.v.size(3), chunks = length / chunk, slots = keep_all ? chunks + 1 : 2;
  const at::TensorOptions options = in.q.options();
  Forward f;
  f.C_states = at::empty({batch, heads, slots, qk_dim, v_dim}, options);
  f.n_states = at::empty({batch, heads, slots, qk_dim}, options);
  f.m_states = at::empty({batch, heads, slots}, options);
  f.C_states.select(2, 0).copy_(C0);
  f.n_states.select(2, 0).copy_(n0);
  f.m_states.select(2, 0).copy_(m0);
  f.h = at::empty({batch, heads, length, v_dim}, options);
  f.den = at::empty({batch, heads, length}, options);
  f.m_comb = at::empty({batch, heads, length}, options);
  AT_DISPATCH_FLOATING_TYPES(in.q.scalar_type(), "mlstm_forward_cpu", [&] {
    const auto p = in.problem<scalar_t>(chunk);
    const auto states = boundaries<scalar_t>(f.C_states, f.n_states, f.m_states);
    parallel_for(0, p.heads, 1, [&](int64_t begin, int64_t end) {
      mlstm_forward_cpu(p, states, static_cast<scalar_t>(eps), f.h.data_ptr<scalar_t>(), f.den.data_ptr<scalar_t>(),
                        f.m_comb.data_ptr<scalar_t>(), begin, end);
    });
  });
  const int64_t last = chunks % slots;
  f.C_final = f.C_states.select(2, last).clone();
  f.n_final = f.n_states.select(2, last).clone();
  f.m_final = f.m_states.select(2, last).clone();
  return f;
}

// Saved for backward: the inputs, the states at every chunk boundary (C, n, m apart; entry 0 the initial
// state), m_comb, den and h.
struct MLSTMCpuFunction : public torch::autograd::Function<MLSTMCpuFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& igate, const at::Tensor& fgate, const at::Tensor& C0,
                               const at::Tensor& n0, const at::Tensor& m0, const at::Tensor& resets, int64_t chunk,
                               double eps) {
    NoAutocast no_autocast;
    const Inputs in(q, k, v, igate, fgate, resets);
    Forward f = run_forward(in, C0, n0, m0, chunk, eps, true);
    ctx->save_for_backward({in.q, in.k, in.v, in.igate, in.fgate, resets, f.C_states, f.n_states, f.m_states,
                            f.m_comb, f.den, f.h});
    ctx->saved_data["chunk"] = chunk;
    ctx->saved_data["eps"] = eps;
    ctx->mark_non_differentiable({f.m_final});
    return {f.h, f.C_final, f.n_final, f.m_final};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    NoAutocast no_autocast;
    const variable_list saved = ctx->get_saved_variables();
    const Inputs in(saved[0], saved[1], saved[2], saved[3], saved[4], saved[5]);
    const at::Tensor &C_states = saved[6], &n_states = saved[7], &m_states = saved[8];
    const at::Tensor &m_comb = saved[9], &den = saved[10], &h = saved[11];
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const double eps = ctx->saved_data["eps"].toDouble();
    const int64_t batch = in.q.size(0), heads = in.q.size(1), length = in.q.size(2), qk_dim = in.q.size(3);
    const int64_t v_dim = in.v.size(3);
    auto given = [&](const at::Tensor& g, at::IntArrayRef shape) {
      return g.defined() ? g.contiguous() : at::zeros(shape, in.q.options());
    };
    const at::Tensor d_h = given(grads[0], {batch, heads, length, v_dim});
    const at::Tensor d_C = given(grads[1], {batch, heads, qk_dim, v_dim});
    const at::Tensor d_n = given(grads[2], {batch, heads, qk_dim});
    at::Tensor dq = at::empty_like(in.q), dk = at::empty_like(in.k), dv = at::empty_like(in.v);
    at::Tensor d_igate = at::empty_like(in.igate), d_fgate = at::empty_like(in.fgate);
    at::Tensor dC0 = at::empty_like(d_C), dn0 = at::empty_like(d_n);
    AT_DISPATCH_FLOATING_TYPES(in.q.scalar_type(), "mlstm_backward_cpu", [&] {
      const auto p = in.problem<scalar_t>(chunk);
      const auto states = boundaries<scalar_t>(C_states, n_states, m_states);
      parallel_for(0, p.heads, 1, [&](int64_t begin, int64_t end) {
        mlstm_backward_cpu(p, states, static_cast<scalar_t>(eps), h.data_ptr<scalar_t>(), den.data_ptr<scalar_t>(),
                           m_comb.data_ptr<scalar_t>(), d_h.data_ptr<scalar_t>(), d_C.data_ptr<scalar_t>(),
                           d_n.data_ptr<scalar_t>(), dq.data_ptr<scalar_t>(), dk.data_ptr<scalar_t>(),
                           dv.data_ptr<scalar_t>(), d_igate.data_ptr<scalar_t>(), d_fgate.data_ptr<scalar_t>(),
                           dC0.data_ptr<scalar_t>(), dn0.data_ptr<scalar_t>(), begin, end);
      });
    });
    return {dq, dk, dv, d_igate, d_fgate, dC0, dn0, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

std::array<at::Tensor, 4> mlstm_chunkwise_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                              const at::Tensor& igate, const at::Tensor& fgate, const at::Tensor& C0,
                                              const at::Tensor& n0, const at::Tensor& m0, const at::Tensor& resets,
                                              int64_t chunk, double eps) {
  if (!needs_grad({q, k, v, igate, fgate, C0, n0})) {  // no backward follows: two boundary slots, not NC + 1
    NoAutocast no_autocast;
    Forward f = run_forward(Inputs(q, k, v, igate, fgate, resets), C0, n0, m0, chunk, eps, false);
    return {f.h, f.C_final, f.n_final, f.m_final};
  }
  variable_list out = MLSTMCpuFunction::apply(q, k, v, igate, fgate, C0, n0, m0, resets, chunk, eps);
  return {out[0], out[1], out[2], out[3]};
}

}  // namespace swarmt::ops::detail
