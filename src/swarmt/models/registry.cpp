#include "swarmt/models/registry.h"

#include "swarmt/core/error.h"
#include "swarmt/models/armt_model.h"
#include "swarmt/models/gemma3.h"
#include "swarmt/models/llama.h"
#include "swarmt/models/swax_model.h"

namespace swarmt::models {

std::string supported_model_types() { return "swax, llama, gemma3_text (Gemma3ForCausalLM), armt (a wrapper with base_config)"; }

namespace {

// config.json's "architectures" names the head on the backbone (LlamaForCausalLM,
// LlamaForSequenceClassification, ...). The same model_type carries other heads with other tensors, so a
// checkpoint that lists architectures must list the causal-LM class we build; an absent list is accepted.
void check_architecture(const JsonView& v, const std::string& expected) {
  if (!v.has("architectures")) return;
  const auto names = v.get_string_list("architectures");
  for (const auto& name : names)
    if (name == expected) return;
  std::string listed;
  for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name;
  throw_input_error(v.describe("architectures"), " [", listed, "] is not supported for model_type '",
                    v.get_string("model_type"), "' (supported: ", expected, ")");
}

}  // namespace

std::shared_ptr<CausalLM> create_model(const Json& config, const std::string& source) {
  JsonView v(config, source);
  const std::string type = v.get_string("model_type");
  if (type == "llama") check_architecture(v, "LlamaForCausalLM");
  if (type == "gemma3_text") check_architecture(v, "Gemma3ForCausalLM");
  if (type == "swax") return std::make_shared<SwaxForCausalLM>(SwaxConfig::from_json(config, source));
  if (type == "llama") return std::make_shared<LlamaForCausalLM>(LlamaConfig::from_json(config, source));
  if (type == "gemma3_text" || type == "gemma3") return std::make_shared<Gemma3ForCausalLM>(Gemma3Config::from_json(config, source));
  if (type == "armt") {
    // A merged ARMT model: the base model's config is embedded.
    SWARMT_CHECK_INPUT(v.has("base_config") && v.raw("base_config").is_object(), v.describe("base_config"),
                       " must be the base model's config object (an ARMT adapter directory has armt_config.json "
                       "instead of config.json)");
    auto base = create_model(v.raw("base_config"), source + " (base_config)");
    return std::make_shared<ArmtModel>(base, ArmtConfig::from_json(config, source));
  }
  throw_input_error(v.describe("model_type"), " '", type, "' is not supported (supported: ", supported_model_types(), ")");
}

}  // namespace swarmt::models
