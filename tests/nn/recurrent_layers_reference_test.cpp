// The mLSTM and Gated DeltaNet layers against plain per-token references written here from the equations
// (specs/swax.md §2.1, §2.4, §3.1, §3.3), in fp64, outputs and gradients: projections, short
// convolutions, gates and soft-caps, the cells, the head norms and the output gates. The layers run their
// chunkwise kernels (several chunks and a partial one); the references loop over tokens and share no code
// with them beyond at:: arithmetic.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <vector>

#include "swarmt/nn/gated_deltanet_layer.h"
#include "swarmt/nn/mlstm_layer.h"
#include "test_util.h"

namespace swarmt::recurrent_layers_reference_test {


// y_t[c] = Σ_j w[c, j] · x_{t-(K-1)+j}[c], zeros before the sequence (causal depthwise convolution).
at::Tensor causal_depthwise_conv(const at::Tensor& x, const at::Tensor& w) {
  const int64_t n = x.size(1), taps = w.size(1);
  std::vector<at::Tensor> out;
  for (int64_t t = 0; t < n; ++t) {
    at::Tensor y = at::zeros_like(x.select(1, t));
    for (int64_t j = 0; j < taps; ++j) {
      const int64_t p = t - (taps - 1) + j;
      if (p >= 0) y = y + x.select(1, p) * w.select(1, j);
    }
    out.push_back(y);
  }
  return at::stack(out, 1);
}

at::Tensor linear(const at::Tensor& x, const torch::nn::Linear& l) {
  at::Tensor y = at::matmul(x, l->weight.t());
  return l->bias.defined() ? y + l->bias : y;
}

// Every parameter drawn afresh, so that no gate sits at an initialisation that hides a term (the input
// gate's -10 bias would make the cell's input negligible).
void randomize(torch::nn::Module& module, uint64_t seed) {
  at::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& p : module.parameters()) p.normal_(0.0, 0.4, gen);
}

// The gradients of sum(y ⊙ r) with respect to x and every parameter, in parameter order.
std::vector<at::Tensor> gradients(torch::nn::Module& module, const at::Tensor& x, const at::Tensor& y,
                                  const at::Tensor& r) {
  std::vector<at::Tensor> inputs{x};
  for (auto& p : module.parameters()) inputs.push_back(p);
  return torch::autograd::grad({(y * r).sum()}, inputs, {}, /*retain_graph=*/false, /*create_graph=*/false,
                               /*allow_unused=*/true);
}

void expect_close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].defined(), b[i].defined()) << "gradient " << i;
    if (!a[i].defined()) continue;
    const double scale = std::max(1.0, b[i].abs().max().item<double>());
    EXPECT_LT((a[i] - b[i]).abs().max().item<double>(), tolerance * scale) << "gradient " << i;
  }
}

// --------------------------------------------------------------------------------------------------
// mLSTM (xLSTM-7B form, with the optional short convolution before q and k)

at::Tensor mlstm_reference(nn::MLSTMLayerImpl& l, const at::Tensor& x) {
  const auto& o = l.options();
  const int64_t batch = x.size(0), n = x.size(1), heads = o.num_heads, dqk = o.qk_head_dim, dv = o.v_head_dim;
  const at::Tensor xqk = o.conv_size > 0 ? at::silu(causal_depthwise_conv(x, l.qk_conv)) : x;
  const at::Tensor q = linear(xqk, l.q_proj).view({batch, n, heads, dqk});
  const at::Tensor k = linear(xqk, l.k_proj).view({batch, n, heads, dqk});
  const at::Tensor v = linear(x, l.v_proj).view({batch, n, heads, dv});
  const double cap = o.gate_soft_cap;
  const at::Tensor igate = cap * at::tanh(linear(x, l.igate_proj) / cap);  // (B, N, H)
  const at::Tensor fgate = cap * at::tanh(linear(x, l.fgate_proj) / cap);
  const at::Tensor head_weight = l.head_norm->weight.view({heads, dv});

  std::vector<at::Tensor> outputs;
  at::Tensor C = at::zeros({batch, heads, dqk, dv}, x.options());
  at::Tensor nrm = at::zeros({batch, heads, dqk}, x.options());
  at::Tensor m = at::zeros({batch, heads}, x.options());
  for (int64_t t = 0; t < n; ++t) {
    // m_t = max(lf_t + m_{t-1}, ĩ_t); C_t = f' C + i' k vᵀ; n_t = f' n + i' k   (§2.1)
    const at::Tensor lf = at::log_sigmoid(fgate.select(1, t)), it = igate.select(1, t);
    const at::Tensor m_new = at::maximum(lf + m, it);
    const at::Tensor f_scale = at::exp(lf + m - m_new).unsqueeze(-1), i_scale = at::exp(it - m_new).unsqueeze(-1);
    const at::Tensor kt = k.select(1, t), vt = v.select(1, t), qt = q.select(1, t) / std::sqrt(double(dqk));
    C = f_scale.unsqueeze(-1) * C + (i_scale * kt).unsqueeze(-1) * vt.unsqueeze(-2);
    nrm = f_scale * nrm + i_scale * kt;
    m = m_new;
    // h̃ = Cᵀ q̂ / (max(|n·q̂|, exp(-m)) + eps)
    const at::Tensor numerator = at::matmul(qt.unsqueeze(-2), C).squeeze(-2);  // (B, H, Dv)
    const at::Tensor denominator = at::maximum((nrm * qt).sum(-1).abs(), at::exp(-m)) + o.eps;
    at::Tensor h = numerator / denominator.unsqueeze(-1);
    // LayerNorm over Dv per head (weight, no bias)
    const at::Tensor centered = h - h.mean(-1, true);
    h = centered / at::sqrt(centered.pow(2).mean(-1, true) + o.norm_eps) * head_weight;
    outputs.push_back(h.reshape({batch, heads * dv}));
  }
  const at::Tensor h = at::stack(outputs, 1);  // (B, N, H·Dv)
  return linear(at::sigmoid(linear(x, l.ogate_proj)) * h, l.out_proj);
}

