// The causal language-model interface every architecture implements (SWAX hybrids, Llama, Gemma-3),
// and that ARMT wraps, evaluation scores and generation streams from.
//
//   embed(tokens) -> layer_0 -> ... -> layer_{L-1} -> head(hidden) = logits
//
// Architectures provide the embedding, the decoder layers and the head; this class provides the
// full-sequence forward (training / evaluation), and the streaming forward over a ModelState whose
// size does not grow with the context for SWAX models (KV rings, recurrent states).
//
// Module tree (and so tensor names) follows Hugging Face: "model.embed_tokens", "model.layers.<i>.*",
// "model.norm", "lm_head".
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swarmt/core/json.h"
#include "swarmt/nn/decoder_layer.h"

namespace swarmt::models {

// Streaming state of a whole model: one state per layer and the number of tokens consumed.
struct ModelState {
  std::vector<std::unique_ptr<nn::LayerState>> layers;
  int64_t position = 0;
  int64_t bytes() const;
  int64_t bytes_after(int64_t more_tokens) const;  // see nn::LayerState::bytes_after
  // "position" and each layer's fields under "layers.<i>" (see nn::LayerState::fields).
  void fields(nn::StateFields& f);
};

struct ForwardOptions {
  std::optional<int64_t> window;  // window of the sliding layers for this step (stochastic window training);
                                  // nullopt: their own
  at::Tensor doc_ids;             // undefined or int64 (B, N): document index of each token (packed data)
  int64_t position_offset = 0;    // absolute position of the first token
};

class CausalLM : public torch::nn::Module {
 public:
  ~CausalLM() override = default;

  // ---- architecture hooks
  virtual at::Tensor embed(const at::Tensor& tokens) = 0;   // int64 (B, N) -> (B, N, d)
  virtual at::Tensor head(const at::Tensor& hidden) = 0;    // (B, N, d) -> logits (B, N, V), fp32
  virtual int64_t num_layers() const = 0;
  virtual nn::DecoderLayer& layer(int64_t index) = 0;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual std::string model_type() const = 0;
  virtual Json config_json() const = 0;                     // what config.json holds
  // Token ids that end generation (from the config); may be empty.
  virtual std::vector<int64_t> eos_token_ids() const { return {}; }
  // Tensors as stored on disk, by their checkpoint names (default: the parameters). Architectures with
  // load-time weight fix-ups (Gemma's 1 + w norms) undo them here.
  virtual std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() const;
  // Loads checkpoint tensors by name (inverse of checkpoint_tensors). `lookup` returns the stored
  // tensor or an undefined tensor when absent; missing required tensors and shape mismatches throw
  // BadInput naming the tensor and `source`.
  virtual void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                                       const std::string& source);

  // ---- generic behaviour
  // The behaviours below are virtual so that wrappers (ARMT) can process inputs their own way (segment
  // by segment) while everything that consumes a CausalLM (training, evaluation, generation) stays the
  // same.
  // Hidden states after the last layer (before the head).
  virtual at::Tensor forward_hidden(const at::Tensor& tokens, const ForwardOptions& options = {});
  // Logits (B, N, V).
  virtual at::Tensor forward(const at::Tensor& tokens, const ForwardOptions& options = {});

  // Streaming: a fresh state for `batch` sequences, then any number of chunks of any length.
  virtual ModelState new_state(int64_t batch);
  virtual at::Tensor forward_stateful_hidden(const at::Tensor& tokens, ModelState& state);
  at::Tensor forward_stateful(const at::Tensor& tokens, ModelState& state);  // logits (B, n, V)

  // Inference window of the sliding-window layers (0 if the model has none). Architectures whose config
  // holds the window keep the new one there too, so that config_json describes the model as it runs.
  int64_t inference_window();
  virtual void set_inference_window(int64_t window);

  at::ScalarType dtype() const;
  at::Device device() const;
  int64_t num_parameters() const;

 protected:
  // Per-tensor fix-ups between a checkpoint's values and the parameters (Gemma's 1 + w norms), used by
  // checkpoint_tensors and load_checkpoint_tensors. Defaults: the tensor as it is; copied into the
  // parameter (casting to its dtype).
  virtual at::Tensor to_checkpoint(const std::string& name, const at::Tensor& parameter) const;
  virtual void load_tensor(const std::string& name, const at::Tensor& stored, at::Tensor& parameter);
};

// Positions (N) int64 starting at `offset`.
at::Tensor make_positions(int64_t n, int64_t offset);

}  // namespace swarmt::models
