#include "swarmt/nn/attention_layer.h"

#include <algorithm>

#include "swarmt/core/error.h"
#include "swarmt/nn/init.h"
#include "swarmt/nn/linear.h"
#include "swarmt/ops/flops.h"

namespace swarmt::nn {

AttentionLayerImpl::AttentionLayerImpl(const AttentionLayerOptions& o) : options_(o) {
  SWARMT_CHECK(o.num_heads > 0 && o.num_kv_heads > 0 && o.num_heads % o.num_kv_heads == 0 && o.head_dim > 0);
  q_proj = register_module("q_proj", linear_layer(o.hidden_size, o.num_heads * o.head_dim, o.qkv_bias));
  k_proj = register_module("k_proj", linear_layer(o.hidden_size, o.num_kv_heads * o.head_dim, o.qkv_bias));
  v_proj = register_module("v_proj", linear_layer(o.hidden_size, o.num_kv_heads * o.head_dim, o.qkv_bias));
  o_proj = register_module("o_proj", linear_layer(o.num_heads * o.head_dim, o.hidden_size, o.o_bias));
  if (o.qk_norm) {
    q_norm = register_module("q_norm", RMSNorm(o.head_dim, o.qk_norm_eps, /*cast_before_weight=*/false));
    k_norm = register_module("k_norm", RMSNorm(o.head_dim, o.qk_norm_eps, /*cast_before_weight=*/false));
  }
  inv_freq_ = ops::rope_inv_freq(o.head_dim, o.rope_theta, o.rope_scaling);
}

ops::AttentionOptions AttentionLayerImpl::attention_options(int64_t window) const {
  ops::AttentionOptions a;
  a.window = window;
  a.scale = options_.scale;
  a.softcap = options_.softcap;
  return a;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> AttentionLayerImpl::project(const at::Tensor& x,
                                                                           const at::Tensor& positions) {
  const int64_t B = x.size(0), N = x.size(1), D = options_.head_dim;
  auto qkv = linear_group(x, q_proj, k_proj, v_proj);  // one pass when decoding
  auto q = qkv[0].view({B, N, options_.num_heads, D}).transpose(1, 2);
  auto k = qkv[1].view({B, N, options_.num_kv_heads, D}).transpose(1, 2);
  auto v = qkv[2].view({B, N, options_.num_kv_heads, D}).transpose(1, 2).contiguous();
  if (options_.qk_norm) {
    q = q_norm->forward(q);
    k = k_norm->forward(k);
  }
  auto [cos, sin] = ops::rope_cos_sin(positions.to(x.device()), inv_freq_.to(x.device()), x.scalar_type());
  q = ops::apply_rope(q, cos, sin).contiguous();
  k = ops::apply_rope(k, cos, sin).contiguous();
  return {q, k, v};
}

at::Tensor AttentionLayerImpl::output(const at::Tensor& attn) {
  const int64_t B = attn.size(0), N = attn.size(2);
  return linear(o_proj, attn.transpose(1, 2).reshape({B, N, options_.num_heads * options_.head_dim}));
}

at::Tensor AttentionLayerImpl::forward(const at::Tensor& x, const LayerContext& ctx) {
  auto [q, k, v] = project(x, ctx.positions);
  // The per-step window (stochastic window training) applies to sliding layers only.
  const int64_t window = is_sliding() && ctx.window ? *ctx.window : options_.window;
  return output(ops::causal_attention(q, k, v, attention_options(window), ctx.doc_ids));
}

void AttentionLayerImpl::reset_parameters(int64_t num_blocks) {
  at::NoGradGuard no_grad;
  const int64_t d = options_.hidden_size;
  small_init_(q_proj->weight, d);
  small_init_(k_proj->weight, d);
  small_init_(v_proj->weight, d);
  wang_init_(o_proj->weight, d, num_blocks);
}

int64_t AttentionLayerImpl::state_values(int64_t context) const {
  const int64_t per_token = 2 * options_.num_kv_heads * options_.head_dim;  // a key and a value per kv head
  return per_token * (is_sliding() ? std::min(options_.window, context) : context);
}

double AttentionLayerImpl::mixing_flops_per_token(int64_t context) const {
  return ops::attention_forward_flops(1, options_.num_heads, context, context, options_.head_dim, options_.window) /
         static_cast<double>(context);
}

void KVCacheState::fields(StateFields& f) {
  const int64_t growable = cache.capacity == 0 ? 2 : -1;
  f.tensor("k", cache.k, growable);
  f.tensor("v", cache.v, growable);
  f.tensor("positions", cache.positions, growable >= 0 ? 0 : -1);
  f.integer("seen", cache.seen);
  if (!f.loading()) return;
  // A file that passed its checksum was written by swarmt; these guard the kernels against one that
  // was not (they index the cache by these numbers).
  const int64_t slots = cache.k.size(2);
  SWARMT_CHECK_INPUT(cache.v.sizes() == cache.k.sizes() && cache.positions.size(0) == slots, f.where(),
                     ": the KV cache's keys ", cache.k.sizes(), ", values ", cache.v.sizes(), " and positions ",
                     cache.positions.sizes(), " do not agree");
  SWARMT_CHECK_INPUT(cache.seen >= 0 && (cache.capacity > 0 || cache.seen <= slots), f.where(),
                     ": the KV cache has seen ", cache.seen, " tokens but holds ", slots, " slots");
  const auto positions = cache.positions.cpu();
  SWARMT_CHECK_INPUT(positions.numel() == 0 ||
                         (positions.min().item<int64_t>() >= -1 && positions.max().item<int64_t>() < cache.seen),
                     f.where(), ": the KV cache holds positions outside -1..", cache.seen - 1);
}

std::unique_ptr<LayerState> AttentionLayerImpl::new_state(int64_t batch, at::ScalarType dtype,
                                                          at::Device device) const {
  auto state = std::make_unique<KVCacheState>();
  state->cache = ops::make_kv_cache(batch, options_.num_kv_heads, options_.head_dim,
                                    /*capacity=*/options_.window, dtype, device);
  return state;
}

at::Tensor AttentionLayerImpl::forward_stateful(const at::Tensor& x, LayerState& state) {
  auto* kv = dynamic_cast<KVCacheState*>(&state);
  SWARMT_CHECK(kv != nullptr, "attention layer got a state of another layer type");
  const int64_t n = x.size(1);
  auto positions = at::arange(kv->cache.seen, kv->cache.seen + n, at::TensorOptions().dtype(at::kLong));
  auto [q, k, v] = project(x, positions);
  return output(ops::attend_with_cache(kv->cache, q, k, v, attention_options(options_.window)));
}

}  // namespace swarmt::nn
