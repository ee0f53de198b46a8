// Fuzzes config.json of every model type: the bytes are the file, parsed once and handed to each config
// parser (SwaxConfig, LlamaConfig, Gemma3Config). Only the config structs are built, never a model, so
// no input can make the harness allocate weights. For accepted configs it checks the invariants the model
// constructors rely on, and that a SWAX config survives to_json -> from_json unchanged (a model saved by
// swarmt must load again).
#include <string>

#include "fuzz_harness.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/models/hf_config.h"
#include "swarmt/models/swax_config.h"

namespace swarmt::fuzz {
namespace {

// Runs one parser; its BadInput is a normal outcome, anything else reaches the policy in fuzz_main.cpp.
template <typename Parse>
void try_parser(Parse&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    if (std::string(e.what()).find(kFuzzSource) == std::string::npos) throw;
  }
}

void check_swax(const Json& json) {
  const models::SwaxConfig config = models::SwaxConfig::from_json(json, kFuzzSource);
  FUZZ_REQUIRE(config.num_hidden_layers() >= 1, "at least one block");
  FUZZ_REQUIRE(config.num_attention_heads % config.num_key_value_heads == 0, "kv heads divide heads");
  FUZZ_REQUIRE(config.head_dim % 2 == 0, "head_dim is even");
  FUZZ_REQUIRE(config.resolved_intermediate_size() > 0, "intermediate size is positive");
  const Json saved = config.to_json();
  try {
    const models::SwaxConfig reloaded = models::SwaxConfig::from_json(saved, "saved config.json");
    FUZZ_REQUIRE(reloaded.to_json() == saved, "to_json -> from_json -> to_json is the identity: " + saved.dump());
  } catch (const Error& e) {
    report_finding(__FILE__, __LINE__, std::string("a config swarmt saves does not load again: ") + e.what() +
                                           "\nsaved: " + saved.dump());
  }
}

void check_llama(const Json& json) {
  const models::LlamaConfig c = models::LlamaConfig::from_json(json, kFuzzSource);
  FUZZ_REQUIRE(c.num_hidden_layers >= 1 && c.hidden_size >= 1 && c.vocab_size >= 1, "sizes are positive");
  FUZZ_REQUIRE(c.num_key_value_heads >= 1 && c.num_attention_heads % c.num_key_value_heads == 0, "kv heads divide heads");
  FUZZ_REQUIRE(c.head_dim >= 2 && c.head_dim % 2 == 0, "head_dim is even");
  FUZZ_REQUIRE(c.rope_scaling.type == "none" || c.rope_scaling.type == "linear" || c.rope_scaling.type == "llama3",
               "known rope scaling: " + c.rope_scaling.type);
  FUZZ_REQUIRE(c.rope_scaling.factor > 0, "rope scaling factor is positive");
}

void check_gemma3(const Json& json) {
  const models::Gemma3Config c = models::Gemma3Config::from_json(json, kFuzzSource);
  FUZZ_REQUIRE(static_cast<int64_t>(c.sliding.size()) == c.num_hidden_layers, "one attention type per layer");
  FUZZ_REQUIRE(c.num_key_value_heads >= 1 && c.num_attention_heads % c.num_key_value_heads == 0, "kv heads divide heads");
  FUZZ_REQUIRE(c.head_dim >= 2 && c.sliding_window >= 1 && c.query_pre_attn_scalar > 0, "sizes are positive");
}

}  // namespace

void fuzz_one(const uint8_t* data, size_t size) {
  const Json json = parse_json(std::string(reinterpret_cast<const char*>(data), size), kFuzzSource);
  try_parser([&] { check_swax(json); });
  try_parser([&] { check_llama(json); });
  try_parser([&] { check_gemma3(json); });
}

void write_seeds(const SeedWriter& seeds) {
  models::SwaxConfig swax;
  seeds.add("swax_default.json", swax.to_json().dump(2));
  seeds.add("swax_gdn.json", R"({"model_type": "swax", "hidden_size": 64, "layer_pattern": "GS", "num_hidden_layers": 4,
    "num_attention_heads": 2, "num_key_value_heads": 1, "sliding_window": 16, "gdn_num_heads": 2, "gdn_head_dim": 16,
    "intermediate_size": 128, "tie_word_embeddings": true, "torch_dtype": "bfloat16"})");
  seeds.add("swax_transformer.json", R"({"model_type": "swax", "vocab_size": 300, "hidden_size": 48, "layer_pattern": "A",
    "num_hidden_layers": 3, "head_dim": 16, "rope_theta": 500000.0, "logit_soft_cap": 0, "bos_token_id": -1})");
  seeds.add("smollm2_360m.json", R"({ "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 960, "num_hidden_layers": 32, "num_attention_heads": 15, "num_key_value_heads": 5,
  "head_dim": 64, "intermediate_size": 2560, "hidden_act": "silu",
  "max_position_embeddings": 8192, "rope_theta": 100000, "rope_scaling": null, "rope_interleaved": false,
  "rms_norm_eps": 1e-05, "vocab_size": 49152, "tie_word_embeddings": true,
  "attention_bias": false, "attention_dropout": 0.0, "mlp_bias": false, "pretraining_tp": 1,
  "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2, "torch_dtype": "bfloat16",
  "is_llama_config": true, "initializer_range": 0.02, "use_cache": true })");
  seeds.add("llama3_rope.json", R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
  "rope_theta": 500000.0, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
  "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "eos_token_id": [128001, 128008, 128009],
  "bos_token_id": 128000, "dtype": "bfloat16"})");
  seeds.add("gemma3_1b.json", R"({ "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
  "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
  "head_dim": 256, "intermediate_size": 6912, "hidden_activation": "gelu_pytorch_tanh",
  "query_pre_attn_scalar": 256, "sliding_window": 512, "sliding_window_pattern": 6,
  "rope_theta": 1000000, "rope_local_base_freq": 10000, "rope_scaling": null,
  "attn_logit_softcapping": null, "final_logit_softcapping": null,
  "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "vocab_size": 262144,
  "attention_bias": false, "attention_dropout": 0.0, "cache_implementation": "hybrid",
  "bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0, "torch_dtype": "bfloat16" })");
  seeds.add("gemma3_new_schema.json", R"({"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 3,
  "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "intermediate_size": 96, "vocab_size": 512,
  "_sliding_window_pattern": 6, "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
  "rope_parameters": {"full_attention": {"rope_theta": 1000000.0, "rope_type": "linear", "factor": 8.0},
  "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}, "dtype": "float32"})");
  seeds.add("gemma3_text_config.json", R"({"model_type": "gemma3", "tie_word_embeddings": false, "eos_token_id": 1,
  "text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 96,
  "vocab_size": 512, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0}})");
}

}  // namespace swarmt::fuzz
