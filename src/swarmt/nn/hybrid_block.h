// The SWAX block (specs/swax.md §1.4): the pre-norm residual block (nn/residual_block.h) with a SwiGLU MLP
// and the mixer a layer-pattern letter names (models/swax_mixers.h: S sliding-window attention, A full
// attention, M mLSTM, G Gated DeltaNet, and any kind registered at run time).
// Tensor names: input_layernorm, <mixer name>.*, post_attention_layernorm, mlp.*
#pragma once

#include "swarmt/nn/residual_block.h"

namespace swarmt::nn {

class HybridBlock : public ResidualBlock {
 public:
  // options: the block's shape; its activation is SwiGLU and its layout pre-norm whatever they say.
  HybridBlock(char kind, std::shared_ptr<Mixer> mixer, ResidualBlockOptions options);

  char kind() const { return kind_; }
  // Initialisation per specs/swax.md §2.5 / §3.4: the mixer's own, small_init for the MLP's gate and up
  // projections (not the zero init HF's "gate" substring test would give them), wang_init for its down
  // projection, norms at 1. num_blocks scales the output projections.
  void reset_parameters(int64_t num_blocks);

 private:
  char kind_;
};

}  // namespace swarmt::nn
