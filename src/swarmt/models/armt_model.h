// ARMT: a causal LM wrapped with associative memory (specs/armt.md §1, §2, §8).
//
// The input is cut into segments of T = segment_size tokens. Each segment is processed by the base model
// as [segment ; M memory tokens] with segment-local positions 0..T+M-1. In every memory layer l:
//   before the block:  h_t += A_lᵀ φ(W_q h_t) / (z_lᵀ φ(W_q h_t) + eps)        (read; all positions*)
//   after the block:   (A_l, z_l) ← write(A_l, z_l; outputs at the M memory positions)
// A memory written at segment s is read at segment s+1 by the same layer; (A, z) is the only state
// carried between segments. The memory tokens come last and attention is causal, so real tokens never
// see them (write-only); their outputs are dropped. The last segment of an input writes nothing (no
// later segment would read it), so a partial segment needs no memory tokens.
//
// W_v starts at zero, so A stays zero and the wrapped model equals the base model until training moves
// it (tested). * With memory_tokens_read false the memory tokens skip the read (a deviation from the papers,
// docs/armt.md). With separate_write_pass the write comes from a second pass over [segment ; M memory tokens]
// in which no position reads; the first pass, over the segment alone, reads and gives the outputs. Memory math runs in fp32 (fp64 for fp64 models) whatever the model's dtype.
//
// Training: full backpropagation through all segments, or through at most `bptt_depth` segments of memory
// (the state is detached every bptt_depth segments); with checkpoint_segments each segment's activations
// are recomputed in backward, so training memory is that of one segment plus the (B, T, d) inputs.
//
// Streaming (generation, evaluation): the state is the per-layer memories plus the base model's streaming
// state of the active segment; when the active segment holds T tokens and more arrive, it is committed
// (memory tokens run through the layers, memories written) and a fresh segment starts. Memory use is
// independent of the input length.
//
// Tensor names: the base model's own names, plus "armt.memory_tokens" (M, d) and per memory layer l
// "armt.layers.<l>.{query,key,value,beta}.weight" and "armt.layers.<l>.beta.bias" (with read_gate also
// "armt.layers.<l>.gate.{weight,bias}").
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "swarmt/models/armt_config.h"
#include "swarmt/models/causal_lm.h"
#include "swarmt/ops/assoc_memory.h"

namespace swarmt::models {

// The memory projections of one wrapped layer.
class ArmtMemoryLayerImpl : public torch::nn::Module {
 public:
  ArmtMemoryLayerImpl(int64_t hidden_size, const ArmtConfig& config, at::Generator& generator);

  // Retrieved vectors for hidden states h (B, N, d) -> (B, N, d) in h's dtype (zeros while empty).
  at::Tensor read(const ops::AssocMemoryState& state, const at::Tensor& h);
  // Writes memory-token outputs m (B, M, d) into the state.
  ops::AssocMemoryState write(const ops::AssocMemoryState& state, const at::Tensor& m);
  ops::AssocMemoryState zero_state(int64_t batch, at::ScalarType dtype, at::Device device) const;

  // φ of a projection, split into heads: (B, N, d_mem) -> (B, H, N, key_dim/H), in `dtype` (key_dim:
  // 2·nu·d_mem for DPFP, d_mem for linear features).
  at::Tensor features(const at::Tensor& projected, at::ScalarType dtype) const;

  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr}, beta{nullptr};
  torch::nn::Linear gate{nullptr};  // read_gate only: (d -> heads), the read's per-head gate

 private:
  int64_t hidden_size_, heads_, nu_, key_dim_per_head_;
  bool linear_features_, normalize_, gamma_correction_, use_denom_;
  double eps_;
};
TORCH_MODULE(ArmtMemoryLayer);

// Streaming state of an ARMT model (the only entry of its ModelState::layers).
struct ArmtStreamState : nn::LayerState {
  std::vector<ops::AssocMemoryState> memories;  // one per memory layer
  ModelState segment;                            // base model's state over the active segment
  ModelState write_segment;                      // separate_write_pass: the same in the write pass (no reads)
  int64_t active = 0;                            // real tokens in the active segment
  int64_t batch = 0;
  int64_t segment_tokens = 0;                    // most tokens a segment state holds (memory tokens included)
  int64_t bytes() const override;
  // The memories keep their size; the base state grows at most to a full segment, then starts again.
  int64_t bytes_after(int64_t more_tokens) const override;
  // The memories ("memory.<i>.A", ".z", ".empty"), the active segment's base state ("segment.<layer>.*",
  // "segment.position"; with a separate write pass also "write_segment.*") and the count of its real tokens.
  void fields(nn::StateFields& f) override;
};

