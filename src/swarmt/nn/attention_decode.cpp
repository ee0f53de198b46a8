// The attention layer's decode step on raw buffers (Mixer::decode_token): forward_stateful for one token
// of one sequence, value for value, without a tensor per op. Each step rounds where the ATen path
// rounds, in the model's dtype T:
//   q, k, v   = T(x Wᵀ) from one pass over the three weights (fp32 sums, ops::matvec_group_rows)
//   [q/k norm]  per head, ops::rms_norm_row as RMSNorm rounds
//   RoPE        tables of the position cast to T, each product and sum rounded to T
//   attention   ops::attend_token_with_cache (fp32), rounded to T
//   out       = T(attn W_oᵀ)
#include <vector>

#include "swarmt/nn/attention_layer.h"
#include "swarmt/nn/decode_buffers.h"
#include "swarmt/ops/matvec.h"

namespace swarmt::nn {

template <typename T>
bool AttentionLayerImpl::decode_token_typed(const T* xn, LayerState& state, T* out) {
  auto* kv = dynamic_cast<KVCacheState*>(&state);
  if (kv == nullptr || options_.qkv_bias || options_.o_bias) return false;
  for (const auto* w : {&q_proj->weight, &k_proj->weight, &v_proj->weight, &o_proj->weight})
    if (!decode::readable_as<T>(*w)) return false;
  if (options_.qk_norm && (!decode::norm_readable(q_norm) || !decode::norm_readable(k_norm))) return false;
  if (!inv_freq_.device().is_cpu() || inv_freq_.scalar_type() != at::kDouble || !inv_freq_.is_contiguous()) return false;

  const int64_t hidden = options_.hidden_size, d = options_.head_dim;
  const int64_t q_width = options_.num_heads * d, kv_width = options_.num_kv_heads * d;
  const int64_t half = inv_freq_.numel(), position = kv->cache.seen;
  thread_local std::vector<float> f32;
  thread_local std::vector<T> typed;
  float* products = decode::scratch(f32, q_width + 2 * kv_width + q_width + 2 * half + hidden);
  float* attended = products + q_width + 2 * kv_width;
  float* cos = attended + q_width;
  float* sin = cos + half;
  float* projected = sin + half;
  T* q = decode::scratch(typed, q_width + 2 * kv_width + q_width);
  T* k = q + q_width;
  T* v = k + kv_width;
  T* attended_t = v + kv_width;

  ops::matvec_group_rows({q_proj->weight.data_ptr<T>(), k_proj->weight.data_ptr<T>(), v_proj->weight.data_ptr<T>()},
                         {q_width, kv_width, kv_width}, hidden, xn, 1, products);
  for (int64_t i = 0; i < q_width + 2 * kv_width; ++i) q[i] = static_cast<T>(products[i]);
  if (options_.qk_norm) {
    decode::norm_rows(q_norm, q, options_.num_heads, d, q);
    decode::norm_rows(k_norm, k, options_.num_kv_heads, d, k);
  }
  ops::rope_table_row<T>(position, inv_freq_.data_ptr<double>(), half, cos, sin);
  for (int64_t h = 0; h < options_.num_heads; ++h) ops::rope_rotate_row(q + h * d, d, half, cos, sin, q + h * d);
  for (int64_t h = 0; h < options_.num_kv_heads; ++h) ops::rope_rotate_row(k + h * d, d, half, cos, sin, k + h * d);

  if (!ops::attend_token_with_cache<T>(kv->cache, q, options_.num_heads, k, v, attention_options(options_.window),
                                       attended))
    return false;  // the cache is of another kind: forward_stateful handles it (nothing was written)
  for (int64_t i = 0; i < q_width; ++i) attended_t[i] = static_cast<T>(attended[i]);
  ops::matvec_group_rows({o_proj->weight.data_ptr<T>()}, {hidden}, q_width, attended_t, 1, projected);
  for (int64_t i = 0; i < hidden; ++i) out[i] = static_cast<T>(projected[i]);
  return true;
}

bool AttentionLayerImpl::decode_token(const float* xn, LayerState& state, float* out) {
  return decode_token_typed(xn, state, out);
}

bool AttentionLayerImpl::decode_token(const at::BFloat16* xn, LayerState& state, at::BFloat16* out) {
  return decode_token_typed(xn, state, out);
}

}  // namespace swarmt::nn
