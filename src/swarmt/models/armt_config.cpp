#include "swarmt/models/armt_config.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "swarmt/core/error.h"

namespace swarmt::models {

const std::vector<std::string>& armt_config_keys() {
  static const std::vector<std::string> keys = {
      "segment_size", "num_memory_tokens", "d_mem", "memory_layers", "num_heads", "dpfp_nu",
      "gamma_correction", "use_denom", "normalize_features", "eps", "bptt_depth", "checkpoint_segments",
      "memory_init_std", "memory_tokens_read", "read_gate", "separate_write_pass", "feature_map", "seed"};
  return keys;
}

ArmtConfig ArmtConfig::from_json(const Json& json, const std::string& source) {
  JsonView v(json, source);
  SWARMT_CHECK_INPUT(json.is_object(), source, ": an ARMT config must be a JSON object");
  std::set<std::string> known(armt_config_keys().begin(), armt_config_keys().end());
  for (const char* extra : {"model_type", "base_model", "base_model_type", "base_hidden_size", "base_num_layers",
                            "base_config", "torch_dtype", "swarmt_version"})
    known.insert(extra);
  v.reject_unknown_keys(known);
  const int64_t kBig = int64_t{1} << 24;
  ArmtConfig c;
  c.segment_size = v.get_int_in("segment_size", c.segment_size, 1, kBig);
  c.num_memory_tokens = v.get_int_in("num_memory_tokens", c.num_memory_tokens, 1, 4096);
  c.d_mem = v.get_int_in("d_mem", c.d_mem, 1, 1 << 16);
  c.num_heads = v.get_int_in("num_heads", c.num_heads, 1, 1024);
  c.dpfp_nu = v.get_int_in("dpfp_nu", c.dpfp_nu, 1, 16);
  c.gamma_correction = v.get_bool("gamma_correction", c.gamma_correction);
  c.use_denom = v.get_bool("use_denom", c.use_denom);
  c.normalize_features = v.get_bool("normalize_features", c.normalize_features);
  c.eps = v.get_number("eps", c.eps);
  SWARMT_CHECK_INPUT(c.eps > 0 && c.eps < 1, v.describe("eps"), " must be in (0, 1), got ", c.eps);
  c.bptt_depth = v.get_int_in("bptt_depth", c.bptt_depth, 0, kBig);
  c.checkpoint_segments = v.get_bool("checkpoint_segments", c.checkpoint_segments);
  c.memory_init_std = v.get_number("memory_init_std", c.memory_init_std);
  SWARMT_CHECK_INPUT(c.memory_init_std >= 0 && c.memory_init_std < 1e3, v.describe("memory_init_std"),
                     " must be >= 0 (0: match the embeddings), got ", c.memory_init_std);
  c.memory_tokens_read = v.get_bool("memory_tokens_read", c.memory_tokens_read);
  c.read_gate = v.get_bool("read_gate", c.read_gate);
  c.separate_write_pass = v.get_bool("separate_write_pass", c.separate_write_pass);
  SWARMT_CHECK_INPUT(!c.separate_write_pass || !c.memory_tokens_read, v.describe("memory_tokens_read"),
                     " must be false with separate_write_pass (nothing reads in the write pass)");
  c.feature_map = v.get_string("feature_map", c.feature_map);
  SWARMT_CHECK_INPUT(c.feature_map == "dpfp" || c.feature_map == "linear", v.describe("feature_map"),
                     " must be \"dpfp\" or \"linear\", got \"", c.feature_map, "\"");
  if (c.linear_features()) {
    SWARMT_CHECK_INPUT(!c.use_denom, v.describe("use_denom"),
                       " must be false with feature_map \"linear\" (the normaliser zᵀφ(q) of signed features can "
                       "vanish)");
    SWARMT_CHECK_INPUT(c.normalize_features, v.describe("normalize_features"),
                       " must be true with feature_map \"linear\" (the delta rule needs unit keys)");
  }
  c.seed = static_cast<uint64_t>(v.get_int_in("seed", 0, 0, INT64_MAX));
  SWARMT_CHECK_INPUT(c.d_mem % c.num_heads == 0, v.describe("d_mem"), " (", c.d_mem,
                     ") must be divisible by num_heads (", c.num_heads, ")");
  if (v.has("memory_layers")) {
    const Json& layers = v.raw("memory_layers");
    SWARMT_CHECK_INPUT(layers.is_string() || layers.is_array(), v.describe("memory_layers"),
                       " must be \"all\", \"alternate\", \"middle_upper:<fraction>\" or a list of layer indices");
    if (layers.is_array()) {
      auto list = v.get_int_list("memory_layers");
      SWARMT_CHECK_INPUT(!list.empty(), v.describe("memory_layers"), " must not be an empty list");
      std::set<int64_t> seen;
      for (int64_t i : list) {
        SWARMT_CHECK_INPUT(i >= 0, v.describe("memory_layers"), " holds a negative index (", i, ")");
        SWARMT_CHECK_INPUT(seen.insert(i).second, v.describe("memory_layers"), " lists layer ", i, " twice");
      }
    }
    c.memory_layers = layers;
    c.resolve_memory_layers(1 << 20, v.describe("memory_layers"));  // validates presets early
  }
  return c;
}

Json ArmtConfig::to_json() const {
  return Json{{"segment_size", segment_size},
              {"num_memory_tokens", num_memory_tokens},
              {"d_mem", d_mem},
              {"memory_layers", memory_layers},
              {"num_heads", num_heads},
              {"dpfp_nu", dpfp_nu},
              {"gamma_correction", gamma_correction},
              {"use_denom", use_denom},
              {"normalize_features", normalize_features},
              {"eps", eps},
              {"bptt_depth", bptt_depth},
              {"checkpoint_segments", checkpoint_segments},
              {"memory_init_std", memory_init_std},
              {"memory_tokens_read", memory_tokens_read},
              {"read_gate", read_gate},
              {"separate_write_pass", separate_write_pass},
              {"feature_map", feature_map},
              {"seed", seed}};
}

std::vector<int64_t> ArmtConfig::resolve_memory_layers(int64_t num_layers, const std::string& source) const {
  std::vector<int64_t> out;
  if (memory_layers.is_array()) {
    for (const auto& item : memory_layers) {
      const int64_t i = item.get<int64_t>();
      SWARMT_CHECK_INPUT(i >= 0 && i < num_layers, source, ": layer ", i, " does not exist (the base model has ",
                         num_layers, " layers, 0..", num_layers - 1, ")");
      out.push_back(i);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  const std::string preset = memory_layers.get<std::string>();
  if (preset == "all") {
    for (int64_t i = 0; i < num_layers; ++i) out.push_back(i);
  } else if (preset == "alternate") {
    for (int64_t i = 0; i < num_layers; i += 2) out.push_back(i);
  } else if (preset.rfind("middle_upper:", 0) == 0) {
    const std::string number = preset.substr(13);
    char* end = nullptr;
    const double fraction = std::strtod(number.c_str(), &end);
    SWARMT_CHECK_INPUT(!number.empty() && end && *end == '\0' && fraction > 0 && fraction <= 1, source, ": \"",
                       preset, "\": the fraction must be a number in (0, 1]");
    const int64_t count = std::clamp<int64_t>(std::llround(fraction * num_layers), 1, num_layers);
    // Centred in the upper half [L/2, L), widened downwards when it does not fit.
    const int64_t upper_begin = num_layers / 2, upper_size = num_layers - upper_begin;
    const int64_t begin = count <= upper_size ? upper_begin + (upper_size - count) / 2 : num_layers - count;
    for (int64_t i = begin; i < begin + count; ++i) out.push_back(i);
  } else {
    throw_input_error(source, ": unknown preset \"", preset,
                      "\" (use \"all\", \"alternate\", \"middle_upper:<fraction>\" or a list of layer indices)");
  }
  return out;
}

}  // namespace swarmt::models