// Outputs with the cell's eps (1e-6) and without; gradients with eps = 0. The stabiliser m cancels exactly
// only without eps (§2.1), and the chunkwise backward treats it as the constant it then is, so with eps
// the gradients differ from the reference's by O(eps) (about 1e-7 here): the kernels' convention.
TEST(RecurrentLayerReference, mlstm_layer_equals_a_per_token_reference_with_gradients) {
  for (int64_t conv : {0, 4}) {
    for (double eps : {1e-6, 0.0}) {
      nn::MLSTMLayerOptions o;
      o.hidden_size = 12;
      o.num_heads = 2;
      o.qk_head_dim = 4;
      o.v_head_dim = 6;
      o.chunk_size = 8;  // 21 tokens: two full chunks and a partial one
      o.conv_size = conv;
      o.eps = eps;
      nn::MLSTMLayer layer(o);
      layer->to(at::kDouble);
      randomize(*layer, 7 + conv);
      at::Tensor x = at::randn({2, 21, 12}, at::TensorOptions().dtype(at::kDouble)).requires_grad_(true);
      const at::Tensor r = at::randn({2, 21, 12}, at::kDouble);

      const at::Tensor y = layer->forward(x, nn::LayerContext{});
      const at::Tensor expected = mlstm_reference(*layer, x);
      EXPECT_LT((y - expected).abs().max().item<double>(), 1e-9) << "conv " << conv << ", eps " << eps;
      if (eps == 0.0) expect_close(gradients(*layer, x, y, r), gradients(*layer, x, expected, r), 1e-8);
    }
  }
}

// --------------------------------------------------------------------------------------------------
// Gated DeltaNet (fla layer form)

