#include "swarmt/models/hf_config.h"

#include <cmath>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"

namespace swarmt::models {

namespace {
constexpr int64_t kMaxDim = int64_t{1} << 24;

// A RoPE base θ (rope_theta and friends): θ_i = θ^(-2i/D) needs θ > 1. Checked here so that the error
// names the field rather than surfacing from the RoPE tables.
double read_rope_base(const JsonView& v, const std::string& key, double fallback) {
  const double base = v.get_number(key, fallback);
  SWARMT_CHECK_INPUT(std::isfinite(base) && base > 1.0, v.describe(key), " must be a number > 1 (got ", base, ")");
  return base;
}

double read_norm_eps(const JsonView& v, const std::string& key, double fallback) {
  const double eps = v.get_number(key, fallback);
  SWARMT_CHECK_INPUT(std::isfinite(eps) && eps >= 0.0, v.describe(key), " must be a number >= 0 (got ", eps, ")");
  return eps;
}

}  // namespace

ops::RopeScaling parse_rope_scaling(const JsonView& parent, const std::string& key) {
  ops::RopeScaling s;
  if (!parent.has(key)) return s;
  JsonView v = parent.object(key);
  std::string type = v.has("rope_type") ? v.get_string("rope_type") : v.get_string("type", "default");
  if (type == "default") return s;
  SWARMT_CHECK_INPUT(type == "linear" || type == "llama3", v.describe("rope_type"), " '", type,
                     "' is not supported (supported: default, linear, llama3)");
  s.type = type;
  s.factor = v.get_number("factor");
  SWARMT_CHECK_INPUT(s.factor > 0, v.describe("factor"), " must be positive");
  if (type == "llama3") {
    s.low_freq_factor = v.get_number("low_freq_factor");
    s.high_freq_factor = v.get_number("high_freq_factor");
    s.original_max_position_embeddings = v.get_int_in("original_max_position_embeddings", 1, kMaxDim);
    SWARMT_CHECK_INPUT(s.high_freq_factor > s.low_freq_factor, v.describe("high_freq_factor"),
                       " must exceed low_freq_factor");
  }
  return s;
}

std::vector<int64_t> parse_token_id_list(const JsonView& view, const std::string& key) {
  if (!view.has(key)) return {};
  const Json& raw = view.raw(key);
  if (raw.is_array()) return view.get_int_list(key);
  return {view.get_int(key)};
}

LlamaConfig LlamaConfig::from_json(const Json& json, const std::string& source) {
  JsonView v(json, source);
  LlamaConfig c;
  c.original = json;
  c.vocab_size = v.get_int_in("vocab_size", 1, kMaxDim);
  c.hidden_size = v.get_int_in("hidden_size", 1, kMaxDim);
  c.intermediate_size = v.get_int_in("intermediate_size", 1, kMaxDim);
  c.num_hidden_layers = v.get_int_in("num_hidden_layers", 1, 4096);
  c.num_attention_heads = v.get_int_in("num_attention_heads", 1, 4096);
  c.num_key_value_heads = v.get_int_in("num_key_value_heads", c.num_attention_heads, 1, 4096);
  SWARMT_CHECK_INPUT(c.num_attention_heads % c.num_key_value_heads == 0, v.describe("num_key_value_heads"), " (",
                     c.num_key_value_heads, ") must divide num_attention_heads (", c.num_attention_heads, ")");
  SWARMT_CHECK_INPUT(v.has("head_dim") || c.hidden_size % c.num_attention_heads == 0, v.describe("hidden_size"),
                     " must be divisible by num_attention_heads when head_dim is not given");
  c.head_dim = v.get_int_in("head_dim", c.hidden_size / c.num_attention_heads, 2, 65536);
  SWARMT_CHECK_INPUT(c.head_dim % 2 == 0, v.describe("head_dim"), " must be even");
  c.hidden_act = v.get_string("hidden_act", c.hidden_act);
  c.rms_norm_eps = read_norm_eps(v, "rms_norm_eps", c.rms_norm_eps);
  c.rope_theta = read_rope_base(v, "rope_theta", c.rope_theta);
  c.rope_scaling = parse_rope_scaling(v, "rope_scaling");
  c.tie_word_embeddings = v.get_bool("tie_word_embeddings", false);
  c.attention_bias = v.get_bool("attention_bias", false);
  c.mlp_bias = v.get_bool("mlp_bias", false);
  c.max_position_embeddings = v.get_int_in("max_position_embeddings", c.max_position_embeddings, 1, int64_t{1} << 40);
  c.eos_token_ids = parse_token_id_list(v, "eos_token_id");
  c.bos_token_id = v.has("bos_token_id") ? v.get_int("bos_token_id") : -1;
  c.torch_dtype = v.get_string("torch_dtype", v.get_string("dtype", "float32"));
  return c;
}

Gemma3Config Gemma3Config::from_json(const Json& json, const std::string& source) {
  JsonView root(json, source);
  // Multimodal checkpoints keep the text model under text_config; the 1B is text-only.
  const Json& text = root.has("text_config") ? root.raw("text_config") : json;
  JsonView v(text, source, root.has("text_config") ? "text_config." : "");
  Gemma3Config c;
  c.original = json;
  c.vocab_size = v.get_int_in("vocab_size", 1, kMaxDim);
  c.hidden_size = v.get_int_in("hidden_size", 1, kMaxDim);
  c.intermediate_size = v.get_int_in("intermediate_size", 1, kMaxDim);
  c.num_hidden_layers = v.get_int_in("num_hidden_layers", 1, 4096);
  c.num_attention_heads = v.get_int_in("num_attention_heads", 1, 4096);
  c.num_key_value_heads = v.get_int_in("num_key_value_heads", c.num_attention_heads, 1, 4096);
  SWARMT_CHECK_INPUT(c.num_attention_heads % c.num_key_value_heads == 0, v.describe("num_key_value_heads"),
                     " must divide num_attention_heads");
  c.head_dim = v.get_int_in("head_dim", c.head_dim, 2, 65536);
  c.hidden_activation = v.get_string("hidden_activation", v.get_string("hidden_act", c.hidden_activation));
  c.rms_norm_eps = read_norm_eps(v, "rms_norm_eps", c.rms_norm_eps);
  c.query_pre_attn_scalar = v.get_number("query_pre_attn_scalar", static_cast<double>(c.head_dim));
  SWARMT_CHECK_INPUT(c.query_pre_attn_scalar > 0, v.describe("query_pre_attn_scalar"), " must be positive");
  c.sliding_window = v.get_int_in("sliding_window", c.sliding_window, 1, kMaxAttentionWindow);
  if (v.has("attn_logit_softcapping")) c.attn_logit_softcapping = v.get_number("attn_logit_softcapping");
  if (v.has("final_logit_softcapping")) c.final_logit_softcapping = v.get_number("final_logit_softcapping");
  c.tie_word_embeddings = root.get_bool("tie_word_embeddings", v.get_bool("tie_word_embeddings", true));

  // Layer types: explicit list (new schema) or the repeating pattern (old schema, default 6: five
  // sliding layers then one full one).
  if (v.has("layer_types")) {
    auto types = v.get_string_list("layer_types");
    SWARMT_CHECK_INPUT(static_cast<int64_t>(types.size()) == c.num_hidden_layers, v.describe("layer_types"), " has ",
                       types.size(), " entries for ", c.num_hidden_layers, " layers");
    for (size_t i = 0; i < types.size(); ++i) {
      SWARMT_CHECK_INPUT(types[i] == "sliding_attention" || types[i] == "full_attention", v.describe("layer_types"), "[",
                         i, "] must be \"sliding_attention\" or \"full_attention\" (got \"", types[i], "\")");
      c.sliding.push_back(types[i] == "sliding_attention");
    }
  } else {
    int64_t pattern = v.get_int_in("sliding_window_pattern", v.get_int_in("_sliding_window_pattern", 6, 1, 4096), 1, 4096);
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) c.sliding.push_back((i + 1) % pattern != 0);
  }

