// Activation checkpointing of one ARMT segment: the forward runs without keeping activations; backward
// runs the segment again with gradients on and backpropagates through that recomputation. Training
// memory then holds, per segment, only its embedded input and the memory states, instead of every
// layer's activations (specs/armt.md §1.8: the 2025 code enables gradient checkpointing).
#pragma once

#include <vector>

#include "swarmt/models/causal_lm.h"
#include "swarmt/ops/assoc_memory.h"

namespace swarmt::models {

class ArmtModel;

// Same result as model.run_segment(x, memories, write, options, doc_ids), memories updated in place.
at::Tensor checkpointed_segment(ArmtModel& model, const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories,
                                bool write, const ForwardOptions& options, const at::Tensor& doc_ids);

}  // namespace swarmt::models
