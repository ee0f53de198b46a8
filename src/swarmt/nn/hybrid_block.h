// The SWAX block (specs/swax.md §1.4): pre-RMSNorm token mixer + residual, then pre-RMSNorm SwiGLU +
// residual. The mixer is chosen by a layer-pattern letter:
//   S  sliding-window attention (RoPE)     A  full causal attention (RoPE)
//   M  mLSTM                               G  Gated DeltaNet
// Tensor names: input_layernorm, {self_attn | mlstm | gdn}.*, post_attention_layernorm, mlp.*
#pragma once

#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/decoder_layer.h"
#include "swarmt/nn/gated_deltanet_layer.h"
#include "swarmt/nn/gated_mlp.h"
#include "swarmt/nn/mlstm_layer.h"
#include "swarmt/nn/norms.h"

namespace swarmt::nn {

struct HybridBlockOptions {
  char kind = 'S';
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  double norm_eps = 1e-6;
  AttentionLayerOptions attention;     // kind S or A (A forces window 0)
  MLSTMLayerOptions mlstm;             // kind M
  GatedDeltaNetLayerOptions gdn;       // kind G
};

class HybridBlock : public DecoderLayer {
 public:
  explicit HybridBlock(const HybridBlockOptions& options);

  at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) override;
  at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) override;
  std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override;
  int64_t window() const override { return attention ? attention->window() : 0; }
  void set_window(int64_t w) override {
    if (attention && kind_ == 'S') attention->set_window(w);
  }

  bool is_recurrent() const override { return kind_ == 'M' || kind_ == 'G'; }
  char kind() const { return kind_; }
  // Initialisation per specs/swax.md §2.5 / §3.4; num_blocks scales the output projections.
  void reset_parameters(int64_t num_blocks);

  RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  AttentionLayer attention{nullptr};
  MLSTMLayer mlstm{nullptr};
  GatedDeltaNetLayer gdn{nullptr};
  GatedMLP mlp{nullptr};

 private:
  at::Tensor mix(const at::Tensor& h, const LayerContext* ctx, LayerState* state);
  char kind_;
  HybridBlockOptions options_;
};

}  // namespace swarmt::nn
