// Gated DeltaNet token mixer (specs/swax.md §3.3, fla `GatedDeltaNet` layer):
//   q = SiLU(conv4(W_q x)), k = SiLU(conv4(W_k x)), v = SiLU(conv4(W_v x))   (causal depthwise, kernel 4)
//   q, k <- L2Norm(q), L2Norm(k)                          per head, eps 1e-6
//   g = -exp(A_log) · softplus(W_a x + dt_bias)           per head log-decay
//   β = sigmoid(W_b x)   (× 2 when allow_neg_eigval)
//   o = gated delta rule per head (ops::gated_delta_chunkwise / gated_delta_step)
//   y = W_o( RMSNorm_head(o) ⊙ SiLU(W_g x) )
// Tensor names: q_proj, k_proj, v_proj, q_conv, k_conv, v_conv, a_proj, b_proj, A_log, dt_bias, g_proj,
// o_norm, o_proj.
#pragma once

#include <torch/torch.h>

#include "swarmt/nn/mixer.h"
#include "swarmt/nn/norms.h"
#include "swarmt/ops/gated_delta.h"

namespace swarmt::nn {

struct GatedDeltaNetLayerOptions {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t head_dim = 0;          // Dk per head
  int64_t v_head_dim = 0;        // Dv per head (head_dim · expand_v)
  int64_t conv_size = 4;
  bool allow_neg_eigval = false; // β ∈ (0, 2)
  int64_t chunk_size = 64;
  double norm_eps = 1e-5;
};

struct GatedDeltaNetLayerState : LayerState {
  ops::GatedDeltaState cell;
  at::Tensor q_conv, k_conv, v_conv;  // (B, K-1, channels): last inputs of each short convolution
  int64_t bytes() const override;
  void fields(StateFields& f) override;
};

class GatedDeltaNetLayerImpl : public Mixer {
 public:
  explicit GatedDeltaNetLayerImpl(const GatedDeltaNetLayerOptions& options);

  at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) override;  // (B, N, d) -> (B, N, d)
  at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) override;
  std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override;
  bool is_recurrent() const override { return true; }

  // Initialisation of specs/swax.md §3.4 (A ~ U(0, 16), dt in [1e-3, 1e-1], linears N(0, 0.02)).
  void reset_parameters();
  // The same: the GDN init does not depend on the depth.
  void reset_parameters(int64_t /*num_blocks*/) override { reset_parameters(); }
  // Per head S (Dk x Dv), plus the conv tails: K - 1 past inputs of the q, k (Dk) and v (Dv) projections;
  // the same at every context.
  int64_t state_values(int64_t context) const override;
  // The chunkwise gated delta rule (ops::gated_delta_chunkwise_flops).
  double mixing_flops_per_token(int64_t context) const override;
  const GatedDeltaNetLayerOptions& options() const { return options_; }

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, a_proj{nullptr}, b_proj{nullptr};
  torch::nn::Linear g_proj{nullptr}, o_proj{nullptr};
  at::Tensor q_conv, k_conv, v_conv;  // (channels, K) depthwise kernels
  at::Tensor A_log, dt_bias;          // (H)
  RMSNorm o_norm{nullptr};            // over Dv, shared by all heads

 private:
  struct Inputs {
    at::Tensor q, k, v;   // (B, H, N, D·) in the cell dtype
    at::Tensor beta, g;   // (B, H, N)
    at::Tensor gate;      // (B, N, H·Dv)
  };
  // conv_in: optional caches (B, K-1, C) for q, k, v; conv_out receives the new caches.
  Inputs project(const at::Tensor& x, const at::Tensor& resets, const at::Tensor* conv_in, at::Tensor* conv_out);
  at::Tensor output(const at::Tensor& o, const at::Tensor& gate, at::ScalarType dtype);

  GatedDeltaNetLayerOptions options_;
};
TORCH_MODULE(GatedDeltaNetLayer);

}  // namespace swarmt::nn
