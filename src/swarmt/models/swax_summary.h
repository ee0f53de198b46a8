// What a SWAX configuration costs, without building the whole model: parameters by component, weight and
// training-state memory, inference state per sequence, and forward FLOPs per token at a context length.
//
// Parameters are counted on real modules: one block of each kind in the pattern is built (and dropped)
// and its parameters counted, so the numbers are those of the code, not of a formula that could drift
// from it. That keeps the 7B layout (32 blocks of d 4096, ~28 GB in fp32) describable on a laptop: the
// largest thing held at once is one block.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "swarmt/core/json.h"
#include "swarmt/models/swax_config.h"

namespace swarmt::models {

struct SwaxSummary {
  struct Kind {
    int64_t count = 0;                // blocks of this kind in the pattern
    int64_t parameters_per_block = 0;
    int64_t state_bytes_per_block = 0;  // inference state per sequence (fp32), at the context length
    double flops_per_token = 0;       // forward, per block, averaged over a sequence of the context length
  };
  std::map<char, Kind> kinds;
  int64_t embedding_parameters = 0;
  int64_t head_parameters = 0;        // lm_head (0 when tied) + final norm
  int64_t total_parameters = 0;
  int64_t context = 0;
  double forward_flops_per_token = 0;  // the whole model, including the head
  int64_t state_bytes = 0;             // inference state per sequence at `context` (fp32)

  Json to_json() const;
};

// `context` sets the state size of full-attention layers and the averaging length of FLOPs.
SwaxSummary summarize_swax(const SwaxConfig& config, int64_t context);

}  // namespace swarmt::models
