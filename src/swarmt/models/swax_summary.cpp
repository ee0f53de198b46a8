#include "swarmt/models/swax_summary.h"

#include <algorithm>

#include "swarmt/models/swax_model.h"
#include "swarmt/ops/flops.h"
#include "swarmt/ops/recurrent_flops.h"

namespace swarmt::models {

namespace {

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

// Per-sequence inference state of one block at `context` tokens, in fp32 values:
//   S: a ring of min(w, context) keys and values per kv head;  A: every key and value;
//   M: C (Dqk x Dv), n (Dqk) and m per head (plus the conv tail of d channels, if any);  G: S (Dk x Dv) per head plus the conv tails (kernel - 1
//   past inputs of the q, k and v projections).
int64_t state_values(const SwaxConfig& c, char kind, int64_t context) {
  const int64_t kv = 2 * c.num_key_value_heads * c.head_dim;
  switch (kind) {
    case 'S': return kv * std::min(c.sliding_window, context);
    case 'A': return kv * context;
    case 'M':
      return c.mlstm_num_heads * (c.mlstm_qk_head_dim * c.mlstm_v_head_dim + c.mlstm_qk_head_dim + 1) +
             std::max<int64_t>(0, c.mlstm_conv_size - 1) * c.hidden_size;
    case 'G':
      return c.gdn_num_heads * c.gdn_head_dim * c.gdn_v_head_dim +
             (c.gdn_conv_size - 1) * c.gdn_num_heads * (2 * c.gdn_head_dim + c.gdn_v_head_dim);
    default: return 0;
  }
}

// Forward FLOPs of the mixer beyond its projections, averaged per token over a sequence of `context`.
double mixer_flops_per_token(const SwaxConfig& c, char kind, int64_t context) {
  const double n = static_cast<double>(context);
  switch (kind) {
    case 'S': return ops::attention_forward_flops(1, c.num_attention_heads, context, context, c.head_dim, c.sliding_window) / n;
    case 'A': return ops::attention_forward_flops(1, c.num_attention_heads, context, context, c.head_dim, 0) / n;
    case 'M':
      return ops::mlstm_chunkwise_flops(1, c.mlstm_num_heads, context, c.mlstm_qk_head_dim, c.mlstm_v_head_dim,
                                        c.mlstm_chunk_size).forward / n;
    case 'G':
      return ops::gated_delta_chunkwise_flops(1, c.gdn_num_heads, context, c.gdn_head_dim, c.gdn_v_head_dim,
                                              c.gdn_chunk_size).forward / n;
    default: return 0;
  }
}

}  // namespace

SwaxSummary summarize_swax(const SwaxConfig& config, int64_t context) {
  SwaxSummary s;
  s.context = context;
  for (char kind : config.layer_pattern) s.kinds[kind].count += 1;
  for (auto& [kind, k] : s.kinds) {
    {
      nn::HybridBlock block(swax_block_options(config, kind));  // built, counted, freed
      k.parameters_per_block = count_parameters(block);
    }
    k.state_bytes_per_block = 4 * state_values(config, kind, context);
    // Every parameter of a block is a weight used once per token (2 FLOPs per multiply-add); norms and
    // gate biases are negligible and counted the same way.
    k.flops_per_token = 2.0 * static_cast<double>(k.parameters_per_block) + mixer_flops_per_token(config, kind, context);
  }
  s.embedding_parameters = config.vocab_size * config.hidden_size;
  s.head_parameters = (config.tie_word_embeddings ? 0 : config.vocab_size * config.hidden_size) + config.hidden_size;
  s.total_parameters = s.embedding_parameters + s.head_parameters;
  s.forward_flops_per_token = 2.0 * static_cast<double>(config.vocab_size * config.hidden_size);  // the head GEMM
  for (const auto& [kind, k] : s.kinds) {
    s.total_parameters += k.count * k.parameters_per_block;
    s.forward_flops_per_token += static_cast<double>(k.count) * k.flops_per_token;
    s.state_bytes += k.count * k.state_bytes_per_block;
  }
  return s;
}

Json SwaxSummary::to_json() const {
  Json blocks = Json::object();
  for (const auto& [kind, k] : kinds)
    blocks[std::string(1, kind)] = {{"count", k.count},
                                    {"parameters_per_block", k.parameters_per_block},
                                    {"state_bytes_per_block", k.state_bytes_per_block},
                                    {"forward_flops_per_token", k.flops_per_token}};
  const double p = static_cast<double>(total_parameters);
  return {{"total_parameters", total_parameters},
          {"embedding_parameters", embedding_parameters},
          {"head_parameters", head_parameters},
          {"blocks", blocks},
          {"weights_bytes", {{"float32", 4 * total_parameters}, {"bfloat16", 2 * total_parameters}}},
          // fp32 master weights + gradients + AdamW's two moments; activations not included.
          {"training_state_bytes_adamw_fp32", static_cast<int64_t>(16 * p)},
          {"context", context},
          {"inference_state_bytes_per_sequence", state_bytes},
          {"forward_flops_per_token", forward_flops_per_token},
          // Training is forward + backward (about twice the forward).
          {"training_flops_per_token", 3 * forward_flops_per_token}};
}

}  // namespace swarmt::models
