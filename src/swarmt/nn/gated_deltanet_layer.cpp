#include "swarmt/nn/gated_deltanet_layer.h"

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/nn/init.h"
#include "swarmt/nn/linear.h"
#include "swarmt/nn/state_dtype.h"
#include "swarmt/ops/recurrent_flops.h"
#include "swarmt/ops/rmsnorm_cpu.h"
#include "swarmt/ops/short_conv_cpu.h"

namespace swarmt::nn {
namespace {

// y = x / sqrt(Σ x² + eps) over the last dimension (fla l2norm, eps 1e-6). In training on CPU this is
// the fused RMSNorm: x / sqrt(Σ x² + eps) = x / sqrt(mean(x²) + eps / D) · (1 / √D).
at::Tensor l2_normalize(const at::Tensor& x) {
  const int64_t d = x.size(-1);
  if (at::GradMode::is_enabled() && x.requires_grad() && ops::rms_norm_cpu_applies(x, {}))
    return ops::rms_norm_cpu(x, at::full({d}, 1.0 / std::sqrt(static_cast<double>(d)), x.options()),
                             1e-6 / static_cast<double>(d));
  return x * at::rsqrt(x.pow(2).sum(-1, true) + 1e-6);
}

}  // namespace

int64_t GatedDeltaNetLayerState::bytes() const {
  auto nbytes = [](const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.numel() * t.element_size()) : 0; };
  return cell.bytes() + nbytes(q_conv) + nbytes(k_conv) + nbytes(v_conv);
}

void GatedDeltaNetLayerState::fields(StateFields& f) {
  f.tensor("S", cell.S);
  f.tensor("q_conv", q_conv);
  f.tensor("k_conv", k_conv);
  f.tensor("v_conv", v_conv);
}

GatedDeltaNetLayerImpl::GatedDeltaNetLayerImpl(const GatedDeltaNetLayerOptions& o) : options_(o) {
  const int64_t d = o.hidden_size, H = o.num_heads, key_dim = H * o.head_dim, value_dim = H * o.v_head_dim;
  q_proj = register_module("q_proj", linear_layer(d, key_dim, false));
  k_proj = register_module("k_proj", linear_layer(d, key_dim, false));
  v_proj = register_module("v_proj", linear_layer(d, value_dim, false));
  q_conv = register_parameter("q_conv", torch::zeros({key_dim, o.conv_size}));
  k_conv = register_parameter("k_conv", torch::zeros({key_dim, o.conv_size}));
  v_conv = register_parameter("v_conv", torch::zeros({value_dim, o.conv_size}));
  a_proj = register_module("a_proj", linear_layer(d, H, false));
  b_proj = register_module("b_proj", linear_layer(d, H, false));
  A_log = register_parameter("A_log", torch::zeros({H}));
  dt_bias = register_parameter("dt_bias", torch::zeros({H}));
  g_proj = register_module("g_proj", linear_layer(d, value_dim, false));
  o_norm = register_module("o_norm", RMSNorm(o.v_head_dim, o.norm_eps));
  o_proj = register_module("o_proj", linear_layer(value_dim, d, false));
  reset_parameters();
}

void GatedDeltaNetLayerImpl::reset_parameters() {
  at::NoGradGuard no_grad;
  for (auto* lin : {&q_proj, &k_proj, &v_proj, &a_proj, &b_proj, &g_proj, &o_proj}) normal_init_((*lin)->weight, 0.02);
  for (auto* w : {&q_conv, &k_conv, &v_conv}) {
    // fla's ShortConvolution is an nn.Conv1d: kaiming-uniform with fan_in = kernel size.
    double bound = 1.0 / std::sqrt(static_cast<double>(options_.conv_size));
    w->uniform_(-bound, bound);
  }
  const int64_t H = options_.num_heads;
  // A ~ U(0, 16), stored as log A (clamped away from 0 so the log is finite).
  A_log.copy_(at::log(at::empty({H}).uniform_(0.0, 16.0).clamp_min(1e-4)));
  // dt = exp(U(0,1)·(ln 0.1 − ln 0.001) + ln 0.001) clamped ≥ 1e-4; dt_bias = inverse softplus(dt).
  auto dt = at::exp(at::rand({H}) * (std::log(0.1) - std::log(0.001)) + std::log(0.001)).clamp_min(1e-4);
  dt_bias.copy_(dt + at::log(-at::expm1(-dt)));
  o_norm->weight.fill_(1.0);
}

int64_t GatedDeltaNetLayerImpl::state_values(int64_t /*context*/) const {
  const auto& o = options_;
  return o.num_heads * o.head_dim * o.v_head_dim + (o.conv_size - 1) * o.num_heads * (2 * o.head_dim + o.v_head_dim);
}

double GatedDeltaNetLayerImpl::mixing_flops_per_token(int64_t context) const {
  const auto& o = options_;
  return ops::gated_delta_chunkwise_flops(1, o.num_heads, context, o.head_dim, o.v_head_dim, o.chunk_size).forward /
         static_cast<double>(context);
}

