#include "swarmt/models/registry.h"

#include "swarmt/core/error.h"
#include "swarmt/models/gemma3.h"
#include "swarmt/models/llama.h"
#include "swarmt/models/swax_model.h"

namespace swarmt::models {

std::string supported_model_types() { return "swax, llama, gemma3_text (Gemma3ForCausalLM)"; }

std::shared_ptr<CausalLM> create_model(const Json& config, const std::string& source) {
  JsonView v(config, source);
  const std::string type = v.get_string("model_type");
  if (type == "swax") return std::make_shared<SwaxForCausalLM>(SwaxConfig::from_json(config, source));
  if (type == "llama") return std::make_shared<LlamaForCausalLM>(LlamaConfig::from_json(config, source));
  if (type == "gemma3_text" || type == "gemma3") return std::make_shared<Gemma3ForCausalLM>(Gemma3Config::from_json(config, source));
  throw_input_error(v.describe("model_type"), " '", type, "' is not supported (supported: ", supported_model_types(), ")");
}

}  // namespace swarmt::models