at::Tensor gated_deltanet_reference(nn::GatedDeltaNetLayerImpl& l, const at::Tensor& x) {
  const auto& o = l.options();
  const int64_t batch = x.size(0), n = x.size(1), heads = o.num_heads, dk = o.head_dim, dv = o.v_head_dim;
  auto l2 = [](const at::Tensor& t) { return t / at::sqrt(t.pow(2).sum(-1, true) + 1e-6); };
  const at::Tensor q = l2(at::silu(causal_depthwise_conv(linear(x, l.q_proj), l.q_conv)).view({batch, n, heads, dk}));
  const at::Tensor k = l2(at::silu(causal_depthwise_conv(linear(x, l.k_proj), l.k_conv)).view({batch, n, heads, dk}));
  const at::Tensor v = at::silu(causal_depthwise_conv(linear(x, l.v_proj), l.v_conv)).view({batch, n, heads, dv});
  // g = -exp(A_log) · softplus(W_a x + dt_bias) (log of the decay α); β = σ(W_b x), ×2 with negative eigenvalues
  const at::Tensor g = -at::exp(l.A_log) * at::softplus(linear(x, l.a_proj) + l.dt_bias);  // (B, N, H)
  at::Tensor beta = at::sigmoid(linear(x, l.b_proj));
  if (o.allow_neg_eigval) beta = beta * 2.0;

  std::vector<at::Tensor> outputs;
  at::Tensor S = at::zeros({batch, heads, dk, dv}, x.options());
  for (int64_t t = 0; t < n; ++t) {
    // S ← α S;  u = β (v - Sᵀ k);  S ← S + k uᵀ;  o = Sᵀ q / sqrt(d_k)   (§3.1, fla orientation)
    S = S * at::exp(g.select(1, t)).unsqueeze(-1).unsqueeze(-1);
    const at::Tensor kt = k.select(1, t), vt = v.select(1, t), qt = q.select(1, t);
    const at::Tensor old = at::matmul(kt.unsqueeze(-2), S).squeeze(-2);  // Sᵀ k
    const at::Tensor u = beta.select(1, t).unsqueeze(-1) * (vt - old);
    S = S + kt.unsqueeze(-1) * u.unsqueeze(-2);
    at::Tensor out = at::matmul((qt / std::sqrt(double(dk))).unsqueeze(-2), S).squeeze(-2);  // (B, H, Dv)
    // RMSNorm over Dv per head, shared weight
    out = out / at::sqrt(out.pow(2).mean(-1, true) + o.norm_eps) * l.o_norm->weight;
    outputs.push_back(out.reshape({batch, heads * dv}));
  }
  const at::Tensor o_all = at::stack(outputs, 1);
  return linear(o_all * at::silu(linear(x, l.g_proj)), l.o_proj);
}

// 21 tokens in chunks of 8: two full chunks and a partial one.
nn::GatedDeltaNetLayerOptions small_gated_deltanet() {
  nn::GatedDeltaNetLayerOptions o;
  o.hidden_size = 12;
  o.num_heads = 2;
  o.head_dim = 4;
  o.v_head_dim = 6;
  o.conv_size = 4;
  o.chunk_size = 8;
  return o;
}

TEST(RecurrentLayerReference, gated_deltanet_layer_equals_a_per_token_reference_with_gradients) {
  for (bool negative : {false, true}) {
    nn::GatedDeltaNetLayerOptions o = small_gated_deltanet();
    o.allow_neg_eigval = negative;
    nn::GatedDeltaNetLayer layer(o);
    layer->to(at::kDouble);
    randomize(*layer, 11 + negative);
    at::Tensor x = at::randn({2, 21, 12}, at::TensorOptions().dtype(at::kDouble)).requires_grad_(true);
    const at::Tensor r = at::randn({2, 21, 12}, at::kDouble);

    const at::Tensor y = layer->forward(x, nn::LayerContext{});
    const at::Tensor expected = gated_deltanet_reference(*layer, x);
    EXPECT_LT((y - expected).abs().max().item<double>(), 1e-9) << "negative eigenvalues " << negative;
    expect_close(gradients(*layer, x, y, r), gradients(*layer, x, expected, r), 1e-8);
  }
}

// In fp32 with gradients the layer takes its fused CPU training path (the six projections as one GEMM,
// the convolutions and SiLU as one pass, the l2 norms as the fused RMSNorm); against the same reference
// in fp64, values and gradients agree to fp32 accuracy.
TEST(RecurrentLayerReference, gated_deltanet_layer_fused_fp32_training_path_equals_the_reference) {
  nn::GatedDeltaNetLayer layer(small_gated_deltanet());
  randomize(*layer, 21);
  const at::Tensor x_value = at::randn({2, 21, 12});
  const at::Tensor r = at::randn({2, 21, 12});
  const at::Tensor x = x_value.clone().requires_grad_(true);
  const at::Tensor y = layer->forward(x, nn::LayerContext{});
  EXPECT_TRUE(AutogradGraphHas(y, "ShortConvSiluFunction"));
  EXPECT_TRUE(AutogradGraphHas(y, "RmsNormFunction"));  // the l2 norms (and the output norm)
  const auto g = gradients(*layer, x, y, r);

  layer->to(at::kDouble);
  const at::Tensor x64 = x_value.to(at::kDouble).requires_grad_(true);
  const at::Tensor expected = gated_deltanet_reference(*layer, x64);
  EXPECT_LT((y.to(at::kDouble) - expected).abs().max().item<double>(), 1e-5);
  std::vector<at::Tensor> g64 = gradients(*layer, x64, expected, r.to(at::kDouble));
  for (auto& t : g64) t = t.to(at::kFloat);
  expect_close(g, g64, 1e-4);
}

}  // namespace swarmt::recurrent_layers_reference_test
