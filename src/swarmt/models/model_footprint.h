// How large a model a config.json describes, known before anything is allocated.
//
// create_model allocates every weight at once (and summarize_swax builds a block to count one), so a
// config with an absurd dimension used to end in an OOM kill, or in "out of memory" naming nothing. The
// estimate here comes from the shapes alone, in floating point (a hostile config can describe more
// parameters than an int64 counts), and is a lower bound: embeddings, attention and recurrent
// projections, MLPs; norms, gates and biases are left out, so only configs that cannot fit are refused.
#pragma once

#include <string>

#include "swarmt/core/json.h"
#include "swarmt/models/swax_config.h"

namespace swarmt::models {

// Parameters of the model `config` describes (swax when model_type is absent; armt: its base). Validates
// the config (BadInput naming `source` and the field); 0 for model types create_model does not know.
double estimate_parameters(const Json& config, const std::string& source);

// BadInput "<source>: the model (about N parameters) needs about X of memory but only Y is available;
// choose a smaller model" when its fp32 weights (4 B per parameter) cannot fit. Honors
// SWARMT_MEMORY_LIMIT like every memory check (core/memory_budget.h).
void check_model_fits(const Json& config, const std::string& source);

// Parameters of one SWAX block of `kind` (its mixer's count from the mixer table + the MLP), the same
// lower bound.
double swax_block_parameters(const SwaxConfig& config, char kind);

// The q, k, v and o projections of attention with `heads` query and `kv_heads` key/value heads.
double attention_projection_parameters(double hidden, double heads, double kv_heads, double head_dim);

// The same check for one block, which `model describe` builds to count it.
void check_swax_block_fits(const SwaxConfig& config, char kind, const std::string& source);

}  // namespace swarmt::models
