// Fuzzes the ARMT adapter config (armt_config.json, or the "armt" object of a training config):
// ArmtConfig::from_json on the fuzzed JSON. For accepted configs it checks what the ARMT model relies
// on: positive sizes, d_mem divisible by the heads, memory layers that resolve (for bases of 1, 2, 7 and
// 26 layers) to sorted, distinct, in-range indices or are refused with BadInput, and that a config
// swarmt saves loads again unchanged.
#include <string>

#include "fuzz_harness.h"
#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/models/armt_config.h"

namespace swarmt::fuzz {

void fuzz_one(const uint8_t* data, size_t size) {
  const Json json = parse_json(std::string(reinterpret_cast<const char*>(data), size), kFuzzSource);
  const models::ArmtConfig c = models::ArmtConfig::from_json(json, kFuzzSource);
  FUZZ_REQUIRE(c.segment_size >= 1 && c.num_memory_tokens >= 1 && c.d_mem >= 1 && c.num_heads >= 1, "sizes are positive");
  FUZZ_REQUIRE(c.d_mem % c.num_heads == 0, "heads divide d_mem");
  FUZZ_REQUIRE(c.key_dim() == 2 * c.dpfp_nu * c.d_mem && c.key_dim() > 0, "key features are 2·nu·d_mem wide");
  FUZZ_REQUIRE(c.eps > 0 && c.eps < 1 && c.bptt_depth >= 0 && c.memory_init_std >= 0, "ranges hold");
  for (int64_t layers : {1, 2, 7, 26}) {
    try {
      const auto chosen = c.resolve_memory_layers(layers, kFuzzSource);
      FUZZ_REQUIRE(!chosen.empty(), "at least one memory layer");
      for (size_t i = 0; i < chosen.size(); ++i) {
        FUZZ_REQUIRE(chosen[i] >= 0 && chosen[i] < layers, "layer index in range");
        FUZZ_REQUIRE(i == 0 || chosen[i] > chosen[i - 1], "sorted and distinct");
      }
    } catch (const Error& e) {
      // Only explicit lists may name layers a small base lacks; presets always resolve.
      FUZZ_REQUIRE(e.kind() == ErrorKind::BadInput && c.memory_layers.is_array(),
                   std::string("a preset failed to resolve: ") + e.what());
    }
  }
  const Json saved = c.to_json();
  try {
    const models::ArmtConfig reloaded = models::ArmtConfig::from_json(saved, "saved armt_config.json");
    FUZZ_REQUIRE(reloaded.to_json() == saved, "to_json -> from_json -> to_json is the identity: " + saved.dump());
  } catch (const Error& e) {
    report_finding(__FILE__, __LINE__, std::string("a config swarmt saves does not load again: ") + e.what() +
                                           "\nsaved: " + saved.dump());
  }
}

void write_seeds(const SeedWriter& seeds) {
  seeds.add("default.json", models::ArmtConfig{}.to_json().dump(2));
  seeds.add("adapter.json", R"({"model_type": "armt", "base_model": "../base", "base_model_type": "llama",
    "base_hidden_size": 960, "base_num_layers": 32, "segment_size": 1024, "num_memory_tokens": 32, "d_mem": 64,
    "memory_layers": "middle_upper:0.2", "num_heads": 1, "dpfp_nu": 3, "gamma_correction": true,
    "normalize_features": true, "eps": 1e-05, "bptt_depth": 0, "checkpoint_segments": false,
    "memory_init_std": 0.0, "seed": 0})");
  seeds.add("alternate.json", R"({"segment_size": 256, "num_memory_tokens": 8, "d_mem": 32, "memory_layers": "alternate",
    "num_heads": 4, "bptt_depth": 2, "checkpoint_segments": true})");
  seeds.add("list.json", R"({"segment_size": 64, "memory_layers": [3, 1, 5], "gamma_correction": false,
    "normalize_features": false, "memory_init_std": 0.02, "seed": 7})");
}

}  // namespace swarmt::fuzz
