// What a decoder layer needs to know about the batch besides its input activations, and the per-layer
// streaming state it carries between calls.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

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
//
// fields() names every tensor and integer the state holds, by reference, so that one function serves
// saving a state (the visitor reads them) and loading one (the visitor assigns them): a conversation's
// state can be written to a file and resumed later (models/model_state_file.h).
class StateFields;
struct LayerState {
  virtual ~LayerState() = default;
  virtual int64_t bytes() const = 0;
  virtual void fields(StateFields& fields) = 0;
  // The most bytes it will hold while taking `more_tokens` more tokens, to check a context against the
  // memory before running it. Fixed-size states (recurrent states, KV rings) hold bytes() forever.
  virtual int64_t bytes_after(int64_t /*more_tokens*/) const { return bytes(); }
};

// The visitor of LayerState::fields. Names are local to the state; nested states are visited under a
// prefix (scoped()). `growable_dim`: the one dimension in which a loaded tensor may differ from the fresh
// state's (the slots of a KV cache that grows with the context); -1: the shape must be the same.
class StateFields {
 public:
  virtual ~StateFields() = default;
  virtual void tensor(const std::string& name, at::Tensor& value, int64_t growable_dim = -1) = 0;
  virtual void integer(const std::string& name, int64_t& value) = 0;
  // True while loading: states check the consistency of what they were given after their fields.
  virtual bool loading() const = 0;
  // Where errors point ("<file>: layer 3"), for the checks states make while loading.
  virtual std::string where() const = 0;
  // Visits `nested` (or runs `visit`) with every name prefixed by `prefix` + ".".
  void scoped(const std::string& prefix, LayerState& nested);
  void scoped(const std::string& prefix, const std::function<void(StateFields&)>& visit);
};

}  // namespace swarmt::nn