GatedDeltaNetLayerImpl::Inputs GatedDeltaNetLayerImpl::project(const at::Tensor& x, const at::Tensor& resets,
                                                               const at::Tensor* conv_in, at::Tensor* conv_out) {
  const int64_t B = x.size(0), N = x.size(1), H = options_.num_heads;
  const auto ct = recurrent_state_dtype(x.scalar_type());
  auto conv = [&](const at::Tensor& in, const at::Tensor& weight, int which) {
    auto [y, cache] = ops::short_conv(in, weight.to(in.scalar_type()), conv_in ? conv_in[which] : at::Tensor(), resets);
    if (conv_out) conv_out[which] = cache;
    return at::silu(y);
  };
  Inputs in;
  at::Tensor q, k, v, a_in, b_in;
  const int64_t key_dim = H * options_.head_dim, value_dim = H * options_.v_head_dim;
  const bool graph = at::GradMode::is_enabled() && (x.requires_grad() || q_proj->weight.requires_grad());
  if (graph && conv_in == nullptr && conv_out == nullptr && x.device().is_cpu()) {
    // Training on CPU: the six projections as one GEMM, the three convolutions and their SiLU as one
    // pass over the q | k | v channels (fused in fp32; the ATen ops under bf16 autocast).
    const auto parts = linear_group(x, q_proj, k_proj, v_proj, a_proj, b_proj, g_proj);
    const at::Tensor qkv_in = at::cat({parts[0], parts[1], parts[2]}, -1);
    const at::Tensor conv_weight = at::cat({q_conv, k_conv, v_conv}, 0);
    const at::Tensor qkv = ops::short_conv_silu_cpu_applies(qkv_in, conv_weight)
                               ? ops::short_conv_silu_cpu(qkv_in, conv_weight, resets)
                               : at::silu(ops::short_conv(qkv_in, conv_weight.to(qkv_in.scalar_type()), {}, resets).first);
    const auto qkv_parts = qkv.split_with_sizes({key_dim, key_dim, value_dim}, -1);  // backward: one cat
    q = qkv_parts[0];
    k = qkv_parts[1];
    v = qkv_parts[2];
    a_in = parts[3];
    b_in = parts[4];
    in.gate = parts[5];
  } else {
    q = conv(linear(q_proj, x), q_conv, 0);
    k = conv(linear(k_proj, x), k_conv, 1);
    v = conv(linear(v_proj, x), v_conv, 2);
    a_in = linear(a_proj, x);
    b_in = linear(b_proj, x);
    in.gate = linear(g_proj, x);
  }
  in.q = l2_normalize(q.view({B, N, H, options_.head_dim}).to(ct)).transpose(1, 2).contiguous();
  in.k = l2_normalize(k.view({B, N, H, options_.head_dim}).to(ct)).transpose(1, 2).contiguous();
  in.v = v.view({B, N, H, options_.v_head_dim}).to(ct).transpose(1, 2).contiguous();
  // g = -exp(A_log) · softplus(a + dt_bias): the log of the per-token decay α ∈ (0, 1).
  auto a = a_in.to(ct) + dt_bias.to(ct);
  in.g = (-at::exp(A_log.to(ct)) * at::softplus(a)).transpose(1, 2).contiguous();
  auto beta = at::sigmoid(b_in.to(ct));
  if (options_.allow_neg_eigval) beta = beta * 2.0;
  in.beta = beta.transpose(1, 2).contiguous();
  return in;
}

at::Tensor GatedDeltaNetLayerImpl::output(const at::Tensor& o, const at::Tensor& gate, at::ScalarType dtype) {
  const int64_t B = o.size(0), N = o.size(2), H = options_.num_heads;
  auto normed = o_norm->forward(o.to(dtype)).transpose(1, 2).reshape({B, N, H * options_.v_head_dim});
  return linear(o_proj, normed * at::silu(gate));
}

at::Tensor GatedDeltaNetLayerImpl::forward(const at::Tensor& x, const LayerContext& ctx) {
  auto in = project(x, ctx.resets, nullptr, nullptr);
  ops::GatedDeltaOptions cell_options;
  cell_options.chunk_size = options_.chunk_size;
  auto result = ops::gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, std::nullopt, cell_options, ctx.resets);
  return output(result.first, in.gate, x.scalar_type());
}

std::unique_ptr<LayerState> GatedDeltaNetLayerImpl::new_state(int64_t batch, at::ScalarType dtype,
                                                              at::Device device) const {
  auto state = std::make_unique<GatedDeltaNetLayerState>();
  const int64_t H = options_.num_heads;
  state->cell = ops::gated_delta_zero_state(batch, H, options_.head_dim, options_.v_head_dim, recurrent_state_dtype(dtype), device);
  auto opts = at::TensorOptions().dtype(dtype).device(device);
  state->q_conv = at::zeros({batch, options_.conv_size - 1, H * options_.head_dim}, opts);
  state->k_conv = at::zeros({batch, options_.conv_size - 1, H * options_.head_dim}, opts);
  state->v_conv = at::zeros({batch, options_.conv_size - 1, H * options_.v_head_dim}, opts);
  return state;
}

at::Tensor GatedDeltaNetLayerImpl::forward_stateful(const at::Tensor& x, LayerState& state) {
  auto* s = dynamic_cast<GatedDeltaNetLayerState*>(&state);
  SWARMT_CHECK(s != nullptr, "Gated DeltaNet layer got a state of another layer type");
  at::Tensor caches_in[3] = {s->q_conv, s->k_conv, s->v_conv};
  at::Tensor caches_out[3];
  auto in = project(x, at::Tensor(), caches_in, caches_out);
  s->q_conv = caches_out[0];
  s->k_conv = caches_out[1];
  s->v_conv = caches_out[2];
  at::Tensor o;
  if (x.size(1) == 1) {
    auto step = ops::gated_delta_step(in.q.select(2, 0), in.k.select(2, 0), in.v.select(2, 0), in.beta.select(2, 0),
                                      in.g.select(2, 0), s->cell, /*scale=*/0.0);
    o = step.first.unsqueeze(2);
    s->cell = step.second;
  } else {
    ops::GatedDeltaOptions cell_options;
    cell_options.chunk_size = options_.chunk_size;
    auto result = ops::gated_delta_chunkwise(in.q, in.k, in.v, in.beta, in.g, s->cell, cell_options);
    o = result.first;
    s->cell = result.second;
  }
  return output(o, in.gate, x.scalar_type());
}

}  // namespace swarmt::nn
