#include "swarmt/models/swax_config.h"

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/models/swax_mixers.h"

namespace swarmt::models {

int64_t SwaxConfig::resolved_intermediate_size() const {
  if (intermediate_size > 0) return intermediate_size;
  int64_t raw = static_cast<int64_t>(hidden_size * 8 / 3.0);
  return (raw + 63) / 64 * 64;
}

SwaxConfig SwaxConfig::from_json(const Json& json, const std::string& source) {
  JsonView v(json, source);
  v.reject_unknown_keys({"model_type", "architectures", "vocab_size", "hidden_size", "layer_pattern",
                         "num_hidden_layers", "intermediate_size", "rms_norm_eps", "logit_soft_cap",
                         "tie_word_embeddings", "num_attention_heads", "num_key_value_heads", "head_dim",
                         "rope_theta", "sliding_window", "mlstm_num_heads", "mlstm_qk_head_dim",
                         "mlstm_v_head_dim", "mlstm_gate_soft_cap", "mlstm_chunk_size", "mlstm_eps",
                         "mlstm_norm_eps", "mlstm_conv_size", "gdn_num_heads", "gdn_head_dim", "gdn_v_head_dim", "gdn_conv_size",
                         "gdn_allow_neg_eigval", "gdn_chunk_size", "gdn_norm_eps", "bos_token_id",
                         "eos_token_id", "pad_token_id", "torch_dtype", "swarmt_version"});
  if (v.has("model_type")) {
    std::string type = v.get_string("model_type");
    SWARMT_CHECK_INPUT(type == "swax", v.describe("model_type"), " must be \"swax\" (got \"", type, "\")");
  }
  const int64_t kBig = int64_t{1} << 24;
  SwaxConfig c;
  c.vocab_size = v.get_int_in("vocab_size", c.vocab_size, 2, kBig);
  c.hidden_size = v.get_int_in("hidden_size", c.hidden_size, 1, kBig);

  std::string pattern = v.get_string("layer_pattern", c.layer_pattern);
  SWARMT_CHECK_INPUT(!pattern.empty(), v.describe("layer_pattern"), " must not be empty");
  for (char ch : pattern)
    SWARMT_CHECK_INPUT(find_swax_mixer_kind(ch) != nullptr, v.describe("layer_pattern"), " may only contain ",
                       describe_swax_mixer_kinds(), "; got '", ch, "' in \"", pattern, "\"");
  if (v.has("num_hidden_layers")) {
    int64_t layers = v.get_int_in("num_hidden_layers", 1, 4096);
    std::string expanded;
    while (static_cast<int64_t>(expanded.size()) < layers) expanded += pattern;
    SWARMT_CHECK_INPUT(static_cast<int64_t>(pattern.size()) <= layers, v.describe("layer_pattern"), " (",
                       pattern.size(), " letters) is longer than num_hidden_layers (", layers, ")");
    SWARMT_CHECK_INPUT(layers % static_cast<int64_t>(pattern.size()) == 0, v.describe("num_hidden_layers"), " (",
                       layers, ") must be a multiple of the layer_pattern length (", pattern.size(), ")");
    pattern = expanded.substr(0, layers);
  }
  c.layer_pattern = pattern;
  c.intermediate_size = v.get_int_in("intermediate_size", 0, 0, kBig);
  c.rms_norm_eps = v.get_number("rms_norm_eps", c.rms_norm_eps);
  SWARMT_CHECK_INPUT(c.rms_norm_eps > 0, v.describe("rms_norm_eps"), " must be positive");
  c.logit_soft_cap = v.get_number("logit_soft_cap", c.logit_soft_cap);
  SWARMT_CHECK_INPUT(c.logit_soft_cap >= 0, v.describe("logit_soft_cap"), " must be >= 0 (0 disables it)");
  c.tie_word_embeddings = v.get_bool("tie_word_embeddings", c.tie_word_embeddings);

  c.num_attention_heads = v.get_int_in("num_attention_heads", c.num_attention_heads, 1, 4096);
  c.num_key_value_heads = v.get_int_in("num_key_value_heads", c.num_attention_heads, 1, 4096);
  SWARMT_CHECK_INPUT(c.num_attention_heads % c.num_key_value_heads == 0, v.describe("num_key_value_heads"), " (",
                     c.num_key_value_heads, ") must divide num_attention_heads (", c.num_attention_heads, ")");
  c.head_dim = v.get_int_in("head_dim", c.hidden_size / c.num_attention_heads, 2, 4096);
  SWARMT_CHECK_INPUT(c.head_dim % 2 == 0, v.describe("head_dim"), " must be even (RoPE rotates pairs)");
  c.rope_theta = v.get_number("rope_theta", c.rope_theta);
  SWARMT_CHECK_INPUT(c.rope_theta > 1.0, v.describe("rope_theta"), " must be > 1");
  c.sliding_window = v.get_int_in("sliding_window", c.sliding_window, 1, kMaxAttentionWindow);

  c.mlstm_num_heads = v.get_int_in("mlstm_num_heads", c.mlstm_num_heads, 1, 4096);
  c.mlstm_qk_head_dim = v.get_int_in("mlstm_qk_head_dim", std::max<int64_t>(1, c.hidden_size / 2 / c.mlstm_num_heads), 1, kBig);
  c.mlstm_v_head_dim = v.get_int_in("mlstm_v_head_dim", std::max<int64_t>(1, c.hidden_size / c.mlstm_num_heads), 1, kBig);
  c.mlstm_gate_soft_cap = v.get_number("mlstm_gate_soft_cap", c.mlstm_gate_soft_cap);
  c.mlstm_chunk_size = v.get_int_in("mlstm_chunk_size", c.mlstm_chunk_size, 1, 4096);
  c.mlstm_eps = v.get_number("mlstm_eps", c.mlstm_eps);
  c.mlstm_norm_eps = v.get_number("mlstm_norm_eps", c.mlstm_norm_eps);
  c.mlstm_conv_size = v.get_int_in("mlstm_conv_size", c.mlstm_conv_size, 0, 64);

  c.gdn_num_heads = v.get_int_in("gdn_num_heads", c.gdn_num_heads, 1, 4096);
  c.gdn_head_dim = v.get_int_in("gdn_head_dim", c.gdn_head_dim, 1, kBig);
  c.gdn_v_head_dim = v.get_int_in("gdn_v_head_dim", 2 * c.gdn_head_dim, 1, kBig);
  c.gdn_conv_size = v.get_int_in("gdn_conv_size", c.gdn_conv_size, 1, 64);
  c.gdn_allow_neg_eigval = v.get_bool("gdn_allow_neg_eigval", c.gdn_allow_neg_eigval);
  c.gdn_chunk_size = v.get_int_in("gdn_chunk_size", c.gdn_chunk_size, 1, 4096);
  c.gdn_norm_eps = v.get_number("gdn_norm_eps", c.gdn_norm_eps);

  // The defaults are the byte tokenizer's special ids; a smaller vocabulary has none unless given.
  auto default_id = [&](int64_t id) { return id < c.vocab_size ? id : int64_t{-1}; };
  c.bos_token_id = v.get_int_in("bos_token_id", default_id(c.bos_token_id), -1, c.vocab_size - 1);
  c.eos_token_id = v.get_int_in("eos_token_id", default_id(c.eos_token_id), -1, c.vocab_size - 1);
  c.pad_token_id = v.get_int_in("pad_token_id", default_id(c.pad_token_id), -1, c.vocab_size - 1);
  c.torch_dtype = v.get_string("torch_dtype", c.torch_dtype);
  SWARMT_CHECK_INPUT(c.torch_dtype == "float32" || c.torch_dtype == "bfloat16" || c.torch_dtype == "float64",
                     v.describe("torch_dtype"), " must be float32, bfloat16 or float64 (got \"", c.torch_dtype, "\")");
  return c;
}

Json SwaxConfig::to_json() const {
  return Json{{"model_type", "swax"},
              {"architectures", {"SwaxForCausalLM"}},
              {"vocab_size", vocab_size},
              {"hidden_size", hidden_size},
              {"num_hidden_layers", num_hidden_layers()},
              {"layer_pattern", layer_pattern},
              {"intermediate_size", resolved_intermediate_size()},
              {"rms_norm_eps", rms_norm_eps},
              {"logit_soft_cap", logit_soft_cap},
              {"tie_word_embeddings", tie_word_embeddings},
              {"num_attention_heads", num_attention_heads},
              {"num_key_value_heads", num_key_value_heads},
              {"head_dim", head_dim},
              {"rope_theta", rope_theta},
              {"sliding_window", sliding_window},
              {"mlstm_num_heads", mlstm_num_heads},
              {"mlstm_qk_head_dim", mlstm_qk_head_dim},
              {"mlstm_v_head_dim", mlstm_v_head_dim},
              {"mlstm_gate_soft_cap", mlstm_gate_soft_cap},
              {"mlstm_chunk_size", mlstm_chunk_size},
              {"mlstm_eps", mlstm_eps},
              {"mlstm_norm_eps", mlstm_norm_eps},
              {"mlstm_conv_size", mlstm_conv_size},
              {"gdn_num_heads", gdn_num_heads},
              {"gdn_head_dim", gdn_head_dim},
              {"gdn_v_head_dim", gdn_v_head_dim},
              {"gdn_conv_size", gdn_conv_size},
              {"gdn_allow_neg_eigval", gdn_allow_neg_eigval},
              {"gdn_chunk_size", gdn_chunk_size},
              {"gdn_norm_eps", gdn_norm_eps},
              {"bos_token_id", bos_token_id},
              {"eos_token_id", eos_token_id},
              {"pad_token_id", pad_token_id},
              {"torch_dtype", torch_dtype}};
}

}  // namespace swarmt::models
