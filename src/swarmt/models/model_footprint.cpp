#include "swarmt/models/model_footprint.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/models/hf_config.h"
#include "swarmt/models/swax_config.h"
#include "swarmt/models/swax_mixers.h"

namespace swarmt::models {
namespace {

double as_double(int64_t n) { return static_cast<double>(n); }

double embedding_parameters(double vocab, double hidden, bool tied) { return vocab * hidden * (tied ? 1 : 2); }

}  // namespace

double attention_projection_parameters(double hidden, double heads, double kv_heads, double head_dim) {
  return hidden * (heads + 2 * kv_heads) * head_dim + heads * head_dim * hidden;
}

double swax_block_parameters(const SwaxConfig& c, char kind) {
  const double mlp = 3 * as_double(c.hidden_size) * as_double(c.resolved_intermediate_size());
  return swax_mixer_kind(kind).parameters(c) + mlp;
}

namespace {

double swax_parameters(const SwaxConfig& c) {
  double total = embedding_parameters(as_double(c.vocab_size), as_double(c.hidden_size), c.tie_word_embeddings);
  for (char kind : c.layer_pattern) total += swax_block_parameters(c, kind);
  return total;
}

template <typename Config>
double decoder_parameters(const Config& c) {
  const double h = as_double(c.hidden_size);
  const double layer = attention_projection_parameters(h, as_double(c.num_attention_heads),
                                                       as_double(c.num_key_value_heads), as_double(c.head_dim)) +
                       3 * h * as_double(c.intermediate_size);
  return embedding_parameters(as_double(c.vocab_size), h, c.tie_word_embeddings) +
         as_double(c.num_hidden_layers) * layer;
}

}  // namespace

double estimate_parameters(const Json& config, const std::string& source) {
  const JsonView v(config, source);
  const std::string type = v.get_string("model_type", "swax");
  if (type == "swax") return swax_parameters(SwaxConfig::from_json(config, source));
  if (type == "llama") return decoder_parameters(LlamaConfig::from_json(config, source));
  if (type == "gemma3_text" || type == "gemma3") return decoder_parameters(Gemma3Config::from_json(config, source));
  if (type == "armt" && v.has("base_config") && v.raw("base_config").is_object())
    return estimate_parameters(v.raw("base_config"), source + " (base_config)");
  return 0;
}

namespace {

// BadInput "<source>: <what> (about N parameters) needs about X of memory but only Y is available; ..."
// unless `parameters` fp32 weights fit.
void check_parameters_fit(double parameters, const std::string& source, const std::string& what) {
  const double needed = 4 * parameters;
  // More bytes than an int64 counts fit on no machine, whatever the available memory reads.
  const bool countable = needed < std::ldexp(1.0, 62);
  const int64_t available = available_memory_bytes();
  if (countable && (available < 0 || needed <= static_cast<double>(available))) return;
  std::ostringstream count;  // 123456789, or 1.25e+15 beyond a billion
  if (parameters < 1e9) count << std::fixed << std::setprecision(0);
  else count << std::setprecision(3);
  count << parameters;
  throw_input_error(source, ": ", what, " (about ", count.str(), " parameters) needs about ", format_bytes(needed),
                    " of memory but only ",
                    available < 0 ? std::string("an unknown amount") : format_bytes(available),
                    " is available; choose a smaller model");
}

}  // namespace

void check_model_fits(const Json& config, const std::string& source) {
  check_parameters_fit(estimate_parameters(config, source), source, "the model");
}

void check_swax_block_fits(const SwaxConfig& config, char kind, const std::string& source) {
  check_parameters_fit(swax_block_parameters(config, kind), source,
                       std::string("one block of kind '") + kind + "'");
}

}  // namespace swarmt::models
