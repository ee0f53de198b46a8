// What a decoder layer needs to know about the batch besides its input activations, and the per-layer
// streaming state it carries between calls.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace swarmt::nn {

// Per-call information shared by all layers of a forward pass.
struct LayerContext {
  at::Tensor positions;   // int64 (N): absolute positions of the tokens of this call (RoPE)
  // Sliding window of this step's SWA layers (stochastic window training); nullopt: each layer's own.
  // Full-attention layers ignore it.
  std::optional<int64_t> window;
  at::Tensor doc_ids;     // undefined or int64 (B, N): document index of each token (packing)
  at::Tensor resets;      // undefined or bool (B, N): true at the first token of a document (not at t = 0)
};

// Builds resets from document ids: resets[b, t] = t > 0 && doc_ids[b, t] != doc_ids[b, t - 1].
at::Tensor resets_from_doc_ids(const at::Tensor& doc_ids);

// Streaming state of one layer (KV ring, mLSTM C/n/m, GDN S + conv tails). Its size must not depend on
// how many tokens were processed, except for full-attention layers.
struct LayerState {
  virtual ~LayerState() = default;
  virtual int64_t bytes() const = 0;
  // The most bytes it will hold while taking `more_tokens` more tokens, to check a context against the
  // memory before running it. Fixed-size states (recurrent states, KV rings) hold bytes() forever.
  virtual int64_t bytes_after(int64_t /*more_tokens*/) const { return bytes(); }
};

}  // namespace swarmt::nn
