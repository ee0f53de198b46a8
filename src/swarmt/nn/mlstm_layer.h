// mLSTM token mixer, xLSTM-7B "post-up-projection" form (specs/swax.md §2.4):
//   q = W_q x, k = W_k x  (d -> H·Dqk)      v = W_v x, õ = W_o x  (d -> H·Dv)
//   ĩ = softcap_a(W_i x + b_i), f̃ = softcap_a(W_f x + b_f)       (one gate per head, a = 15)
//   h̃ = mLSTM cell per head (ops::mlstm_chunkwise / mlstm_step)
//   y = W_out( sigmoid(õ) ⊙ LayerNorm_head(h̃) )
// No positional encoding (xLSTM App. B.2). The input x is already RMS-normalised by the block.
// Optional short convolution (conv_size K > 0), as in the mLSTM block of xLSTM [Beck et al. 2024, Fig. 10]:
// queries and keys read x̃ = SiLU(conv_K(x)) (causal, depthwise over the d channels), values read x.
// A key then sees the tokens just before it, so one layer can bind a token to the one that follows it
// (the associative-recall pattern "key value"), which the 7B form without the conv cannot.
// Tensor names: q_proj, k_proj, v_proj, ogate_proj, igate_proj (+bias), fgate_proj (+bias), head_norm,
// out_proj, and qk_conv (d, K) when conv_size > 0.
#pragma once

#include <torch/torch.h>

#include "swarmt/nn/mixer.h"
#include "swarmt/nn/norms.h"
#include "swarmt/ops/mlstm.h"

namespace swarmt::nn {

struct MLSTMLayerOptions {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t qk_head_dim = 0;     // Dqk per head
  int64_t v_head_dim = 0;      // Dv per head
  double gate_soft_cap = 15.0; // 0: no cap
  int64_t chunk_size = 64;
  double eps = 1e-6;           // cell normaliser eps
  double norm_eps = 1e-6;      // head-wise LayerNorm eps
  int64_t conv_size = 0;       // 0: no short convolution before q and k
};

struct MLSTMLayerState : LayerState {
  ops::MLSTMState cell;
  at::Tensor conv;             // (B, K-1, d): the last inputs of the short convolution (conv_size > 0)
  int64_t bytes() const override;
  void fields(StateFields& f) override;
};

class MLSTMLayerImpl : public Mixer {
 public:
  explicit MLSTMLayerImpl(const MLSTMLayerOptions& options);

  at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) override;  // (B, N, d) -> (B, N, d)
  at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) override;
  std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override;
  bool is_recurrent() const override { return true; }

  // Initialisation of specs/swax.md §2.5 (num_blocks for the wang_init of out_proj).
  void reset_parameters(int64_t num_blocks) override;
  // Per head C (Dqk x Dv), n (Dqk) and m, plus the conv tail (K - 1 inputs of d channels) when K > 0;
  // the same at every context.
  int64_t state_values(int64_t context) const override;
  // The chunkwise cell (ops::mlstm_chunkwise_flops).
  double mixing_flops_per_token(int64_t context) const override;

  const MLSTMLayerOptions& options() const { return options_; }

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, ogate_proj{nullptr};
  torch::nn::Linear igate_proj{nullptr}, fgate_proj{nullptr}, out_proj{nullptr};
  HeadwiseLayerNorm head_norm{nullptr};
  at::Tensor qk_conv;  // (d, K) depthwise kernel; undefined when conv_size = 0

 private:
  struct Projections {
    at::Tensor q, k, v;       // (B, H, N, D·) in the cell dtype (fp32 or fp64)
    at::Tensor igate, fgate;  // (B, H, N)
    at::Tensor ogate;         // (B, N, H·Dv) pre-activation
  };
  // conv_cache: the state's convolution tail (read and replaced), or nullptr for a whole sequence.
  Projections project(const at::Tensor& x, const at::Tensor& resets, at::Tensor* conv_cache);
  at::Tensor output(const at::Tensor& h, const at::Tensor& ogate, at::ScalarType dtype);  // h: (B, H, N, Dv)

  MLSTMLayerOptions options_;
};
TORCH_MODULE(MLSTMLayer);

}  // namespace swarmt::nn