class ArmtModel : public CausalLM {
 public:
  ArmtModel(std::shared_ptr<CausalLM> base, ArmtConfig config);

  at::Tensor embed(const at::Tensor& tokens) override { return base_->embed(tokens); }
  at::Tensor head(const at::Tensor& hidden) override { return base_->head(hidden); }
  int64_t num_layers() const override { return base_->num_layers(); }
  nn::DecoderLayer& layer(int64_t index) override { return base_->layer(index); }
  int64_t vocab_size() const override { return base_->vocab_size(); }
  int64_t hidden_size() const override { return base_->hidden_size(); }
  std::string model_type() const override { return "armt"; }
  Json config_json() const override;  // the ARMT fields + "base_config"
  std::vector<int64_t> eos_token_ids() const override { return base_->eos_token_ids(); }
  // The base keeps the window in its own config, which config_json() nests as "base_config".
  void set_inference_window(int64_t window) override { base_->set_inference_window(window); }

  // Base tensors under their own names + the adapter tensors ("armt.*").
  std::vector<std::pair<std::string, at::Tensor>> checkpoint_tensors() const override;
  void load_checkpoint_tensors(const std::function<at::Tensor(const std::string&)>& lookup,
                               const std::string& source) override;
  // Only the adapter tensors ("armt.*").
  std::vector<std::pair<std::string, at::Tensor>> adapter_tensors() const;
  void load_adapter_tensors(const std::function<at::Tensor(const std::string&)>& lookup, const std::string& source);

  at::Tensor forward_hidden(const at::Tensor& tokens, const ForwardOptions& options = {}) override;
  ModelState new_state(int64_t batch) override;
  at::Tensor forward_stateful_hidden(const at::Tensor& tokens, ModelState& state) override;

  // The segment loop of forward_hidden, also returning the memories after the last write (for tests and
  // for measuring the state). write_last: also write the last segment (as streaming would on commit).
  struct SegmentsResult {
    at::Tensor hidden;                              // (B, N, d)
    std::vector<ops::AssocMemoryState> memories;    // one per memory layer
  };
  SegmentsResult forward_segments(const at::Tensor& tokens, const ForwardOptions& options = {},
                                  bool write_last = false);

  // One segment: x (B, n, d) embedded real tokens; appends the memory tokens and writes when `write`.
  // Returns the hidden states of the n real tokens; updates `memories` in place.
  at::Tensor run_segment(const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories, bool write,
                         const ForwardOptions& options, const at::Tensor& doc_ids);

  // One layer of the wrapped stack, the step shared by training, streaming and commits (§1): h plus what
  // layer i's memory in `read_from` retrieves for it goes through `run_layer`; when `write_to` is given, the
  // outputs at positions [write_from, end) (the memory tokens) are written into (*write_to)[slot], starting
  // from the state that was read (with memory_tokens_read false, only [0, write_from) reads; with
  // separate_write_pass nothing reads when writing). Layers without memory only run.
  using LayerRun = std::function<at::Tensor(nn::DecoderLayer&, const at::Tensor&)>;
  at::Tensor layer_with_memory(int64_t i, const at::Tensor& h, const LayerRun& run_layer,
                               const std::vector<ops::AssocMemoryState>& read_from,
                               std::vector<ops::AssocMemoryState>* write_to, int64_t write_from);

  std::vector<ops::AssocMemoryState> zero_memories(int64_t batch) const;
  const ArmtConfig& config() const { return config_; }
  const std::vector<int64_t>& memory_layers() const { return memory_layers_; }
  CausalLM& base() { return *base_; }
  std::shared_ptr<CausalLM> base_ptr() const { return base_; }
  ArmtMemoryLayer& memory_layer(size_t slot) { return memory_modules_.at(slot); }
  at::Tensor memory_tokens() const { return memory_tokens_; }
  at::ScalarType memory_dtype() const;

 private:
  void commit(ArmtStreamState& state);
  // One pass of the base over a segment (run_segment's step; a separate write makes two).
  at::Tensor segment_pass(const at::Tensor& x, std::vector<ops::AssocMemoryState>& memories, bool write,
                          const ForwardOptions& options, const at::Tensor& doc_ids);

  std::shared_ptr<CausalLM> base_;
  ArmtConfig config_;
  std::vector<int64_t> memory_layers_;
  std::vector<int64_t> slot_of_layer_;  // layer -> index into memory_modules_, -1 when not wrapped
  std::shared_ptr<torch::nn::Module> adapter_;  // "armt": memory_tokens + layers.<l>
  at::Tensor memory_tokens_;
  std::vector<ArmtMemoryLayer> memory_modules_;
};

}  // namespace swarmt::models