  // RoPE bases: rope_parameters (new) or rope_theta / rope_local_base_freq / rope_scaling (old).
  c.rope_theta_global = read_rope_base(v, "rope_theta", c.rope_theta_global);
  c.rope_theta_local = read_rope_base(v, "rope_local_base_freq", c.rope_theta_local);
  c.rope_scaling = parse_rope_scaling(v, "rope_scaling");
  if (v.has("rope_parameters")) {
    JsonView rp = v.object("rope_parameters");
    if (rp.has("full_attention")) {
      JsonView full = rp.object("full_attention");
      c.rope_theta_global = read_rope_base(full, "rope_theta", c.rope_theta_global);
      c.rope_scaling = parse_rope_scaling(rp, "full_attention");
    }
    if (rp.has("sliding_attention"))
      c.rope_theta_local = read_rope_base(rp.object("sliding_attention"), "rope_theta", c.rope_theta_local);
  }
  c.eos_token_ids = parse_token_id_list(v, "eos_token_id");
  if (c.eos_token_ids.empty()) c.eos_token_ids = parse_token_id_list(root, "eos_token_id");
  c.bos_token_id = v.get_int("bos_token_id", c.bos_token_id);
  c.torch_dtype = root.get_string("torch_dtype", root.get_string("dtype", v.get_string("torch_dtype", c.torch_dtype)));
  return c;
}

}  // namespace swarmt::models
