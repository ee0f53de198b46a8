// A token mixer: the part of a decoder block that moves information between positions (attention with or
// without a window, mLSTM, Gated DeltaNet, ...). Every mixer has the same signature, so a block is written
// once (nn/residual_block.h) and a hybrid model is a list of mixers, not new block code.
//
//   forward(x, ctx)            x: (B, N, d) -> (B, N, d), a whole sequence (training, evaluation)
//   forward_stateful(x, state) x: (B, n, d) -> (B, n, d), continuing from `state` and updating it; any n
//   new_state(B, dtype, dev)   the state before the first token
//
// Token by token, forward_stateful gives what forward gives for the whole sequence.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "swarmt/nn/layer_context.h"

namespace swarmt::nn {

class Mixer : public torch::nn::Module {
 public:
  ~Mixer() override = default;

  virtual at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) = 0;
  virtual at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) = 0;
  virtual std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const = 0;

  // The decode step on raw buffers: one token of one sequence in the model's dtype, without tensors (a
  // decode step is bound by reading the weights; per-op dispatch and allocation cost ~65 µs per block and
  // token, docs/performance.md). xn: the
  // block's normalised input (hidden values); out: the mixer's output (hidden values), equal to what
  // forward_stateful returns. False, with nothing changed, where this mixer has no such path for its
  // weights and this state; the block then calls forward_stateful.
  virtual bool decode_token(const float* /*xn*/, LayerState& /*state*/, float* /*out*/) { return false; }
  virtual bool decode_token(const at::BFloat16* /*xn*/, LayerState& /*state*/, at::BFloat16* /*out*/) { return false; }

  // The inference window of a sliding-window mixer; 0 for every other mixer, whose set_window does nothing.
  virtual int64_t window() const { return 0; }
  virtual void set_window(int64_t /*window*/) {}
  // Recurrent mixers carry a state that summarises the whole past, not a window of it.
  virtual bool is_recurrent() const { return false; }

  // The SWAX initialisation of this mixer (specs/swax.md §2.5 / §3.4); num_blocks scales the output
  // projection (wang_init) of the mixers that use it.
  virtual void reset_parameters(int64_t num_blocks) = 0;

  // ---- what a model summary needs (models/swax_summary.h), from the mixer's own shapes
  // Values held by the streaming state of one sequence after `context` tokens.
  virtual int64_t state_values(int64_t context) const = 0;
  // Forward FLOPs per token beyond the projections (which count 2 per weight), averaged over a sequence of
  // `context` tokens: the attention scores, or the recurrent cell.
  virtual double mixing_flops_per_token(int64_t context) const = 0;
};

}  // namespace swarmt::nn
