// Whether a training run fits in memory, checked before the first step (core/memory_budget.h).
//
// Estimate (fp32 training; deliberately on the low side, so that only requests that cannot fit are
// refused):
//   fixed      4 B per parameter (weights) + 12 B per trainable parameter (gradient, two AdamW moments)
//   per row    tokens × (64 B · hidden_size · layers   activations kept for backward (16 floats per
//                                                       token, layer and model dimension)
//                       + 8 B · vocab_size)            logits and their gradient
// A refusal says how many rows per micro-batch would fit, i.e. which grad_accum keeps the batch size.
#pragma once

#include <cstdint>
#include <string>

#include "swarmt/models/causal_lm.h"

namespace swarmt::train {

struct TrainingFootprint {
  int64_t fixed_bytes = 0;
  int64_t bytes_per_row = 0;
};

TrainingFootprint estimate_training_memory(const models::CausalLM& model, int64_t trainable_parameters,
                                           int64_t tokens_per_row);

// BadInput naming `source` when batch_size / grad_accum rows of tokens_per_row tokens do not fit.
void check_training_fits(const models::CausalLM& model, int64_t trainable_parameters, int64_t tokens_per_row,
                         int64_t batch_size, int64_t grad_accum, const std::string& source);

}  // namespace swarmt::train
