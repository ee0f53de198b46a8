// From config.json to a model: the one place that maps model_type to an architecture.
#pragma once

#include <memory>
#include <string>

#include "swarmt/core/json.h"
#include "swarmt/models/causal_lm.h"

namespace swarmt::models {

// Builds an (initialised, untrained) model of the architecture config.json describes. `source` names the
// file in errors ("<dir>/config.json: field 'model_type' ...").
std::shared_ptr<CausalLM> create_model(const Json& config, const std::string& source);

// The model types create_model accepts, for error messages and `swarmt info`.
std::string supported_model_types();

}  // namespace swarmt::models
