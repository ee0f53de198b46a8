// Multi-head softmax attention layer with RoPE, grouped-query heads and an optional sliding window:
// the S and A blocks of SWAX, and the self-attention of Llama and Gemma-3.
//
//   q = W_q x, k = W_k x, v = W_v x            split into heads: q (B, Hq, N, D), k, v (B, Hkv, N, D)
//   [Gemma-3] q, k <- RMSNorm_head(q), RMSNorm_head(k)   (over D, before RoPE)
//   q, k <- RoPE(q, pos), RoPE(k, pos)
//   o = softmax(q kᵀ · scale + band mask) v       (ops::causal_attention: O(N·w) for a window w)
//   y = W_o concat_heads(o)
// Tensor names: q_proj, k_proj, v_proj, o_proj [, q_norm, k_norm].
#pragma once

#include <torch/torch.h>

#include "swarmt/nn/mixer.h"
#include "swarmt/nn/norms.h"
#include "swarmt/ops/attention.h"
#include "swarmt/ops/rope.h"

namespace swarmt::nn {

struct AttentionLayerOptions {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  double rope_theta = 10000.0;
  ops::RopeScaling rope_scaling;
  int64_t window = 0;          // 0: full causal attention; > 0: sliding window (overridable per step)
  double scale = 0.0;          // 0: 1/sqrt(head_dim)
  double softcap = 0.0;        // attention logit soft-cap (0: off)
  bool qk_norm = false;        // Gemma-3
  double qk_norm_eps = 1e-6;
  bool qkv_bias = false;       // Llama attention_bias
  bool o_bias = false;
};

// Streaming state: a KV ring of `window` slots, or a growing cache for full attention.
struct KVCacheState : LayerState {
  ops::KVCache cache;
  int64_t bytes() const override { return cache.bytes(); }
  int64_t bytes_after(int64_t more_tokens) const override { return cache.bytes_after(more_tokens); }
  // k, v, positions and seen; a growing cache may be loaded with any number of slots (capacity is the
  // model's, never read from a file).
  void fields(StateFields& f) override;
};

class AttentionLayerImpl : public Mixer {
 public:
  explicit AttentionLayerImpl(const AttentionLayerOptions& options);

  // x: (B, N, hidden) -> (B, N, hidden). Training and full-sequence evaluation. A sliding layer uses
  // ctx.window when it holds one (stochastic window training), else its own window.
  at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) override;

  // Streaming: continues from `state` (positions state.seen ...); any chunk length.
  at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) override;
  std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const override;
  // Projections, q/k norms, RoPE, the cache and o_proj on raw buffers (nn/attention_decode.cpp).
  bool decode_token(const float* xn, LayerState& state, float* out) override;
  bool decode_token(const at::BFloat16* xn, LayerState& state, at::BFloat16* out) override;

  // Window used at inference (streaming and full forward without a per-step override); 0 for full
  // attention, which has no window to change (set_window leaves it full).
  int64_t window() const override { return options_.window; }
  void set_window(int64_t window) override {
    if (is_sliding()) options_.window = window;
  }
  bool is_sliding() const { return options_.window > 0; }

  // SWAX init: small_init for q, k, v and wang_init for o (specs/swax.md §2.5). Biases and the q/k norms
  // (Llama, Gemma-3: loaded from checkpoints) keep their values.
  void reset_parameters(int64_t num_blocks) override;
  // Keys and values of min(window, context) tokens (every token without a window), per kv head.
  int64_t state_values(int64_t context) const override;
  // q kᵀ and p v over the keys each query sees (ops::attention_forward_flops).
  double mixing_flops_per_token(int64_t context) const override;
  const AttentionLayerOptions& options() const { return options_; }

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  RMSNorm q_norm{nullptr}, k_norm{nullptr};

 private:
  // Projects and rotates: returns q (B, Hq, N, D), k, v (B, Hkv, N, D).
  std::tuple<at::Tensor, at::Tensor, at::Tensor> project(const at::Tensor& x, const at::Tensor& positions);
  at::Tensor output(const at::Tensor& attn);  // (B, Hq, N, D) -> (B, N, hidden)
  ops::AttentionOptions attention_options(int64_t window) const;
  template <typename T>
  bool decode_token_typed(const T* xn, LayerState& state, T* out);

  AttentionLayerOptions options_;
  at::Tensor inv_freq_;  // fp64 (D/2), not a parameter
};
TORCH_MODULE(AttentionLayer);

}  // namespace swarmt::nn
