// A tiny SWAX model and training config for the CLI tests of issue 20 (reliability): each run takes
// about a second on one thread.
#pragma once

#include <string>

#include "swarmt/core/json.h"
#include "test_util.h"

namespace swarmt::testing {

inline const char* tiny_swax_model() {
  return R"({"model_type": "swax", "hidden_size": 32, "layer_pattern": "MS", "num_hidden_layers": 2,
    "num_attention_heads": 2, "head_dim": 16, "sliding_window": 32, "mlstm_num_heads": 2,
    "mlstm_qk_head_dim": 8, "mlstm_v_head_dim": 16, "intermediate_size": 64})";
}

// `steps` steps of 2 rows of 64 tokens, a checkpoint after every step, logged every step.
inline Json tiny_train_config(int64_t steps) {
  return Json{{"model", Json::parse(tiny_swax_model())},
              {"sequence_length", 64},
              {"data", {{"train", {{"type", "synthetic"}, {"loss", "all"}, {"tasks", {{{"task", "essay"}}}}}}}},
              {"training",
               {{"max_steps", steps}, {"batch_size", 2}, {"log_every", 1}, {"checkpoint_every", 1},
                {"keep_checkpoints", 2}, {"seed", 3}}}};
}

// `swarmt -q train --config CONFIG --out OUT EXTRA`.
inline CommandResult run_train(const std::string& config, const std::string& out, const std::string& extra = "") {
  return run_swarmt("-q train --config " + config + " --out " + out + (extra.empty() ? "" : " " + extra));
}

}  // namespace swarmt::testing
