// Reading Hugging Face config.json files (Llama and Gemma-3 families), specs/hf-formats.md §2.
// Unknown keys are ignored (HF configs carry many); the fields we use are validated and named in errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/ops/rope.h"

namespace swarmt::models {

struct LlamaConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  std::string hidden_act = "silu";
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  ops::RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  int64_t max_position_embeddings = 2048;
  std::vector<int64_t> eos_token_ids;
  int64_t bos_token_id = -1;
  std::string torch_dtype = "float32";
  Json original;  // the file as read, written back on save (so unknown keys survive a round trip)

  static LlamaConfig from_json(const Json& json, const std::string& source);
};

struct Gemma3Config {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 256;
  std::string hidden_activation = "gelu_pytorch_tanh";
  double rms_norm_eps = 1e-6;
  double query_pre_attn_scalar = 256;
  int64_t sliding_window = 512;
  std::vector<bool> sliding;           // per layer: sliding_attention (true) or full_attention
  double rope_theta_global = 1e6;      // full_attention layers
  double rope_theta_local = 1e4;       // sliding_attention layers
  ops::RopeScaling rope_scaling;       // applies to full_attention layers only
  double attn_logit_softcapping = 0;   // 0: none
  double final_logit_softcapping = 0;
  bool tie_word_embeddings = true;
  std::vector<int64_t> eos_token_ids;
  int64_t bos_token_id = 2;
  std::string torch_dtype = "bfloat16";
  Json original;

  // Accepts both schemas: transformers <= 4.52 (rope_theta, rope_local_base_freq,
  // sliding_window_pattern) and >= 4.53 (layer_types, rope_parameters).
  static Gemma3Config from_json(const Json& json, const std::string& source);
};

// rope_scaling object (or null) -> RopeScaling; accepts "type" or "rope_type".
ops::RopeScaling parse_rope_scaling(const JsonView& parent, const std::string& key);

// eos_token_id as an integer or a list of integers.
std::vector<int64_t> parse_token_id_list(const JsonView& view, const std::string& key);

}  // namespace swarmt::models
