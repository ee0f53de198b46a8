// A decoder layer of any architecture. CausalLM runs a stack of them; ARMT wraps them one by one. Every
// architecture here uses nn::ResidualBlock (nn/residual_block.h), around an attention, mLSTM, Gated
// DeltaNet or other nn::Mixer.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "swarmt/nn/layer_context.h"

namespace swarmt::nn {

class DecoderLayer : public torch::nn::Module {
 public:
  // Full-sequence forward (training, evaluation, ARMT segments). x: (B, N, d) -> (B, N, d).
  virtual at::Tensor forward(const at::Tensor& x, const LayerContext& ctx) = 0;
  // Streaming forward over a chunk of any length, continuing from and updating `state`.
  virtual at::Tensor forward_stateful(const at::Tensor& x, LayerState& state) = 0;
  virtual std::unique_ptr<LayerState> new_state(int64_t batch, at::ScalarType dtype, at::Device device) const = 0;
  // Sliding-window layers report their inference window (0 otherwise) and accept a new one.
  virtual int64_t window() const { return 0; }
  virtual void set_window(int64_t) {}
  // Recurrent layers (mLSTM, Gated DeltaNet) carry a state that summarises the whole past, not a window
  // of it; evaluations can reset it to measure what the rest of the model remembers without it.
  virtual bool is_recurrent() const { return false; }
};

}  // namespace swarmt::nn
