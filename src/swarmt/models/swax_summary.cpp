#include "swarmt/models/swax_summary.h"

#include "swarmt/models/swax_mixers.h"

namespace swarmt::models {

namespace {

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace

SwaxSummary summarize_swax(const SwaxConfig& config, int64_t context) {
  SwaxSummary s;
  s.context = context;
  for (char kind : config.layer_pattern) s.kinds[kind].count += 1;
  for (auto& [kind, k] : s.kinds) {
    auto block = make_swax_block(config, kind);  // built, counted, freed
    k.parameters_per_block = count_parameters(*block);
    // Inference state per sequence in fp32 values, from the mixer's own shapes (nn::Mixer::state_values).
    k.state_bytes_per_block = 4 * block->mixer->state_values(context);
    // Every parameter of a block is a weight used once per token (2 FLOPs per multiply-add); norms and
    // gate biases are negligible and counted the same way. The mixer adds what its projections do not
    // count: attention scores or the recurrent cell.
    k.flops_per_token =
        2.0 * static_cast<double>(k.parameters_per_block) + block->mixer->mixing_flops_per_token(context);
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
