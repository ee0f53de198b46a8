#include "swarmt/nn/mlstm_layer.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "swarmt/core/error.h"
#include "swarmt/nn/init.h"
#include "swarmt/nn/linear.h"
#include "swarmt/nn/state_dtype.h"
#include "swarmt/ops/gated_delta.h"
#include "swarmt/ops/recurrent_flops.h"
#include "swarmt/ops/short_conv_cpu.h"

namespace swarmt::nn {
namespace {

// softcap_a(x) = a·tanh(x / a)  (xLSTM-7B eq. 13); a <= 0 disables it.
at::Tensor soft_cap(const at::Tensor& x, double cap) { return cap > 0 ? cap * at::tanh(x / cap) : x; }

int64_t nbytes(const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; }

}  // namespace

int64_t MLSTMLayerState::bytes() const { return cell.bytes() + nbytes(conv); }

void MLSTMLayerState::fields(StateFields& f) {
  f.tensor("C", cell.C);
  f.tensor("n", cell.n);
  f.tensor("m", cell.m);
  f.tensor("conv", conv);
}

MLSTMLayerImpl::MLSTMLayerImpl(const MLSTMLayerOptions& o) : options_(o) {
  const int64_t d = o.hidden_size, H = o.num_heads;
  q_proj = register_module("q_proj", linear_layer(d, H * o.qk_head_dim, false));
  k_proj = register_module("k_proj", linear_layer(d, H * o.qk_head_dim, false));
  v_proj = register_module("v_proj", linear_layer(d, H * o.v_head_dim, false));
  ogate_proj = register_module("ogate_proj", linear_layer(d, H * o.v_head_dim, false));
  igate_proj = register_module("igate_proj", linear_layer(d, H, true));
  fgate_proj = register_module("fgate_proj", linear_layer(d, H, true));
  head_norm = register_module("head_norm", HeadwiseLayerNorm(H, o.v_head_dim, o.norm_eps));
  out_proj = register_module("out_proj", linear_layer(H * o.v_head_dim, d, false));
  SWARMT_CHECK(o.conv_size >= 0, "mLSTM conv_size must be >= 0");
  if (o.conv_size > 0) qk_conv = register_parameter("qk_conv", torch::zeros({d, o.conv_size}));
  reset_parameters(/*num_blocks=*/1);
}

void MLSTMLayerImpl::reset_parameters(int64_t num_blocks) {
  at::NoGradGuard no_grad;
  const int64_t d = options_.hidden_size, H = options_.num_heads;
  small_init_(q_proj->weight, d);
  small_init_(k_proj->weight, d);
  small_init_(v_proj->weight, d);
  // Gate weights start at zero (so σ(õ) = 0.5 and the gates start at their biases); input-gate bias
  // -10 tames early gradient spikes (xLSTM-7B App. C.2); forget-gate biases linspace(3, 6) per head.
  ogate_proj->weight.zero_();
  igate_proj->weight.zero_();
  fgate_proj->weight.zero_();
  igate_proj->bias.fill_(-10.0);
  fgate_proj->bias.copy_(H > 1 ? at::linspace(3.0, 6.0, H) : at::full({1}, 3.0));
  head_norm->weight.fill_(1.0);
  wang_init_(out_proj->weight, d, num_blocks);
  // The convolution as a PyTorch Conv1d (kaiming-uniform, fan_in = kernel size), like GDN's.
  if (qk_conv.defined()) qk_conv.uniform_(-1.0 / std::sqrt(static_cast<double>(options_.conv_size)),
                                          1.0 / std::sqrt(static_cast<double>(options_.conv_size)));
}

int64_t MLSTMLayerImpl::state_values(int64_t /*context*/) const {
  const auto& o = options_;
  return o.num_heads * (o.qk_head_dim * o.v_head_dim + o.qk_head_dim + 1) +
         std::max<int64_t>(0, o.conv_size - 1) * o.hidden_size;
}

double MLSTMLayerImpl::mixing_flops_per_token(int64_t context) const {
  const auto& o = options_;
  return ops::mlstm_chunkwise_flops(1, o.num_heads, context, o.qk_head_dim, o.v_head_dim, o.chunk_size).forward /
         static_cast<double>(context);
}

MLSTMLayerImpl::Projections MLSTMLayerImpl::project(const at::Tensor& x, const at::Tensor& resets, at::Tensor* conv_cache) {
  const int64_t B = x.size(0), N = x.size(1), H = options_.num_heads;
  const auto ct = recurrent_state_dtype(x.scalar_type());
  at::Tensor xqk = x;
  const bool graph = at::GradMode::is_enabled() && (x.requires_grad() || q_proj->weight.requires_grad());
  if (qk_conv.defined() && graph && conv_cache == nullptr && x.device().is_cpu() && x.scalar_type() == at::kFloat &&
      qk_conv.scalar_type() == at::kFloat) {
    xqk = ops::short_conv_silu_cpu(x, qk_conv, resets);  // training on CPU: the convolution and SiLU fused
  } else if (qk_conv.defined()) {
    auto [y, cache] = ops::short_conv(x, qk_conv.to(x.scalar_type()), conv_cache ? *conv_cache : at::Tensor(), resets);
    if (conv_cache) *conv_cache = cache;
    xqk = at::silu(y);
  }
  // The projections of one input as one GEMM in training (linear_group; one pass each when decoding).
  at::Tensor q, k, v, igate, fgate, ogate;
  if (qk_conv.defined()) {
    const auto qk = linear_group(xqk, q_proj, k_proj);
    const auto rest = linear_group(x, v_proj, igate_proj, fgate_proj, ogate_proj);
    std::tie(q, k) = std::tie(qk[0], qk[1]);
    std::tie(v, igate, fgate, ogate) = std::tie(rest[0], rest[1], rest[2], rest[3]);
  } else {
    const auto all = linear_group(x, q_proj, k_proj, v_proj, igate_proj, fgate_proj, ogate_proj);
    std::tie(q, k, v, igate, fgate, ogate) = std::tie(all[0], all[1], all[2], all[3], all[4], all[5]);
  }
  Projections p;
  p.q = q.view({B, N, H, options_.qk_head_dim}).transpose(1, 2).to(ct).contiguous();
  p.k = k.view({B, N, H, options_.qk_head_dim}).transpose(1, 2).to(ct).contiguous();
  p.v = v.view({B, N, H, options_.v_head_dim}).transpose(1, 2).to(ct).contiguous();
  p.igate = soft_cap(igate.to(ct), options_.gate_soft_cap).transpose(1, 2).contiguous();
  p.fgate = soft_cap(fgate.to(ct), options_.gate_soft_cap).transpose(1, 2).contiguous();
  p.ogate = ogate;
  return p;
}

at::Tensor MLSTMLayerImpl::output(const at::Tensor& h, const at::Tensor& ogate, at::ScalarType dtype) {
  const int64_t B = h.size(0), N = h.size(2), H = options_.num_heads;
  auto normed = head_norm->forward(h.to(dtype));                      // (B, H, N, Dv)
  auto merged = normed.transpose(1, 2).reshape({B, N, H * options_.v_head_dim});
  return linear(out_proj, at::sigmoid(ogate) * merged);
}

at::Tensor MLSTMLayerImpl::forward(const at::Tensor& x, const LayerContext& ctx) {
  auto p = project(x, ctx.resets, nullptr);
  ops::MLSTMOptions cell_options;
  cell_options.chunk_size = options_.chunk_size;
  cell_options.eps = options_.eps;
  auto result = ops::mlstm_chunkwise(p.q, p.k, p.v, p.igate, p.fgate, std::nullopt, cell_options, ctx.resets);
  return output(result.first, p.ogate, x.scalar_type());
}

std::unique_ptr<LayerState> MLSTMLayerImpl::new_state(int64_t batch, at::ScalarType dtype, at::Device device) const {
  auto state = std::make_unique<MLSTMLayerState>();
  state->cell = ops::mlstm_zero_state(batch, options_.num_heads, options_.qk_head_dim, options_.v_head_dim,
                                      recurrent_state_dtype(dtype), device);
  if (options_.conv_size > 0)
    state->conv = at::zeros({batch, options_.conv_size - 1, options_.hidden_size}, at::TensorOptions().dtype(dtype).device(device));
  return state;
}

at::Tensor MLSTMLayerImpl::forward_stateful(const at::Tensor& x, LayerState& state) {
  auto* s = dynamic_cast<MLSTMLayerState*>(&state);
  SWARMT_CHECK(s != nullptr, "mLSTM layer got a state of another layer type");
  auto p = project(x, at::Tensor(), qk_conv.defined() ? &s->conv : nullptr);
  at::Tensor h;
  if (x.size(1) == 1) {
    using namespace at::indexing;
    auto step = ops::mlstm_step(p.q.select(2, 0), p.k.select(2, 0), p.v.select(2, 0), p.igate.select(2, 0),
                                p.fgate.select(2, 0), s->cell, options_.eps);
    h = step.first.unsqueeze(2);
    s->cell = step.second;
  } else {
    ops::MLSTMOptions cell_options;
    cell_options.chunk_size = options_.chunk_size;
    cell_options.eps = options_.eps;
    auto result = ops::mlstm_chunkwise(p.q, p.k, p.v, p.igate, p.fgate, s->cell, cell_options);
    h = result.first;
    s->cell = result.second;
  }
  return output(h, p.ogate, x.scalar_type());
}

}  // namespace swarmt::nn
