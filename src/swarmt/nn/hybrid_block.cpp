#include "swarmt/nn/hybrid_block.h"

#include "swarmt/core/error.h"
#include "swarmt/nn/init.h"

namespace swarmt::nn {

HybridBlock::HybridBlock(const HybridBlockOptions& o) : kind_(o.kind), options_(o) {
  input_layernorm = register_module("input_layernorm", RMSNorm(o.hidden_size, o.norm_eps));
  switch (kind_) {
    case 'S':
    case 'A': {
      AttentionLayerOptions a = o.attention;
      if (kind_ == 'A') a.window = 0;
      SWARMT_CHECK(kind_ == 'A' || a.window > 0, "a sliding-window block needs a window");
      attention = register_module("self_attn", AttentionLayer(a));
      break;
    }
    case 'M':
      mlstm = register_module("mlstm", MLSTMLayer(o.mlstm));
      break;
    case 'G':
      gdn = register_module("gdn", GatedDeltaNetLayer(o.gdn));
      break;
    default:
      throw_internal_error("unknown block kind '", kind_, "'");
  }
  post_attention_layernorm = register_module("post_attention_layernorm", RMSNorm(o.hidden_size, o.norm_eps));
  mlp = register_module("mlp", GatedMLP(o.hidden_size, o.intermediate_size, Activation::SiLU));
}

void HybridBlock::reset_parameters(int64_t num_blocks) {
  at::NoGradGuard no_grad;
  const int64_t d = options_.hidden_size;
  if (attention) {
    small_init_(attention->q_proj->weight, d);
    small_init_(attention->k_proj->weight, d);
    small_init_(attention->v_proj->weight, d);
    wang_init_(attention->o_proj->weight, d, num_blocks);
  }
  if (mlstm) mlstm->reset_parameters(num_blocks);
  if (gdn) gdn->reset_parameters();
  // SwiGLU: small_init for gate/up (not the zero init HF's "gate" substring test would give
  // proj_up_gate, specs/swax.md §2.5), wang_init for the down projection.
  small_init_(mlp->gate_proj->weight, d);
  small_init_(mlp->up_proj->weight, d);
  wang_init_(mlp->down_proj->weight, options_.intermediate_size, num_blocks);
  input_layernorm->weight.fill_(1.0);
  post_attention_layernorm->weight.fill_(1.0);
}

at::Tensor HybridBlock::mix(const at::Tensor& h, const LayerContext* ctx, LayerState* state) {
  if (attention) return state ? attention->forward_stateful(h, *state) : attention->forward(h, *ctx);
  if (mlstm) return state ? mlstm->forward_stateful(h, *state) : mlstm->forward(h, *ctx);
  return state ? gdn->forward_stateful(h, *state) : gdn->forward(h, *ctx);
}

at::Tensor HybridBlock::forward(const at::Tensor& x, const LayerContext& ctx) {
  auto h = x + mix(input_layernorm->forward(x), &ctx, nullptr);
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

at::Tensor HybridBlock::forward_stateful(const at::Tensor& x, LayerState& state) {
  auto h = x + mix(input_layernorm->forward(x), nullptr, &state);
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

std::unique_ptr<LayerState> HybridBlock::new_state(int64_t batch, at::ScalarType dtype, at::Device device) const {
  if (attention) return attention->new_state(batch, dtype, device);
  if (mlstm) return mlstm->new_state(batch, dtype, device);
  return gdn->new_state(batch, dtype, device);
}

}  // namespace swarmt::nn
